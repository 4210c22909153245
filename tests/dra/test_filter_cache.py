"""Differential test of the DynamicResources plugin's reuse of Filter results
(`schedsim.dra.filter_cache`, the ResultCache hooks) and of the search skipping exhausted
pools (`schedsim.dra.exhausted`).

kube-scheduler has neither: its Filter runs the structured allocator on every node for
every pod, over every pool (pkg/scheduler/framework/plugins/dynamicresources, ``Filter`` ->
``allocator.Allocate``). So the reference is schedsim with both off
(``DynamicResources.use_allocation_cache = False``), which does exactly that. For random
clusters (node-local, ``allNodes``, ``nodeSelector`` and per-device slices, shared
counters) and random sequences of pods whose claims come from a few templates (so equal
claims recur: one device, two devices under ``matchAttribute``, a prioritized list),
``schedsim simulate`` gives the same JSON (placements, allocated devices, reasons) with
them as without them, with both placements and both snapshot stores.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsim.cli import main as cli_main
from schedsim.dra import Allocator, filter_cache
from schedsim.dra.exhausted import ExhaustedPools
from schedsim.engine import STORES
from schedsim.snapshot import plugin_runner
from schedsim.snapshot.plugin_runner import SchedulerPluginRunner
from schedsim_plugins.dynamicresources import DynamicResources

DRIVER = "driver-a"

TEMPLATES: dict[str, dict[str, Any]] = {
    "one": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]},
    "two": {
        "requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "count": 2}}],
        "constraints": [{"requests": ["r"], "matchAttribute": f"{DRIVER}/group"}],
    },
    "either": {
        "requests": [
            {
                "name": "r",
                "firstAvailable": [
                    {"name": "big", "deviceClassName": "gpu", "count": 3},
                    {"name": "small", "deviceClassName": "gpu"},
                ],
            }
        ]
    },
}


def _device(name: str, group: int, counter: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "attributes": {"group": {"int": group}}}
    if counter is not None:
        out["consumesCounters"] = [
            {"counterSet": "set", "counters": {f"c{counter}": {"value": "1"}}}
        ]
    return out


def _slice(i: int, kind: int, devices: int, counters: bool, node: int) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": DRIVER,
        "pool": {"name": f"pool-{i}", "generation": 1, "resourceSliceCount": 1},
        "devices": [_device(f"d{j}", j % 2, j % 2 if counters else None) for j in range(devices)],
    }
    if counters:
        spec["sharedCounters"] = [
            {"name": "set", "counters": {"c0": {"value": "1"}, "c1": {"value": "2"}}}
        ]
    if kind == 0:
        spec["nodeName"] = f"node-{node}"
    elif kind == 1:
        spec["allNodes"] = True
    elif kind == 3:  # each device on its own node
        spec["perDeviceNodeSelection"] = True
        for j, dev in enumerate(spec["devices"]):
            dev["nodeName"] = f"node-{(node + j) % 4}"
    else:
        spec["nodeSelector"] = {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
            ]
        }
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"slice-{i}"},
        "spec": spec,
    }


def _objects(
    nodes: int, slices: list[tuple[int, int, bool, int]], pods: list[tuple[str, int]]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"node-{i}", "labels": {"zone": "a" if i % 2 else "b"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
        for i in range(nodes)
    ]
    out += [_slice(i, *s) for i, s in enumerate(slices)]
    out.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        }
    )
    for ns in ("a", "b"):  # equal templates in two namespaces: equal specs, other objects
        out += [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"spec": {"devices": devices}},
            }
            for name, devices in TEMPLATES.items()
        ]
    for i, (template, cpu) in enumerate(pods):
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"pod-{i:03d}", "namespace": "ab"[i % 2]},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "resources": {
                                "requests": {"cpu": f"{cpu}"},
                                "claims": [{"name": "r"}],
                            },
                        }
                    ],
                    "resourceClaims": [{"name": "r", "resourceClaimTemplateName": template}],
                },
            }
        )
    return out


def _simulate(path: Path, *args: str) -> dict[str, Any]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        cli_main(["simulate", str(path), "-o", "json", *args])
    result: dict[str, Any] = json.loads(buf.getvalue())
    return result


def _both(
    monkeypatch: pytest.MonkeyPatch, objects: list[dict[str, Any]], tmp: Path, *args: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    path = tmp / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    with_cache = _simulate(path, *args)
    with monkeypatch.context() as m:
        m.setattr(DynamicResources, "use_allocation_cache", False)
        without = _simulate(path, *args)
    return with_cache, without


slice_st = st.tuples(st.integers(0, 3), st.integers(1, 4), st.booleans(), st.integers(0, 3))
pod_st = st.tuples(st.sampled_from(sorted(TEMPLATES)), st.integers(1, 3))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    nodes=st.integers(1, 4),
    slices=st.lists(slice_st, min_size=1, max_size=6),
    pods=st.lists(pod_st, min_size=1, max_size=14),
    placement=st.sampled_from(["kube-scheduler", "first-fit"]),
    store=st.sampled_from(list(STORES)),
)
def test_cache_changes_nothing(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
    nodes: int,
    slices: list[tuple[int, int, bool, int]],
    pods: list[tuple[str, int]],
    placement: str,
    store: str,
) -> None:
    """Same placements, devices and reasons, pod by pod, with the cache as without it
    (pods that do not fit included: cpu runs out on small nodes, devices and counters
    run out)."""
    objects = _objects(nodes, slices, pods)
    args: tuple[str, ...] = ("--placement", placement, "--store", store)
    args += ("--feature-gates", "DRAPartitionableDevices=true")
    with_cache, without = _both(monkeypatch, objects, tmp_path_factory.mktemp("c"), *args)
    assert with_cache == without


def test_scheduler_perf_claim_template_shape(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """scheduler_perf's SchedulingWithResourceClaimTemplate shape (node-local slices of 10
    devices, one template per namespace): equal output, and the allocator runs less than a
    quarter as often (so a cache that never answers fails here)."""
    nodes = 12
    objects = _objects(nodes, [(0, 10, False, i) for i in range(nodes)], [])
    objects += [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p-{i:03d}", "namespace": "ab"[i % 2]},
            "spec": {
                "containers": [{"name": "c", "resources": {"claims": [{"name": "r"}]}}],
                "resourceClaims": [{"name": "r", "resourceClaimTemplateName": "one"}],
            },
        }
        for i in range(130)  # 10 more than the 120 devices: those fail on every node
    ]
    calls: list[bool] = []
    allocate = Allocator.allocate

    def counting(self: Allocator, *args: Any) -> Any:
        calls.append(DynamicResources.use_allocation_cache)
        return allocate(self, *args)

    monkeypatch.setattr(Allocator, "allocate", counting)
    with_cache, without = _both(monkeypatch, objects, tmp_path)
    assert with_cache == without
    assert with_cache["summary"]["scheduled"] == 120
    cached, full = calls.count(True), calls.count(False)
    assert full >= 130 * nodes // 2  # kube-scheduler's walk: every node for most pods
    assert cached * 4 < full


@pytest.mark.parametrize("kind", [1, 2])
def test_shared_pool_taken_elsewhere(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kind: int
) -> None:
    """Network-attached devices (``allNodes``, or a ``nodeSelector`` matching the nodes)
    taken by earlier pods on one node are gone for the next pod on every node, although
    the other nodes' NodeInfos did not change: of three pods wanting one of the two
    devices, the third does not fit (upstream's Filter: "cannot allocate all claims"),
    with the cache as without it."""
    objects = _objects(4, [(kind, 2, False, 0)], [("one", 1)] * 3)
    objects = [  # nodeSelector: zone a, the odd nodes
        o for o in objects if o["kind"] != "Node" or kind == 1 or o["metadata"]["name"][-1] in "13"
    ]
    with_cache, without = _both(monkeypatch, objects, tmp_path)
    assert with_cache == without
    assert with_cache["summary"]["scheduled"] == 2
    assert with_cache["pods"][2]["reasons"] == ["cannot allocate all claims"]


def test_counters_exhausted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """scheduler_perf's partitionable shape in small (DRAPartitionableDevices; slices on a
    node selector with shared counters, devices consuming them): six slices of four
    devices, ``d0`` and ``d2`` consuming counter ``c0`` (1 available), ``d1`` and ``d3``
    counter ``c1`` (2). Each of 14 one-device pods takes the first device whose counters
    still suffice (upstream's allocator: pools in order, devices in order, a device is
    allocatable only while its slice's counters cover it): d0, d1, d3 of pool-0 (d2 is
    starved of ``c0``), then of pool-1, ... Same with the cache as without it, and the
    search did leave the exhausted pools (all four devices used or starved) out."""
    objects = _objects(8, [(2, 4, True, 0)] * 6, [("one", 1)] * 14)
    left_out: list[int] = []
    live = ExhaustedPools.live

    def counting(self: ExhaustedPools, pools: list[Any]) -> list[Any]:
        out = live(self, pools)
        left_out.append(len(pools) - len(out))
        return out

    monkeypatch.setattr(ExhaustedPools, "live", counting)
    args = ("--feature-gates", "DRAPartitionableDevices=true")
    with_cache, without = _both(monkeypatch, objects, tmp_path, *args)
    assert with_cache == without
    got = [[(a["pool"], a["device"]) for a in p["allocations"]] for p in with_cache["pods"]]
    assert got == [[(f"pool-{i // 3}", ("d0", "d1", "d3")[i % 3])] for i in range(14)]
    assert max(left_out) == 4


def _shared_gpu_objects(
    nodes: int, pods: int, milli: tuple[int, ...], devices: int = 2
) -> list[dict[str, Any]]:
    """``nodes`` nodes with the same node-local slice of ``devices`` shared devices
    (``allowMultipleAllocations``, ``milli`` capacity 1000) and ``pods`` pods, pod ``i``
    wanting ``milli[i * 7 % len(milli)]`` of one device (one claim template per value)."""
    objects = [o for o in _objects(nodes, [], []) if o["kind"] != "ResourceClaimTemplate"]
    for i in range(nodes):
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"slice-{i}"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": f"node-{i}",
                    "pool": {"name": f"pool-{i}", "generation": 1, "resourceSliceCount": 1},
                    "devices": [
                        {
                            "name": f"gpu-{j}",
                            "allowMultipleAllocations": True,
                            "capacity": {"milli": {"value": "1000"}},
                        }
                        for j in range(devices)
                    ],
                },
            }
        )
    for m in milli:
        request = {
            "name": "r",
            "exactly": {"deviceClassName": "gpu", "capacity": {"requests": {"milli": str(m)}}},
        }
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": f"m{m}", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [request]}}},
            }
        )
    for i in range(pods):
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p-{i:03d}", "namespace": "default"},
                "spec": {
                    "containers": [{"name": "c", "resources": {"claims": [{"name": "r"}]}}],
                    "resourceClaims": [
                        {"name": "r", "resourceClaimTemplateName": f"m{milli[i * 7 % len(milli)]}"}
                    ],
                },
            }
        )
    return objects


def test_look_alike_nodes_share_verdicts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Look-alike nodes (`AllocationCache.look_alike`): 12 nodes with the same node-local
    slice of two shared devices (``allowMultipleAllocations``, ``milli`` capacity 1000,
    DRAConsumableCapacity), 30 pods wanting 300, 500 or 1000 milli of one device. Upstream's
    Filter runs the allocator on every node for every pod (the reference: the cache off);
    with the cache the output is the same and the allocator runs far less often than once
    per node and claim spec (untouched nodes and nodes left in the same state share one
    verdict: fits / does not fit; 53 runs here, 117 without look-alikes)."""
    nodes, milli = 12, (300, 500, 1000)
    objects = _shared_gpu_objects(nodes, 30, milli)
    calls: list[bool] = []
    allocate = Allocator.allocate

    def counting(self: Allocator, *args: Any) -> Any:
        calls.append(DynamicResources.use_allocation_cache)
        return allocate(self, *args)

    monkeypatch.setattr(Allocator, "allocate", counting)
    args = ("--feature-gates", "DRAConsumableCapacity=true")
    with_cache, without = _both(monkeypatch, objects, tmp_path, *args)
    assert with_cache == without
    placed = [p for p in with_cache["pods"] if p.get("node")]
    assert len(placed) == 30
    taken = [(p["node"], a["device"]) for p in placed for a in p["allocations"]]
    assert len(set(taken)) < len(taken)  # devices shared
    cached, full = calls.count(True), calls.count(False)
    assert full >= 30 * nodes  # every node for every pod
    # fewer than one run per node and claim spec plus one per pod at Reserve (which
    # allocates on the chosen node when Filter's answer was a look-alike's verdict);
    # without look-alikes it was 117
    assert cached < 30 + len(milli) * nodes


