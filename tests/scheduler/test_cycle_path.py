"""Issue 26's layout check: one pending pod's path from the scheduling pass to its result
stays in kube-scheduler's package (`schedsim.scheduler`), the plugin API
(`schedsim.framework`), the plugins (`schedsim_plugins`, and `schedsim.dra`, the structured
allocator DynamicResources calls) and the snapshot's calls (`schedsim.snapshot`: NodeInfos,
the filter walk over them, assume/bind), plus the objects it reads (`schedsim.api`).

Traced with `sys.setprofile` around `SchedulingPass.run` (what ``schedsim simulate`` runs
after loading), for a pod that is scored and placed and for one that fits nowhere and goes
through PostFilter (DefaultPreemption), with and without ``--explain``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pytest

from schedsim.engine import Cluster, Engine
from schedsim.scheduler import scheduling_pass

ALLOWED = ("schedsim.scheduler", "schedsim.framework", "schedsim.snapshot", "schedsim.api")
PLUGINS = ("schedsim_plugins", "schedsim.dra")

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: a, labels: {kubernetes.io/hostname: a}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: b, labels: {kubernetes.io/hostname: b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: fits, namespace: default}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: too-big, namespace: default}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "64"}}}]
"""


def _module(frame: FrameType) -> str:
    return str(frame.f_globals.get("__name__", ""))


@contextmanager
def _traced(target: Any, name: str, seen: list[str]) -> Iterator[None]:
    """Record the module of every Python function called while ``target.name`` runs."""
    real = getattr(target, name)
    depth = [0]

    def profiler(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and depth[0] > 0:
            seen.append(_module(frame))

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        depth[0] += 1
        old = sys.getprofile()
        sys.setprofile(profiler)
        try:
            return real(*args, **kwargs)
        finally:
            sys.setprofile(old)
            depth[0] -= 1

    setattr(target, name, wrapped)
    try:
        yield
    finally:
        setattr(target, name, real)


def outside(modules: list[str]) -> list[str]:
    """The schedsim modules in ``modules`` outside the pod's allowed path."""
    return sorted(
        {m for m in modules if m.startswith("schedsim") and not m.startswith(ALLOWED + PLUGINS)}
    )


@pytest.mark.parametrize("explain", [False, True], ids=["plain", "explain"])
def test_pending_pod_path_stays_in_the_scheduler(explain: bool) -> None:
    cluster = Cluster.from_text(CLUSTER, "<cluster>")
    seen: list[str] = []
    with _traced(scheduling_pass.SchedulingPass, "run", seen):
        result = Engine().simulate(cluster, explain=(lambda pod: True) if explain else None)
    placed = {o.pod.name: o.node_name for o in result.outcomes}
    assert placed == {"fits": "b", "too-big": None}  # LeastAllocated prefers the larger node
    assert {m.split(".")[1] for m in seen if m.startswith("schedsim.")} >= {
        "scheduler",
        "framework",
        "snapshot",
    }
    assert any(m.startswith("schedsim_plugins") for m in seen)
    assert outside(seen) == []


def test_the_check_can_fail() -> None:
    """A module of the Cluster Autoscaler's half on the path is named."""
    seen = ["schedsim.scheduler.schedule_one", "schedsim.autoscaler.hinting", "schedsim_plugins.x"]
    assert outside(seen) == ["schedsim.autoscaler.hinting"]
