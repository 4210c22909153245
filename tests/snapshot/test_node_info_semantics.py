"""`schedsim.snapshot.NodeInfo` / `PodInfo` against kube-scheduler's ``framework.NodeInfo``
semantics (pkg/scheduler/framework/types.go: AddPodInfo, RemovePod, SetNode, Snapshot,
update, updateUsedPorts via util.GetHostPorts, updatePVCRefCounts) and CA's
``framework/infos.go`` (AddPodInfo panics on a non-CA PodInfo, Snapshot copies
LocalResourceSlices and shares CSINode)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import AffinityTerm, PodResource, WeightedAffinityTerm
from schedsim.snapshot import NodeInfo, PodInfo
from schedsim.snapshot.infos import next_generation
from schedsim.testing import make_node, make_pod

MI = 1024**2
GI = 1024**3


def _pod(name: str, *containers: dict[str, Any], **spec: Any) -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": spec.pop("namespace", "default")},
            "spec": {"containers": list(containers) or [{"name": "c"}], **spec},
        }
    )


def _c(cpu: str | None = None, memory: str | None = None, **extra: Any) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    return {"name": extra.pop("name", "c"), "resources": {"requests": requests}, **extra}


def _keys(pods: Sequence[PodInfo]) -> list[str]:
    return [p.pod.name for p in pods]


def _node_info(*pods: Pod, node: Node | None = None) -> NodeInfo:
    return NodeInfo(node or make_node("n1"), pods=[PodInfo(p) for p in pods])


# --------------------------------------------------------------------------- aggregates


def test_requested_is_the_sum_of_pod_requests() -> None:
    ni = _node_info(
        make_pod("a", cpu="100m", memory="100Mi"), make_pod("b", cpu="1.5", memory="1Gi")
    )
    assert (ni.requested.milli_cpu, ni.requested.memory) == (1600, 100 * MI + GI)
    assert (ni.non_zero_requested.milli_cpu, ni.non_zero_requested.memory) == (1600, 100 * MI + GI)


@pytest.mark.parametrize(
    ("containers", "requested", "non_zero"),
    [
        pytest.param([_c()], (0, 0), (100, 200 * MI), id="no requests: 100m / 200Mi"),
        pytest.param([_c(cpu="300m")], (300, 0), (300, 200 * MI), id="cpu only"),
        pytest.param([_c(memory="1Gi")], (0, GI), (100, GI), id="memory only"),
        pytest.param(
            [_c(name="a"), _c(name="b", cpu="50m")],
            (50, 0),
            (150, 400 * MI),
            id="defaults apply per container",
        ),
        pytest.param([_c(cpu="0", memory="0")], (0, 0), (0, 0), id="explicit zero is no default"),
    ],
)
def test_non_zero_requested_assumes_defaults_for_missing_requests(
    containers: list[dict[str, Any]], requested: tuple[int, int], non_zero: tuple[int, int]
) -> None:
    """schedutil.GetNonzeroRequests: 100m cpu / 200Mi memory for a container that does not
    request them (an explicit 0 is kept)."""
    ni = _node_info(_pod("p", *containers))
    assert (ni.requested.milli_cpu, ni.requested.memory) == requested
    assert (ni.non_zero_requested.milli_cpu, ni.non_zero_requested.memory) == non_zero
    ni.remove_pod(ni.pods[0].pod)
    assert (ni.requested.milli_cpu, ni.requested.memory) == (0, 0)
    assert (ni.non_zero_requested.milli_cpu, ni.non_zero_requested.memory) == (0, 0)


def test_allocatable_comes_from_status_allocatable() -> None:
    ni = NodeInfo(make_node("n1", cpu="1500m", memory="2Gi", pods=30))
    assert (ni.allocatable.milli_cpu, ni.allocatable.memory) == (1500, 2 * GI)
    assert ni.allocatable.allowed_pod_number == 30


def test_used_ports_come_from_containers_and_sidecars_only() -> None:
    """util.GetHostPorts: host ports of containers and of restartable init containers; an
    ordinary init container's ports are not held by the pod."""
    pod = _pod(
        "p",
        {"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]},
        initContainers=[
            {
                "name": "sidecar",
                "restartPolicy": "Always",
                "ports": [{"containerPort": 90, "hostPort": 9090, "protocol": "UDP"}],
            },
            {"name": "init", "ports": [{"containerPort": 70, "hostPort": 7070}]},
        ],
    )
    ni = _node_info(pod)
    assert len(ni.used_ports) == 2
    assert ni.used_ports.check_conflict("", "TCP", 8080)
    assert ni.used_ports.check_conflict("10.0.0.1", "UDP", 9090)
    assert not ni.used_ports.check_conflict("", "TCP", 9090)
    assert not ni.used_ports.check_conflict("", "TCP", 7070)
    ni.remove_pod(pod)
    assert len(ni.used_ports) == 0


def test_pvc_ref_counts() -> None:
    """``namespace/claim`` -> number of pods on the node using it; removed at 0. Generic
    ephemeral volumes are not counted (kube-scheduler's updatePVCRefCounts counts
    persistentVolumeClaim volumes only)."""
    a = make_pod("a", pvcs=["claim1"])
    b = make_pod("b", pvcs=["claim1", "claim2"])
    c = make_pod("c", namespace="team", pvcs=["claim1"], ephemeral_volumes=["scratch"])
    ni = _node_info(a, b, c)
    assert dict(ni.pvc_ref_counts) == {
        "default/claim1": 2,
        "default/claim2": 1,
        "team/claim1": 1,
    }
    ni.remove_pod(b)
    assert dict(ni.pvc_ref_counts) == {"default/claim1": 1, "team/claim1": 1}
    ni.remove_pod(a)
    ni.remove_pod(c)
    assert dict(ni.pvc_ref_counts) == {}


def test_pods_with_affinity_lists() -> None:
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": "zone"}
            ]
        }
    }
    preferred = {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 5,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"a": "b"}},
                        "topologyKey": "zone",
                    },
                }
            ]
        }
    }
    node_affinity_only = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Exists"}]}]
            }
        }
    }
    plain = make_pod("plain")
    with_anti = make_pod("anti", spec={"affinity": anti})
    with_pref = make_pod("pref", spec={"affinity": preferred})
    with_node_aff = make_pod("nodeaff", spec={"affinity": node_affinity_only})
    ni = _node_info(plain, with_anti, with_pref, with_node_aff)
    assert _keys(ni.pods_with_affinity) == ["anti", "pref"]
    assert _keys(ni.pods_with_required_anti_affinity) == ["anti"]
    ni.remove_pod(with_anti)
    assert _keys(ni.pods_with_affinity) == ["pref"]
    assert _keys(ni.pods_with_required_anti_affinity) == []