def test_table_kept_after_first_walk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A claim spec's Filter table is reused from its second pod on: DynamicResources'
    refresh mark (`FilterTable.refreshed`) survives the walk that sizes a new table, so a
    table's later walks filter only the nodes changed since its last walk. 12 look-alike
    nodes, 30 pods of 3 claim specs (`_shared_gpu_objects`): at most 12 nodes filtered per
    spec for its first walk plus one per pod placed since a table's last walk (30 per
    spec), against every node for every pod upstream (the cache off, 360); the output is
    the same. Before the mark was kept, each table's second walk filtered all 12 nodes
    again."""
    nodes, milli = 12, (300, 500, 1000)
    objects = _shared_gpu_objects(nodes, 30, milli)
    walks: list[tuple[int, int]] = []  # (table, nodes filtered)
    refilter = SchedulerPluginRunner._refilter

    def counting(self: SchedulerPluginRunner, *args: Any) -> Any:
        walks.append((id(args[4]), len(args[3])))
        return refilter(self, *args)

    monkeypatch.setattr(SchedulerPluginRunner, "_refilter", counting)
    monkeypatch.setattr(plugin_runner, "_seeded", lambda *args: 0)  # (tested below)
    args = ("--feature-gates", "DRAConsumableCapacity=true")
    with_cache, without = _both(monkeypatch, objects, tmp_path, *args)
    assert with_cache == without
    assert len([p for p in with_cache["pods"] if p.get("node")]) == 30
    tables = {t for t, _ in walks}
    assert len(tables) == len(milli)
    for t in tables:  # one full walk per table, then the changed nodes only
        assert [n for u, n in walks if u == t and n == nodes] == [nodes]
    assert sum(n for _, n in walks) <= len(milli) * (nodes + 30)


def test_seeded_tables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A claim spec's table seeded from another of the pod class (`FilterTable.seed`): the
    plugins before DynamicResources (NodeUnschedulable ... NodeResourcesFit) read only what
    the pod class names, so their verdict on an unchanged NodeInfo is the other table's.
    `_shared_gpu_objects` with 1-cpu pods (4 fit a node's cpu; its two GPUs may not: a
    1000-milli claim needs an unused one) and three nodes tainted NoSchedule: 40 pods of 3
    claim specs.
    The output equals the seeding switched off and the cache off (upstream's Filter on
    every node for every pod), and the seed answered both ways: rejections copied
    (TaintToleration, NodeResourcesFit) and passes after which DynamicResources alone ran."""
    nodes, milli = 12, (300, 500, 1000)
    objects = _shared_gpu_objects(nodes, 40, milli)
    for o in objects:
        if o["kind"] == "Pod":
            o["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "1"}
        elif o["kind"] == "Node" and o["metadata"]["name"] in ("node-0", "node-5", "node-7"):
            o["spec"] = {"taints": [{"key": "k", "effect": "NoSchedule"}]}
    answers: list[int] = []
    seeded = plugin_runner._seeded

    def counting(*args: Any) -> int:
        k = seeded(*args)
        answers.append(k)
        return k

    monkeypatch.setattr(plugin_runner, "_seeded", counting)
    args = ("--feature-gates", "DRAConsumableCapacity=true")
    with_cache, without = _both(monkeypatch, objects, tmp_path, *args)
    assert with_cache == without
    assert answers.count(plugin_runner._COPIED) > 0
    assert answers.count(plugin_runner._RUN_REST) > 0
    with monkeypatch.context() as m:
        m.setattr(plugin_runner, "_seeded", lambda *args: 0)
        unseeded = _simulate(tmp_path / "cluster.json", *args)
    assert unseeded == with_cache
    placed = [p for p in with_cache["pods"] if p.get("node")]
    assert 18 < len(placed) < 36  # 9 untainted nodes x 4 cpu; some GPUs ran out first
    assert {p["node"] for p in placed}.isdisjoint({"node-0", "node-5", "node-7"})


def _held_shares(holders: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """A bound pod per (node, device) of ``holders`` holding 700 milli of that device
    through an allocated ResourceClaim (the claim and pod as an API server stores them)."""
    out: list[dict[str, Any]] = []
    for k, (i, j) in enumerate(holders):
        name = f"held-{k}"
        out.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "a", "uid": f"uid-claim-{k}"},
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "r",
                                "exactly": {
                                    "deviceClassName": "gpu",
                                    "capacity": {"requests": {"milli": "700"}},
                                },
                            }
                        ]
                    }
                },
                "status": {
                    "allocation": {
                        "devices": {
                            "results": [
                                {
                                    "request": "r",
                                    "driver": DRIVER,
                                    "pool": f"pool-{i}",
                                    "device": f"gpu-{j}",
                                    "shareID": f"00000000-0000-0000-0000-{k:012d}",
                                    "consumedCapacity": {"milli": "700"},
                                }
                            ]
                        },
                        "nodeSelector": {
                            "nodeSelectorTerms": [
                                {
                                    "matchFields": [
                                        {
                                            "key": "metadata.name",
                                            "operator": "In",
                                            "values": [f"node-{i}"],
                                        }
                                    ]
                                }
                            ]
                        },
                    },
                    "reservedFor": [{"resource": "pods", "name": name, "uid": f"uid-pod-{k}"}],
                },
            }
        )
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "a", "uid": f"uid-pod-{k}"},
                "spec": {
                    "nodeName": f"node-{i}",
                    "containers": [{"name": "c", "resources": {"claims": [{"name": "r"}]}}],
                    "resourceClaims": [{"name": "r", "resourceClaimName": name}],
                },
                "status": {"phase": "Running"},
            }
        )
    return out


