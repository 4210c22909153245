"""Values derived from a pod's shared parts are computed once per distinct parts
(`schedsim.api.parts_memo`), never changing a value.

Not upstream behaviour: a speed measure of this project (issue 12, GCDA). The values checked
are kube-scheduler's: ``PodInfo.CalculateResource`` of a pod with a 100m container and 1Gi
overhead is 100m + the overhead (component-helpers ``TestPodRequests`` "pod overhead"), and
``computePodResourceRequest`` is the same vector.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from schedsim.api import parts_memo as pm
from schedsim.api.core import Pod
from schedsim.api.core.resources import pod_requests, request_parts
from schedsim.api.parts_memo import parts_memo
from schedsim.snapshot.infos import PodInfo

GI = 1024**3


def _pod(name: str, cpu: str = "100m", **spec: Any) -> Pod:
    return Pod.from_manifest(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {
                "containers": [
                    {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}
                ],
                **spec,
            },
        }
    )


def test_pods_sharing_parts_compute_once() -> None:
    a, b = _pod("a", overhead={"memory": "1Gi"}), _pod("b", overhead={"memory": "1Gi"})
    calls: list[str] = []

    def compute(p: Pod) -> dict[str, Any]:
        calls.append(p.name)
        return pod_requests(p)

    key = ("test_parts_memo", 1)
    ra = parts_memo(a, key, request_parts(a), lambda: compute(a))
    rb = parts_memo(b, key, request_parts(b), lambda: compute(b))
    assert calls == ["a"] and ra is rb
    assert milli(ra["cpu"]) == 100 and ra["memory"] == GI


def test_different_parts_or_keys_are_never_shared() -> None:
    a, c = _pod("a"), _pod("c", cpu="200m")
    ka = parts_memo(a, ("t", 2), request_parts(a), lambda: pod_requests(a))
    kc = parts_memo(c, ("t", 2), request_parts(c), lambda: pod_requests(c))
    assert milli(ka["cpu"]) == 100 and milli(kc["cpu"]) == 200
    other = parts_memo(a, ("t", 3), request_parts(a), lambda: {"other": 1})
    assert other == {"other": 1}


def test_calculate_resource_equal_with_and_without_sharing() -> None:
    """PodInfo.CalculateResource: requests plus overhead; non-zero cpu/memory with the
    100m / 200Mi defaults (kube-scheduler ``TestCalculateResource``'s rule)."""
    a, b = _pod("a", overhead={"memory": "1Gi"}), _pod("b", overhead={"memory": "1Gi"})
    ra, rb = PodInfo(a).calculate_resource(), PodInfo(b).calculate_resource()
    assert ra is rb
    assert ra.resource.milli_cpu == 100 and ra.resource.memory == GI
    assert ra.non0_cpu == 100 and ra.non0_mem == 200 * 1024**2 + GI
    pm._values.clear()  # a fresh computation gives the same value
    fresh = PodInfo(_pod("d", overhead={"memory": "1Gi"})).calculate_resource()
    assert fresh == ra


def test_table_bound_loses_sharing_not_values(monkeypatch: Any) -> None:
    monkeypatch.setattr(pm, "TABLE_LIMIT", 2)
    pods = [_pod(f"p{i}", cpu=f"{i + 1}m") for i in range(5)]
    got = []
    for p in pods:
        got.append(parts_memo(p, ("t", 4), request_parts(p), partial(pod_requests, p)))
    assert [milli(r["cpu"]) for r in got] == [1, 2, 3, 4, 5]
    assert len(pm._values) <= 2


def milli(q: Any) -> int:
    return int(q * 1000)