def test_constructor_pods_are_added_in_order() -> None:
    pis = [PodInfo(make_pod(n)) for n in "abc"]
    ni = NodeInfo(make_node("n1"), pods=pis)
    assert len(ni.pods) == 3 and all(a is b for a, b in zip(ni.pods, pis, strict=True))


# --------------------------------------------------------------------------- RemovePod


def test_remove_pod_swaps_with_the_last_pod() -> None:
    """RemovePod removes by swapping with the last element, so order changes."""
    pods = [make_pod(n) for n in "abcd"]
    ni = _node_info(*pods)
    ni.remove_pod(pods[0])
    assert _keys(ni.pods) == ["d", "b", "c"]
    ni.remove_pod(pods[2])
    assert _keys(ni.pods) == ["d", "b"]
    ni.remove_pod(pods[1])
    assert _keys(ni.pods) == ["d"]


def test_remove_pod_matches_by_uid_only() -> None:
    """The pod key is its UID: a Pod object with the same UID and another name removes it."""
    a = make_pod("a")
    ni = _node_info(a, make_pod("b"))
    ni.remove_pod(attrs.evolve(a, name="renamed"))
    assert _keys(ni.pods) == ["b"]
    same_name_other_uid = attrs.evolve(make_pod("b"), uid="other-uid")
    with pytest.raises(LookupError):
        ni.remove_pod(same_name_other_uid)


