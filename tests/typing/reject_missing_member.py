"""Must be REJECTED by mypy: a PodInfo-like class without `calculate_resource` is not a
framework.PodInfo (tests/unit/test_typing.py asserts the error)."""

from __future__ import annotations

from collections.abc import Sequence

from schedsim import framework
from schedsim.api.core import Pod
from schedsim.framework import AffinityTerm, WeightedAffinityTerm


class IncompletePodInfo:
    @property
    def pod(self) -> Pod:
        return Pod(name="p")

    @property
    def required_affinity_terms(self) -> Sequence[AffinityTerm]:
        return ()

    @property
    def required_anti_affinity_terms(self) -> Sequence[AffinityTerm]:
        return ()

    @property
    def preferred_affinity_terms(self) -> Sequence[WeightedAffinityTerm]:
        return ()

    @property
    def preferred_anti_affinity_terms(self) -> Sequence[WeightedAffinityTerm]:
        return ()


_: framework.PodInfo = IncompletePodInfo()
