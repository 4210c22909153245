"""Traces: manifest traces (creationTimestamp, the schedsim.io/duration annotation,
controllers expanded) and the Alibaba GPU trace (cluster-trace-gpu-v2023's documented CSV
columns, alibaba/clusterdata README), with bad input refused as ``FILE: ...`` or
``FILE:LINE: ...``."""

from __future__ import annotations

import os
from pathlib import Path

import attrs
import pytest

from schedsim.api.core import OwnerReference
from schedsim.api.errors import ManifestError
from schedsim.autoscaler.nodegroups import parse_node_groups
from schedsim.engine import Cluster, Engine, EngineConfig
from schedsim.replay import Replay, manifest_trace, parse_duration
from schedsim.replay.alibaba import (
    GPU_DEVICE_CLASS,
    GPU_DRIVER,
    GPU_MODEL_LABEL,
    TraceError,
    alibaba_trace,
    read_pods,
)
from schedsim.replay.metrics import TaskClass, node_fragmentation, percentile

NODES_CSV = """\
sn,cpu_milli,memory_mib,gpu,model
node-a,32000,131072,8,V100M32
node-b,16000,65536,0,nan
"""

PODS_CSV = """\
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
p-late,4000,8192,2,1000,,LS,Running,500,900,510
p-first,1000,2048,1,460,,BE,Succeeded,100,400,100
p-never,1000,2048,0,0,,BE,Pending,200,260,
p-spec,1000,2048,1,1000,V100M32|V100M16,LS,Running,300,,300
"""


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90.0),
        ("10m", 600.0),
        ("1h30m", 5400.0),
        ("1.5h", 5400.0),
        ("250ms", 0.25),
        ("0", 0.0),
        ("-5m", -300.0),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    """Go's time.ParseDuration units (h, m, s, ms), as CA's duration flags take them."""
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "abc", "10x", "m"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)


MANIFEST = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: later, creationTimestamp: "2025-01-01T00:10:00Z",
           annotations: {schedsim.io/duration: 1h30m}}