def test_remove_missing_pod_is_a_lookup_error_and_changes_nothing() -> None:
    ni = _node_info(make_pod("a", cpu="1"))
    gen = ni.generation
    with pytest.raises(LookupError) as info:
        ni.remove_pod(make_pod("x"))
    assert str(info.value) == "no corresponding pod x in pods of node n1"
    assert _keys(ni.pods) == ["a"] and ni.requested.milli_cpu == 1000
    assert ni.generation == gen


def test_remove_pod_from_node_info_without_node() -> None:
    ni = NodeInfo()
    assert ni.node is None
    with pytest.raises(LookupError, match=r"^no corresponding pod x in pods of node $"):
        ni.remove_pod(make_pod("x"))


# --------------------------------------------------------------------------- Snapshot


def test_snapshot_is_independent_of_the_original() -> None:
    """Snapshot: own lists, aggregates, ports and PVC counts; mutating either side leaves the
    other alone."""
    port_pod = _pod("ports", {"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]})
    orig = _node_info(make_pod("a", pvcs=["claim1"]), port_pod)

    def view(ni: NodeInfo) -> tuple[object, ...]:
        return (
            _keys(ni.pods),
            _keys(ni.pods_with_affinity),
            ni.requested.milli_cpu,
            ni.non_zero_requested.memory,
            len(ni.used_ports),
            dict(ni.pvc_ref_counts),
            ni.allocatable.milli_cpu,
        )

    before = view(orig)
    copy = orig.snapshot()
    assert view(copy) == before
    anti = make_pod(
        "anti",
        cpu="1",
        pvcs=["claim1", "claim2"],
        spec={
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": "z"}
                    ]
                }
            },
            "containers": [
                {
                    "name": "c",
                    "resources": {"requests": {"cpu": "1"}},
                    "ports": [{"containerPort": 81, "hostPort": 8181}],
                }
            ],
        },
    )
    copy.add_pod_info(PodInfo(anti))
    copy.remove_pod(port_pod)
    copy.set_node(make_node("n1", cpu="64"))
    assert view(orig) == before
    copy_view = view(copy)
    orig.add_pod_info(PodInfo(make_pod("z", pvcs=["claim3"])))
    orig.remove_pod(orig.pods[0].pod)
    assert view(copy) == copy_view


def test_snapshot_shares_node_pod_and_pod_info_objects() -> None:
    slices = [object(), object()]
    csi = object()
    orig = NodeInfo(make_node("n1"), local_resource_slices=slices, csi_node=csi)
    orig.add_pod_info(PodInfo(make_pod("a")))
    orig.add_pod_info(PodInfo(make_pod("b")))
    copy = orig.snapshot()
    assert copy is not orig
    assert copy.node is orig.node
    assert all(c is o for c, o in zip(copy.pods, orig.pods, strict=True))
    assert all(c.pod is o.pod for c, o in zip(copy.pods, orig.pods, strict=True))
    assert copy.local_resource_slices is not orig.local_resource_slices
    assert all(c is o for c, o in zip(copy.local_resource_slices, slices, strict=True))
    assert copy.csi_node is csi
    assert copy.generation == orig.generation


# --------------------------------------------------------------------------- generation, SetNode


