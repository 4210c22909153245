"""benchmarks/scheduler_perf.py's steady-state DRA workloads keep the cluster at the setup's
utilization, as upstream's ``createPods`` with ``steadyState: true`` does (dra/
performance-config.yaml, SteadyStateClusterResourceClaimTemplate): a bound pod is deleted and
the claim made for it from the template goes with it, so its device is free for the next pod,
and the ``full`` setup leaves exactly as many free devices as pods in flight."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sp() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "scheduler_perf_steady", ROOT / "benchmarks" / "scheduler_perf.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_deleted_pods_free_their_devices(sp: ModuleType) -> None:
    """Ten nodes of ten devices, 99 allocated claims: one device is free, so each round of
    ten pods binds exactly one, in every round (the device of the deleted pod's claim comes
    back); without the init claims every pod of every round binds."""
    full = list(sp.steady_state_cluster(4990)(0.02))
    assert sum(1 for o in full if o["kind"] == "ResourceClaim") == 99
    _, given, bound = sp.steady_state(full, 3)
    assert (given, bound) == (30, 3)
    _, given, bound = sp.steady_state(list(sp.steady_state_cluster(0)(0.02)), 3)
    assert (given, bound) == (30, 30)


def test_init_claims_fill_nodes_in_list_order(sp: ModuleType) -> None:
    """allocResourceClaims takes the nodes as the API server lists them (by name: ``-10``
    before ``-2``) and each claim the first free device of the first node that has one."""
    claims = [o for o in sp.steady_state_cluster(2500)(0.024) if o["kind"] == "ResourceClaim"]
    assert len(claims) == 60
    results = [c["status"]["allocation"]["devices"]["results"][0] for c in claims]
    assert [r["pool"] for r in results[::10]] == [
        f"scheduler-perf-dra-{i}" for i in (0, 1, 10, 11, 2, 3)
    ]
    assert [r["device"] for r in results[20:23]] == ["instance-0", "instance-1", "instance-2"]
    assert all("reservedFor" not in c["status"] for c in claims)