spec: {containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata: {name: early, creationTimestamp: "2025-01-01T00:00:00Z"}
spec: {containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata: {name: running, annotations: {schedsim.io/duration: 2m}}
spec: {nodeName: n1, containers: [{name: c, image: x}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: job}
spec:
  parallelism: 2
  template:
    metadata: {annotations: {schedsim.io/duration: 45s}}
    spec: {restartPolicy: Never, containers: [{name: c, image: x}]}
"""


def test_manifest_trace_arrivals_and_durations() -> None:
    """Arrival = creationTimestamp relative to the earliest; duration from the annotation;
    a Job's pods (expanded as simulate expands them) carry the template's annotation and,
    without a creationTimestamp, arrive at t = 0; bound pods run from t = 0."""
    trace = manifest_trace(Cluster.from_text(MANIFEST, "t.yaml"))
    got = [(tp.pod.name, tp.arrival, tp.duration) for tp in trace.arrivals]
    assert got[-1] == ("later", 600.0, 5400.0)
    assert ("early", 0.0, None) in got
    jobs = [g for g in got if g[0].startswith("job-")]
    assert len(jobs) == 2 and all(a == 0.0 and d == 45.0 for _, a, d in jobs)
    assert [(tp.pod.name, tp.duration) for tp in trace.running] == [("running", 120.0)]
    assert [p.name for p in trace.cluster.pods] == ["running"]
    assert trace.start is not None and trace.start.isoformat() == "2025-01-01T00:00:00+00:00"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("-5m", "must not be negative, got '-5m'"),
        ("soon", "invalid duration 'soon' (expected e.g. 90s, 10m, 1h30m)"),
    ],
)
def test_manifest_trace_bad_duration(value: str, problem: str) -> None:
    """FILE: KIND NS/NAME: FIELD: problem."""
    text = MANIFEST.replace("1h30m", value)
    with pytest.raises(ManifestError) as e:
        manifest_trace(Cluster.from_text(text, "t.yaml"))
    assert str(e.value) == (
        f"t.yaml: Pod default/later: metadata.annotations[schedsim.io/duration]: {problem}"
    )


def _write(tmp_path: Path, pods: str = PODS_CSV, nodes: str = NODES_CSV) -> tuple[str, str]:
    p, n = tmp_path / "pods.csv", tmp_path / "nodes.csv"
    p.write_text(pods)
    n.write_text(nodes)
    return str(p), str(n)


def test_alibaba_trace(tmp_path: Path) -> None:
    """Nodes get the listed cpu, memory and nvidia.com/gpu, labelled with their model; pods
    arrive at creation_time - min(creation_time), run deletion - scheduled (deletion -
    creation when never scheduled; until the end without a deletion); gpu_spec becomes a
    node affinity on the model label; a GPU-sharing pod takes a whole GPU (warned)."""
    pods, nodes = _write(tmp_path)
    trace = alibaba_trace(pods, nodes)
    a, b = trace.cluster.nodes
    assert a.allocatable["nvidia.com/gpu"] == 8 and a.allocatable["cpu"] == 32
    assert a.labels[GPU_MODEL_LABEL] == "V100M32" and GPU_MODEL_LABEL not in b.labels
    assert b.allocatable["memory"] == 65536 * 2**20
    got = [(tp.pod.name, tp.arrival, tp.duration) for tp in trace.arrivals]
    assert got == [
        ("p-first", 0.0, 300.0),
        ("p-never", 100.0, 60.0),
        ("p-spec", 200.0, None),
        ("p-late", 400.0, 390.0),
    ]
    spec_pod = trace.arrivals[2].pod
    assert spec_pod.affinity is not None
    assert "V100M16" in repr(spec_pod.affinity) and GPU_MODEL_LABEL in repr(spec_pod.affinity)
    first = trace.arrivals[0].pod
    assert first.containers[0].requests["nvidia.com/gpu"] == 1
    assert any("1 GPU-sharing pod(s)" in w for w in trace.warnings)
    m = Replay(trace).run()
    assert m.completed == 3 and m.arrivals == 4 and not m.unschedulable
    assert max(s.gpu_allocatable for s in m.samples) == 8


def test_alibaba_gpus_as_dra_devices(tmp_path: Path) -> None:
    """``--gpu-as dra``: a ResourceSlice per GPU node (node-local, pool named after the node)
    with one device per GPU, a DeviceClass selecting the driver, a ResourceClaimTemplate per
    GPU count with one ExactCount request (Kubernetes docs, "Dynamic Resource Allocation":
    ``exactly.allocationMode: ExactCount`` allocates ``count`` devices of the class). A whole
    device per GPU gives the placements and GPU counts of the extended resource; each pod's
    claim is made when it arrives and deleted when it completes (the resource-claim
    controller's generated claims, owned by the pod)."""
    pods, nodes = _write(tmp_path)
    trace = alibaba_trace(pods, nodes, gpu_as="dra")
    c = trace.cluster
    assert [(s.node_name, s.pool.name, s.driver, len(s.devices)) for s in c.resource_slices] == [
        ("node-a", "node-a", GPU_DRIVER, 8)
    ]
    assert [d.name for d in c.device_classes] == [GPU_DEVICE_CLASS]
    assert sorted(t.name for t in c.resource_claim_templates) == ["gpu-1", "gpu-2"]
    assert "nvidia.com/gpu" not in c.nodes[0].allocatable
    late = next(tp for tp in trace.arrivals if tp.pod.name == "p-late")
    assert late.gpus == 2 and late.pod.resource_claims[0].resource_claim_template_name == "gpu-2"
    assert "nvidia.com/gpu" not in late.pod.containers[0].requests
    assert any("a gpu.alibaba.com device is allocated whole" in w for w in trace.warnings)
    r = Replay(trace, gpu_driver=GPU_DRIVER)
    dra = r.run()
    ext = Replay(alibaba_trace(pods, nodes)).run()
    series = [(s.time, s.running, s.gpu_requested, s.gpu_allocatable) for s in dra.samples]
    assert series == [(s.time, s.running, s.gpu_requested, s.gpu_allocatable) for s in ext.samples]
    assert dra.latencies == ext.latencies and not dra.unschedulable
    assert max(s.gpu_requested for s in dra.samples) == 3  # p-spec (1), then p-late (2)
    # p-spec runs to the end: its claim is the one left, allocated on node-a
    [claim] = r.snapshot.dra_snapshot.list_resource_claims()
    assert claim.owner_references[0].name == "p-spec"
    assert claim.status.allocation is not None


def test_alibaba_gpu_sharing_with_consumable_capacity(tmp_path: Path) -> None:
    """``--gpu-as dra`` with DRAConsumableCapacity: devices allow multiple allocations and
    publish a ``gpu-milli`` capacity of 1000; a sharing pod asks for its gpu_milli of one
    device, a whole-GPU pod consumes a whole device (KEP-5075: without a capacity request the
    whole capacity is consumed; the allocator's consumable-capacity cases). Two 500 shares
    fill gpu-0, the 300 share takes part of gpu-1, so the whole-GPU pod waits for the shares
    to complete (t=600); without sharing every pod takes a device and two wait."""
    header = PODS_CSV.splitlines()[0] + "\n"
    pods, nodes = _write(
        tmp_path,
        header + "s1,1000,2048,1,500,,BE,Running,0,600,0\n"
        "s2,1000,2048,1,500,,BE,Running,0,600,0\n"
        "s3,1000,2048,1,300,,BE,Running,0,600,0\n"
        "w1,1000,2048,1,1000,,BE,Running,0,600,0\n",
        "sn,cpu_milli,memory_mib,gpu,model\nnode-a,32000,131072,2,T4\n",
    )
    trace = alibaba_trace(pods, nodes, gpu_as="dra", gpu_share=True)
    assert not trace.warnings
    assert sorted(t.name for t in trace.cluster.resource_claim_templates) == [
        "gpu-1",
        "gpu-share-300",
        "gpu-share-500",
    ]
    device = trace.cluster.resource_slices[0].devices[0]
    assert device.allow_multiple_allocations
    engine = Engine(EngineConfig(feature_gates={"DRAConsumableCapacity": True}))
    r = Replay(trace, engine=engine, gpu_driver=GPU_DRIVER)
    m = r.run()
    assert not m.unschedulable
    assert {k: v for k, v in m.latencies.items() if v} == {"default/w1": 600.0}
    first = m.samples[0]
    assert (first.running, first.gpu_requested, first.gpu_allocatable) == (3, 2, 2)
    whole = Replay(alibaba_trace(pods, nodes, gpu_as="dra"), gpu_driver=GPU_DRIVER)
    assert whole.run().samples[0].running == 2


GPU_GROUPS = {
    "nodeGroups": [
        {
            "name": "gpu",
            "maxSize": 2,
            "template": {
                "node": {
                    "metadata": {"name": "gpu", "labels": {GPU_MODEL_LABEL: "T4"}},
                    "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
                },
                "resourceSlices": [
                    {
                        "apiVersion": "resource.k8s.io/v1",
                        "kind": "ResourceSlice",
                        "metadata": {"name": "gpu-slice"},
                        "spec": {
                            "driver": GPU_DRIVER,
                            "nodeName": "gpu",
                            "pool": {"name": "gpu", "generation": 1, "resourceSliceCount": 1},
                            "devices": [{"name": f"gpu-{i}"} for i in range(4)],
                        },
                    }
                ],
            },
        }
    ]
}


def test_dra_pod_evicted_by_scale_down_gets_a_new_claim(tmp_path: Path) -> None:
    """``--gpu-as dra`` with the autoscaler: node-a's two GPUs are taken by a and b (0-100s),
    so c (1 GPU, t=10) makes CA add a 4-GPU node (its template's ResourceSlice, copied for
    the new node) where c binds at t=70. Once a and b complete, the new node is under the
    GPU utilization threshold (1/4 < 0.5) and c fits on node-a, so the node is unneeded from
    t=100 and deleted after --scale-down-unneeded-time (10m, CA FAQ "How does scale-down
    work?"); c (owned by a Job) is evicted and comes back as a new pod whose claim the claim
    controller makes again (the old one was deleted with the pod, kube-controller-manager's
    resource-claim controller), allocated on node-a. The claims of completed pods are gone."""
    header = PODS_CSV.splitlines()[0] + "\n"
    pods, nodes = _write(
        tmp_path,
        header + "a,1000,1024,1,1000,,LS,Succeeded,0,100,0\n"
        "b,1000,1024,1,1000,,LS,Succeeded,0,100,0\n"
        "c,1000,1024,1,1000,,LS,Running,10,,10\n",
        "sn,cpu_milli,memory_mib,gpu,model\nnode-a,8000,32768,2,T4\n",
    )
    trace = alibaba_trace(pods, nodes, gpu_as="dra")
    # the trace names no controllers, and CA does not evict a pod without one (NotReplicated):
    # give them a Job, as a manifest trace's pods have
    job = OwnerReference(api_version="batch/v1", kind="Job", name="j", uid="j", controller=True)
    owned = [
        attrs.evolve(tp, pod=attrs.evolve(tp.pod, owner_references=(job,))) for tp in trace.arrivals
    ]
    trace = attrs.evolve(trace, arrivals=tuple(owned))
    groups = parse_node_groups(GPU_GROUPS, "groups.yaml")
    r = Replay(trace, groups, gpu_driver=GPU_DRIVER)
    m = r.run()
    ups = [(e.time, e.nodes) for e in m.events if e.kind == "scale-up"]
    downs = [(e.time, e.nodes, e.pods) for e in m.events if e.kind == "scale-down"]
    assert ups == [(10.0, ("gpu-0",))]
    assert downs == [(700.0, ("gpu-0",), ("default/c",))]
    assert m.evicted == 1 and r.bound == {"default/c": "node-a"}
    [claim] = r.snapshot.dra_snapshot.list_resource_claims()
    assert claim.owner_references[0].name == "c"
    assert claim.status.allocation is not None
    assert [res.pool for res in claim.status.allocation.results] == ["node-a"]
    assert max(s.gpu_allocatable for s in m.samples) == 6  # node-a's 2 + the new node's 4


@pytest.mark.parametrize(
    ("pods", "nodes", "message"),
    [
        (
            PODS_CSV.replace("500,900,510", "500,450,510"),
            NODES_CSV,
            "pods.csv:2: deletion_time 450 is before scheduled_time 510 (a completion before "
            "the arrival)",
        ),
        (
            PODS_CSV.replace("200,260,", "200,150,"),
            NODES_CSV,
            "pods.csv:4: deletion_time 150 is before creation_time 200 (a completion before "
            "the arrival)",
        ),
        (
            PODS_CSV.replace("500,900,510", "500,900,490"),
            NODES_CSV,
            "pods.csv:2: scheduled_time 490 is before creation_time 500",
        ),
        (
            PODS_CSV.replace("p-late,4000", "p-late,-4000"),
            NODES_CSV,
            "pods.csv:2: cpu_milli: must be a number >= 0, got '-4000'",
        ),
        (
            PODS_CSV.replace("scheduled_time", "scheduled_time,extra").replace("510\n", "510,1\n"),
            NODES_CSV,
            "pods.csv:1: unknown column(s) extra",
        ),
        (
            PODS_CSV.replace(",gpu_milli", ""),
            NODES_CSV,
            "pods.csv:1: missing column(s) gpu_milli",
        ),
        (
            PODS_CSV,
            NODES_CSV.replace("V100M32", "T4"),
            "pods.csv:5: gpu_spec: no node of the node list has model(s) V100M32, V100M16",
        ),
        (
            PODS_CSV.replace("p-never", "p-late"),
            NODES_CSV,
            "pods.csv:4: name: duplicate pod 'p-late' (first on line 2)",
        ),
        (
            PODS_CSV,
            NODES_CSV.replace("node-b", "node-a"),
            "nodes.csv:3: sn: duplicate node 'node-a' (first on line 2)",
        ),
        (PODS_CSV, NODES_CSV.replace("8,V100M32", "8,"), "nodes.csv:2: model: required"),
        # NaN and infinity are not numbers >= 0 (docs/replay.md), in every numeric column
        # of both files, required or optional; an empty cell is what a missing value is
        (
            PODS_CSV.replace("p-late,4000,", "p-late,nan,"),
            NODES_CSV,
            "pods.csv:2: cpu_milli: must be a number >= 0, got 'nan'",
        ),
        (
            PODS_CSV.replace("p-late,4000,", "p-late,,"),
            NODES_CSV,
            "pods.csv:2: cpu_milli: required",
        ),
        *(
            (
                PODS_CSV.replace("p-first,1000,2048,1,460,", f"p-first,1000,2048,1,{v},"),
                NODES_CSV,
                f"pods.csv:3: gpu_milli: must be a number >= 0, got '{v}'",
            )
            for v in ("nan", "NaN", "inf", "-inf", "Infinity")
        ),
        (
            PODS_CSV.replace("p-first,1000,2048,1,", "p-first,1000,2048,nan,"),
            NODES_CSV,
            "pods.csv:3: num_gpu: must be a number >= 0, got 'nan'",
        ),
        (
            PODS_CSV.replace("p-first,1000,2048,1,", "p-first,1000,NaN,1,"),
            NODES_CSV,
            "pods.csv:3: memory_mib: must be a number >= 0, got 'NaN'",
        ),
        (
            PODS_CSV.replace("500,900,510", "nan,900,510"),
            NODES_CSV,
            "pods.csv:2: creation_time: must be a number >= 0, got 'nan'",
        ),
        (
            PODS_CSV.replace("500,900,510", "500,nan,510"),
            NODES_CSV,
            "pods.csv:2: deletion_time: must be a number >= 0, got 'nan'",
        ),
        (
            PODS_CSV.replace("500,900,510", "500,900,inf"),
            NODES_CSV,
            "pods.csv:2: scheduled_time: must be a number >= 0, got 'inf'",
        ),
        *(
            (
                PODS_CSV,
                NODES_CSV.replace(f"node-b,{row}", f"node-b,{bad}"),
                f"nodes.csv:3: {column}: must be a number >= 0, got '{value}'",
            )
            for row, bad, column, value in (
                ("16000,", "nan,", "cpu_milli", "nan"),
                ("16000,65536,", "16000,inf,", "memory_mib", "inf"),
                ("16000,65536,0,", "16000,65536,NaN,", "gpu", "NaN"),
            )
        ),
        (
            PODS_CSV.replace(",1000,,LS,Running,500", ",abc,,LS,Running,500"),
            NODES_CSV,
            "pods.csv:2: gpu_milli: expected a number, got 'abc'",
        ),
        (
            PODS_CSV,
            NODES_CSV.replace("node-b", "Node_B"),
            "nodes.csv:3: sn: invalid node name 'Node_B': a lowercase RFC 1123 subdomain must "
            "consist of lower case alphanumeric characters, '-' or '.'",
        ),
        (
            PODS_CSV,
            NODES_CSV.replace("node-b", "n" * 64),
            f"nodes.csv:3: sn: invalid node name '{'n' * 64}': as the kubernetes.io/hostname "
            "label value: must be no more than 63 characters",
        ),
        (
            PODS_CSV.replace("V100M32|", "V100 32GB|"),
            NODES_CSV.replace("V100M32", "V100 32GB"),
            "nodes.csv:2: model: invalid value 'V100 32GB' for the label alibaba.com/gpu-model: "
            "a valid label must be an empty string or consist of alphanumeric characters",
        ),
        (
            PODS_CSV.replace("p-never", "p never"),
            NODES_CSV,
            "pods.csv:4: name: invalid pod name 'p never': a lowercase RFC 1123 subdomain",
        ),
    ],
)
def test_alibaba_bad_input(tmp_path: Path, pods: str, nodes: str, message: str) -> None:
    """Bad rows are refused with the file and line number, never skipped. Names follow the
    API server's checks and words (apimachinery ``IsDNS1123Subdomain`` for node and pod
    names, ``IsValidLabelValue`` for label values)."""
    p, n = _write(tmp_path, pods, nodes)
    with pytest.raises(TraceError) as e:
        alibaba_trace(p, n)
    assert str(e.value).startswith(str(tmp_path) + "/")
    assert message in str(e.value)


def test_node_fragmentation_follows_fgd() -> None:
    """FGD (Weng et al., ATC '23, section 3): a class that cannot run on the node, or asks for
    no GPU, sees every free GPU as a fragment; one that fits sees none (whole GPUs)."""
    classes = [
        TaskClass(1000, 1, 1, 0.5),  # fits: no fragment
        TaskClass(1000, 1, 4, 0.25),  # needs 4 GPUs, 2 free: both are fragments
        TaskClass(1000, 1, 0, 0.25),  # CPU only: the free GPUs are fragments to it
    ]
    assert node_fragmentation(8000, 2**30, 2, classes) == pytest.approx(1.0)
    assert node_fragmentation(500, 2**30, 2, classes) == pytest.approx(2.0)  # no cpu left
    assert node_fragmentation(8000, 2**30, 0, classes) == 0.0


def test_percentile_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0 and percentile(values, 99) == 99.0
    assert percentile([], 90) == 0.0


REAL = os.environ.get("SCHEDSIM_ALIBABA_TRACE")


@pytest.mark.skipif(
    not REAL,
    reason="set SCHEDSIM_ALIBABA_TRACE to a cluster-trace-gpu-v2023/csv directory (with "
    "openb_pod_list_default.csv and openb_node_list_gpu_node.csv) to replay a slice of it",
)
def test_real_alibaba_slice(tmp_path: Path) -> None:
    """The first 400 pods of the real trace on its GPU nodes: read without error and every
    pod is accounted for (scheduled, or pending with a reason)."""
    assert REAL is not None
    src = Path(REAL)
    lines = (src / "openb_pod_list_default.csv").read_text().splitlines()[:401]
    pods = tmp_path / "pods.csv"
    pods.write_text("\n".join(lines) + "\n")
    trace = alibaba_trace(str(pods), str(src / "openb_node_list_gpu_node.csv"))
    assert len(trace.arrivals) == 400
    m = Replay(trace).run()
    assert m.arrivals == 400
    assert len(m.latencies) + len(m.unschedulable) >= 400 - m.completed
    assert m.samples[-1].gpu_allocatable > 0


MULTIGPU_CSV = """\
name,cpu_milli,memory_mib,num_gpu,gpu_milli
p-b,4000,8192,2,1000
p-a,1000,2048,1,460
p-c,1000,2048,0,0
"""


def test_alibaba_five_column_pod_list(tmp_path: Path) -> None:
    """The multigpu* lists have only name,cpu_milli,memory_mib,num_gpu,gpu_milli: the FGD
    artifact's converter (data/pod_csv_to_yaml.py) reads such a row as a pod without a model
    constraint and without times, so every pod arrives at t = 0, in file order, and never
    completes."""
    p, n = _write(tmp_path, MULTIGPU_CSV)
    trace = alibaba_trace(p, n, gpu_as="dra", gpu_share=True)
    got = [(tp.pod.name, tp.arrival, tp.duration, tp.gpus) for tp in trace.arrivals]
    assert got == [("p-b", 0.0, None, 2), ("p-a", 0.0, None, 1), ("p-c", 0.0, None, 0)]
    assert all(tp.pod.affinity is None for tp in trace.arrivals)
    pods, warnings = read_pods(p, gpu_as="extended-resource")
    assert [tp.pod.name for tp in pods] == ["p-b", "p-a", "p-c"]
    assert warnings == [
        f"{p}: 1 GPU-sharing pod(s) (gpu_milli < 1000) take a whole GPU: nvidia.com/gpu is an "
        "extended resource, which cannot be shared"
    ]


def test_read_pods_without_node_list(tmp_path: Path) -> None:
    """Without a node list any gpu_spec is accepted."""
    p, _ = _write(tmp_path)
    pods, _ = read_pods(p)
    assert len(pods) == 4