def test_generation_increases_on_every_mutation() -> None:
    ni = NodeInfo(make_node("n1"))
    gens = [ni.generation]
    pod = make_pod("a")
    ni.add_pod_info(PodInfo(pod))
    gens.append(ni.generation)
    ni.remove_pod(pod)
    gens.append(ni.generation)
    ni.set_node(make_node("n1", cpu="8"))
    gens.append(ni.generation)
    other = NodeInfo(make_node("n2"))  # the counter is process-wide (nextGeneration)
    gens.append(other.generation)
    gens.append(next_generation())
    assert gens == sorted(gens) and len(set(gens)) == len(gens)


def test_set_node_recomputes_allocatable_only() -> None:
    ni = _node_info(make_pod("a", cpu="1"), node=make_node("n1", cpu="2"))
    new = make_node("n1", cpu="8", memory="1Gi")
    ni.set_node(new)
    assert ni.node is new
    assert (ni.allocatable.milli_cpu, ni.allocatable.memory) == (8000, GI)
    assert ni.requested.milli_cpu == 1000 and _keys(ni.pods) == ["a"]


# --------------------------------------------------------------------------- AddPodInfo


class _ForeignPodInfo:
    """Satisfies the framework's PodInfo protocol but is not a snapshot PodInfo."""

    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        self.required_affinity_terms: tuple[AffinityTerm, ...] = ()
        self.required_anti_affinity_terms: tuple[AffinityTerm, ...] = ()
        self.preferred_affinity_terms: tuple[WeightedAffinityTerm, ...] = ()
        self.preferred_anti_affinity_terms: tuple[WeightedAffinityTerm, ...] = ()

    def calculate_resource(self) -> PodResource:
        raise AssertionError("must not be reached")


def test_add_pod_info_rejects_a_foreign_pod_info() -> None:
    """CA's NodeInfo.AddPodInfo panics unless given a CA PodInfo (it would lose DRA data)."""
    ni = NodeInfo(make_node("n1"))
    with pytest.raises(
        TypeError, match=r"expected schedsim\.snapshot\.PodInfo, got _ForeignPodInfo"
    ):
        ni.add_pod_info(_ForeignPodInfo(make_pod("a")))
    assert not ni.pods


def test_add_pod_info_stores_the_object_itself() -> None:
    ni = NodeInfo(make_node("n1"))
    pi = PodInfo(make_pod("a"))
    ni.add_pod_info(pi)
    assert ni.pods[0] is pi


# --------------------------------------------------------------------------- PodInfo


def test_pod_info_caches_calculate_resource() -> None:
    pi = PodInfo(make_pod("a", cpu="250m", memory=None))
    r = pi.calculate_resource()
    assert pi.calculate_resource() is r
    assert (r.resource.milli_cpu, r.resource.memory, r.non0_cpu, r.non0_mem) == (
        250,
        0,
        250,
        200 * MI,
    )


def test_pod_info_affinity_terms_default_to_the_pod_namespace() -> None:
    pod = make_pod(
        "a",
        namespace="team",
        spec={
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"x": "y"}}, "topologyKey": "zone"},
                        {
                            "labelSelector": {"matchLabels": {"x": "y"}},
                            "topologyKey": "zone",
                            "namespaces": ["other"],
                        },
                    ]
                }
            }
        },
    )
    pi = PodInfo(pod)
    assert [t.namespaces for t in pi.required_affinity_terms] == [
        frozenset({"team"}),
        frozenset({"other"}),
    ]
    assert pi.has_affinity
    assert pi.required_anti_affinity_terms == ()


def test_resource_claims_are_deduplicated_by_uid() -> None:
    @attrs.frozen
    class Claim:
        uid: str
        name: str

    shared, own_a, own_b = Claim("u1", "shared"), Claim("u2", "a"), Claim("u3", "b")
    ni = NodeInfo(make_node("n1"))
    ni.add_pod_info(PodInfo(make_pod("a"), [shared, own_a]))
    ni.add_pod_info(PodInfo(make_pod("b"), [Claim("u1", "shared-copy"), own_b]))
    assert [c.name for c in ni.resource_claims] == ["shared", "a", "b"]
