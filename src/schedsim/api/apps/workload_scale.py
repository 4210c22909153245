"""Workload scaling: the what-if "with this much more (or less) of every workload".

`scale_workloads` multiplies the size each workload controller asks for before its pods are
made (`schedsim.api.apps.controllers.expand_workloads`), as scaling every controller by hand
(``kubectl scale``) would: Deployments', ReplicaSets', ReplicationControllers' and
StatefulSets' ``spec.replicas``, Jobs' ``spec.parallelism`` and ``spec.completions`` (a work
queue's unset completions stay unset). The new size is ``factor x size`` rounded half up
(3 x 0.5 -> 2, 3 x 1.5 -> 5). DaemonSets (one pod per node) and pods the input lists
itself are not scaled, and pods a controller already owns in the input are kept: the
controller only makes the pods it still lacks.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import attrs

from schedsim.api.loading.decode import yaml_value

if TYPE_CHECKING:
    from schedsim.api.loading.loader import Manifests

__all__ = ["check_factor", "scale_workloads", "scaled"]


def check_factor(factor: float) -> None:
    """Raise ValueError unless ``factor`` is a finite number >= 0 (not a bool)."""
    if isinstance(factor, bool) or not isinstance(factor, int | float):
        raise ValueError(f"expected a number >= 0, got {yaml_value(factor)}")
    if not factor >= 0 or math.isinf(factor):
        raise ValueError(f"expected a finite number >= 0, got {yaml_value(factor)}")


def scaled(size: int, factor: float) -> int:
    """``size x factor`` rounded half up (sizes are small ints: no float drift matters)."""
    return math.floor(size * factor + 0.5)


def scale_workloads(m: Manifests, factor: float) -> None:
    """Scale every workload controller of ``m`` by ``factor`` in place (see the module
    docstring); call it before the controllers are expanded.

    Raises:
        ValueError: ``factor`` is not a finite number >= 0.
    """
    check_factor(factor)
    if factor == 1:
        return
    for name in ("deployments", "replica_sets", "replication_controllers", "stateful_sets"):
        objs = getattr(m, name)
        objs[:] = [attrs.evolve(o, replicas=scaled(o.replicas, factor)) for o in objs]
    m.jobs[:] = [
        attrs.evolve(
            j,
            parallelism=scaled(j.parallelism, factor),
            completions=None if j.completions is None else scaled(j.completions, factor),
        )
        for j in m.jobs
    ]
