"""Pod request arithmetic, cases from k8s.io/component-helpers resource/helpers_test.go
(TestPodResourceRequests) and kube-scheduler's PodInfo.CalculateResource (non-zero requests)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from schedsim.api.core import Pod
from schedsim.api.core.resources import (
    is_extended_resource_name,
    is_scalar_resource_name,
    pod_requests,
)
from schedsim.snapshot import PodInfo


def _c(name: str, cpu: str | None = None, sidecar: bool = False, **res: str) -> dict[str, Any]:
    requests = dict(res)
    if cpu is not None:
        requests["cpu"] = cpu
    out: dict[str, Any] = {"name": name, "resources": {"requests": requests}}
    if sidecar:
        out["restartPolicy"] = "Always"
    return out


def _pod(
    containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None, **spec: Any
) -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {"name": "p"},
            "spec": {"containers": containers, "initContainers": init or [], **spec},
        }
    )


@pytest.mark.parametrize(
    ("containers", "init", "cpu"),
    [
        pytest.param([_c("c1", "2"), _c("c2", "3")], [_c("i1", "2")], 5, id="larger containers"),
        pytest.param([_c("c1", "1")], [_c("i1", "4")], 4, id="larger init container"),
        pytest.param([_c("c1", "1")], [_c("ri1", "1", True)], 2, id="restartable init container"),
        pytest.param(
            [_c("c1", "1")],
            [_c("i1", "5"), _c("ri1", "1", True), _c("ri2", "2", True), _c("ri3", "3", True)],
            7,
            id="multiple restartable init containers",
        ),
        pytest.param(
            [_c("c1", "1")],
            [
                _c("i1", "5"),
                _c("ri1", "1", True),
                _c("ri2", "2", True),
                _c("i2", "5"),
                _c("ri3", "3", True),
            ],
            8,
            id="multiple restartable and regular init containers",
        ),
        pytest.param(
            [_c("c1", "1")],
            [_c("ri1", "1", True), _c("i1", "1"), _c("i2", "1")],
            2,
            id="restartable init container with multiple regular init containers",
        ),
    ],
)
def test_pod_requests_component_helpers_cases(
    containers: list[dict[str, Any]], init: list[dict[str, Any]], cpu: int
) -> None:
    """helpers_test.go TestPodResourceRequests: max(containers + sidecars, each init
    container plus the sidecars started before it)."""
    assert pod_requests(_pod(containers, init))["cpu"] == cpu


def test_overhead_is_added_and_can_be_excluded() -> None:
    """The "pod overhead excluded" / included cases (helpers_test.go)."""
    pod = _pod([_c("c1", "1", memory="1Gi")], overhead={"cpu": "500m", "memory": "100Mi"})
    assert pod_requests(pod) == {"cpu": Fraction(3, 2), "memory": Fraction(1124 * 2**20)}
    assert pod_requests(pod, exclude_overhead=True)["cpu"] == 1


def test_pod_level_requests_replace_the_container_aggregate_for_cpu_memory_only() -> None:
    """PodLevelResources: supported pod-level requests win; other resources keep the
    container sum; the gate off ignores them."""
    pod = _pod(
        [_c("c1", "1", memory="1Gi", **{"example.com/gpu": "1"})],
        resources={"requests": {"cpu": "3"}},
    )
    assert pod_requests(pod) == {
        "cpu": 3,
        "memory": 2**30,
        "example.com/gpu": 1,
    }
    assert pod_requests(pod, pod_level_resources=False)["cpu"] == 1


def test_non_zero_requests_default_missing_cpu_and_memory() -> None:
    """CalculateResource: containers without cpu/memory requests count 100m / 200Mi in the
    non-zero sums (schedutil.DefaultMilliCPURequest / DefaultMemoryRequest)."""
    res = PodInfo(_pod([{"name": "a"}, _c("b", "250m")])).calculate_resource()
    assert res.resource.milli_cpu == 250 and res.resource.memory == 0
    assert res.non0_cpu == 350 and res.non0_mem == 2 * 200 * 2**20


def test_non_zero_requests_with_pod_level_cpu_keep_it() -> None:
    """With a pod-level cpu request set, only the missing memory gets the default."""
    pod = _pod([{"name": "a"}], resources={"requests": {"cpu": "2"}})
    res = PodInfo(pod).calculate_resource()
    assert res.non0_cpu == 2000 and res.non0_mem == 200 * 2**20


@pytest.mark.parametrize(
    ("name", "extended", "scalar"),
    [
        ("cpu", False, False),
        ("memory", False, False),
        ("example.com/gpu", True, True),
        ("nvidia.com/gpu", True, True),
        ("kubernetes.io/something", False, True),
        ("hugepages-2Mi", False, True),
        ("attachable-volumes-aws-ebs", False, True),
        ("requests.example.com/x", False, False),
    ],
)
def test_resource_name_classes(name: str, extended: bool, scalar: bool) -> None:
    """v1helper.IsExtendedResourceName / IsScalarResourceName."""
    assert is_extended_resource_name(name) is extended
    assert is_scalar_resource_name(name) is scalar


def test_derived_values_are_computed_once_per_pod_object() -> None:
    """A simulation schedules the same (immutable) pod many times: its request vector is
    computed once (`Pod.memo`), shared by every PodInfo of it, not part of equality, and a
    copy made with attrs.evolve (e.g. a changed container) computes its own."""
    import attrs

    from schedsim.api.core import Container

    pod = Pod(name="p", containers=(Container(name="c", requests={"cpu": Fraction(1)}),))
    calls = []
    assert pod.memo("k", lambda: calls.append(1) or 42) == 42
    assert pod.memo("k", lambda: calls.append(1) or 43) == 42
    assert calls == [1]
    first, second = PodInfo(pod), PodInfo(pod)
    assert first.calculate_resource() is second.calculate_resource()
    assert first.calculate_resource().resource.milli_cpu == 1000
    bigger = attrs.evolve(pod, containers=(Container(name="c", requests={"cpu": Fraction(2)}),))
    assert bigger == bigger and bigger != pod
    assert PodInfo(bigger).calculate_resource().resource.milli_cpu == 2000
    assert Pod(name="p", containers=pod.containers) == pod  # the memo is not compared