def _runs_against(
    monkeypatch: pytest.MonkeyPatch, objects: list[dict[str, Any]], tmp_path: Path, name: str
) -> tuple[dict[str, Any], int, int]:
    """Simulate ``objects`` with the AllocationCache, with it off (upstream's allocator on
    every node) and with `filter_cache`'s ``name`` answering as if it did not apply
    (None/False); the three outputs must be equal. Returns the output and the allocator
    runs with the cache, then with ``name`` patched."""
    calls: list[bool] = []
    allocate = Allocator.allocate

    def counting(self: Allocator, *args: Any) -> Any:
        calls.append(DynamicResources.use_allocation_cache)
        return allocate(self, *args)

    monkeypatch.setattr(Allocator, "allocate", counting)
    args = ("--feature-gates", "DRAConsumableCapacity=true")
    cached, without = _both(monkeypatch, objects, tmp_path, *args)
    assert cached == without
    runs = calls.count(True)
    calls.clear()
    answer = None if name == "_search_depth" else False
    with monkeypatch.context() as m:
        m.setattr(filter_cache, name, lambda specs: answer)
        patched = _simulate(tmp_path / "cluster.json", *args)
    assert patched == without
    return without, runs, calls.count(True)


def test_look_alike_names_blind_to_device_order(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Look-alike names are blind to which of a node's equal devices holds what: 12 nodes
    with two shared devices each (`_shared_gpu_objects`), 700 milli held on gpu-0 of the
    even nodes and on gpu-1 of the odd ones (`_held_shares`), then 24 pods wanting 300,
    1000 or 500 milli. Whether claims fit does not depend on the order the search tries
    equal devices in (it is complete), so the two kinds of nodes are in one state. The
    output equals upstream's allocator on every node (the cache off), and the order-blind
    names need fewer allocator runs than names that keep the order (what `look_alike`
    falls back to when a search could exhaust the ``filterTimeout`` budget; forced here
    by an unknown search depth)."""
    objects = _shared_gpu_objects(12, 24, (300, 1000, 500))
    objects += _held_shares([(i, i % 2) for i in range(12)])
    without, blind_runs, ordered_runs = _runs_against(
        monkeypatch, objects, tmp_path, "_search_depth"
    )
    pending = [p for p in without["pods"] if not p["name"].startswith("held-")]
    assert len(pending) == 24
    # placed, or refused with DynamicResources' reason (upstream's errUnschedulable
    # "cannot allocate all claims") once the free devices are shared out
    assert all(p["node"] or p["reasons"] == ["cannot allocate all claims"] for p in pending)
    assert sum(1 for p in pending if p["node"]) > 12
    # the first pod of a claim spec: one run for both kinds of node instead of two
    assert blind_runs < ordered_runs


def test_one_device_claims_named_by_the_set_of_device_states(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A claim for one device fits on a node exactly when one of its devices can be taken
    on its own, so its look-alike name is the set of the node's (device content, use),
    blind to how many devices share each: 12 nodes with three shared devices each
    (`_shared_gpu_objects`), 700 milli held on gpu-0 of the even nodes and on gpu-0 and
    gpu-1 of the odd ones (`_held_shares`: both kinds hold {700 held, free}), then 24 pods
    wanting 300, 1000 or 500 milli of one device. The output equals upstream's allocator on
    every node (the cache off), and fewer allocator runs are needed than with the multiset
    names that claims for several devices get (forced here by `_one_device` answering
    False)."""
    objects = _shared_gpu_objects(12, 24, (300, 1000, 500), devices=3)
    objects += _held_shares([(i, 0) for i in range(12)] + [(i, 1) for i in range(1, 12, 2)])
    without, set_runs, multiset_runs = _runs_against(monkeypatch, objects, tmp_path, "_one_device")
    pending = [p for p in without["pods"] if not p["name"].startswith("held-")]
    assert len(pending) == 24
    assert all(p["node"] or p["reasons"] == ["cannot allocate all claims"] for p in pending)
    assert set_runs < multiset_runs
