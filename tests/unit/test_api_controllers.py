"""Workload controllers to pods (`schedsim.api.apps.controllers`) and the API server's defaults
(`schedsim.api.loading.defaults`), checked against the controllers' and admission plugins'
documented and tested behaviour (each test names its source)."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from schedsim.api.apps.controllers import (
    DAEMON_SET_TOLERATIONS,
    POD_TEMPLATE_HASH_LABEL,
    compute_hash,
    daemon_set_pod,
    daemon_set_should_run,
    fnv32a,
)
from schedsim.api.core import (
    NodeSelectorRequirement,
    NodeSelectorTerm,
    OwnerReference,
    Pod,
    Toleration,
)
from schedsim.api.errors import ManifestError
from schedsim.api.loading.defaults import default_pod, generate_name, safe_encode_string
from schedsim.api.loading.loader import Manifests, load_text

SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]"

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {disk: ssd}}
status: {allocatable: {cpu: "8", pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
spec: {unschedulable: true}
status: {allocatable: {cpu: "8", pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: cp}
spec:
  taints: [{key: node-role.kubernetes.io/control-plane, effect: NoSchedule}]
status: {allocatable: {cpu: "8", pods: "110"}}
"""


def _workload(kind: str, name: str, spec: str, api: str = "apps/v1", ns: str = "default") -> str:
    return (
        f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: {name}, namespace: {ns}}}\n"
        f"spec:\n{spec}"
    )


DEPLOY = _workload(
    "Deployment",
    "frontend",
    """\
  replicas: 3
  selector: {matchLabels: {app: frontend}}
  template:
    metadata: {labels: {app: frontend}, annotations: {a: b}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: 500m}}}]
""",
)


def _load(*docs: str, expand: bool = True) -> Manifests:
    return load_text("---\n".join(docs), "f.yaml", expand_workloads=expand)


def _controller(pod: Pod) -> OwnerReference:
    (ref,) = [r for r in pod.owner_references if r.controller]
    return ref


# --------------------------------------------------------------------------- names and hashes


def test_fnv32a_matches_the_reference_vectors() -> None:
    """FNV-1a 32-bit test vectors (Go hash/fnv tests: "" -> 0x811c9dc5, "a" -> 0xe40c292c,
    "foobar" -> 0xbf9cf968)."""
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert fnv32a(b"foobar") == 0xBF9CF968


def test_safe_encode_string_maps_bytes_onto_the_no_vowel_alphabet() -> None:
    """rand.SafeEncodeString: alphanums[b % 27] per byte; ComputeHash applies it to the
    decimal digits of the fnv32a sum, so hashes use digits' images only."""
    assert safe_encode_string("0123456789") == "456789bcdf"
    h = compute_hash({"spec": {}})
    assert h == safe_encode_string(str(fnv32a(b'{"spec":{}}')))
    assert compute_hash({"spec": {}}, collision_count=1) != h


def test_generated_names_are_deterministic_and_capped() -> None:
    """SimpleNameGenerator: base cut to 63-5 characters plus 5 random alphanumerics; here
    the suffix comes from a seed, so the same input gives the same names."""
    assert generate_name("web-", "s") == generate_name("web-", "s")
    assert generate_name("web-", "s") != generate_name("web-", "t")
    assert re.fullmatch(f"web-{SUFFIX}{{5}}", generate_name("web-", "s"))
    long = generate_name("x" * 80, "s")
    assert len(long) == 63 and long.startswith("x" * 58)


# --------------------------------------------------------------------------- Deployment


def test_deployment_makes_its_replicaset_and_pods() -> None:
    """Deployment controller getNewReplicaSet: RS ``<deployment>-<pod-template-hash>``
    controlled by the Deployment, template and selector labelled with the hash; the
    ReplicaSet's pods are ``<rs>-<5 chars>`` with the template's labels and annotations and a
    controller ownerReference to the RS."""
    m = _load(NODES, DEPLOY)
    (rs,) = m.replica_sets
    h = rs.labels[POD_TEMPLATE_HASH_LABEL]
    assert rs.name == f"frontend-{h}"
    assert _controller_of(rs.owner_references) == ("Deployment", "frontend")
    assert rs.selector.match_labels == {"app": "frontend", POD_TEMPLATE_HASH_LABEL: h}
    assert len(m.pods) == 3
    for pod in m.pods:
        assert re.fullmatch(f"frontend-{h}-{SUFFIX}{{5}}", pod.name)
        assert pod.labels == {"app": "frontend", POD_TEMPLATE_HASH_LABEL: h}
        assert pod.annotations == {"a": "b"}
        ref = _controller(pod)
        assert (ref.kind, ref.name, ref.uid, ref.api_version) == (
            "ReplicaSet",
            rs.name,
            rs.uid,
            "apps/v1",
        )
        assert pod.containers[0].requests == {"cpu": Fraction(1, 2)}
        assert m.source_of(pod) == "f.yaml"
    assert len({p.name for p in m.pods}) == 3
    assert [p.name for p in _load(NODES, DEPLOY).pods] == [p.name for p in m.pods]


def _controller_of(refs: tuple[OwnerReference, ...]) -> tuple[str, str]:
    (ref,) = [r for r in refs if r.controller]
    return ref.kind, ref.name


def test_pods_already_in_the_input_count_against_replicas() -> None:
    """A controller creates replicas - (active pods it controls): a running pod owned by the
    Deployment's ReplicaSet (from ``kubectl get -o yaml``) is not duplicated; a Succeeded
    one does not count (FilterActivePods)."""
    m0 = _load(NODES, DEPLOY)
    rs = m0.replica_sets[0]
    owned = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  labels: {{app: frontend}}\n"
        "  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: " + rs.name + ", "
        "uid: " + rs.uid + ", controller: true}}]\n"
        "spec: {{nodeName: n1, containers: [{{name: c}}]}}\n"
        "status: {{phase: {phase}}}\n"
    )
    m = _load(
        NODES,
        DEPLOY,
        owned.format(name="old-1", phase="Running"),
        owned.format(name="old-2", phase="Succeeded"),
    )
    created = [p for p in m.pods if p.name.startswith(rs.name)]
    assert len(created) == 2


def test_deployment_fills_its_newest_replicaset_from_the_input() -> None:
    """With the Deployment's ReplicaSets in the input, missing pods go to the newest one
    (highest deployment.kubernetes.io/revision) and no new ReplicaSet is made."""
    rs = (
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: frontend-{h}\n"
        "  annotations: {{deployment.kubernetes.io/revision: '{rev}'}}\n"
        "  ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: frontend, "
        "uid: x, controller: true}}]\nspec:\n  replicas: {n}\n"
        "  selector: {{matchLabels: {{app: frontend, pod-template-hash: '{h}'}}}}\n"
        "  template:\n    metadata: {{labels: {{app: frontend, pod-template-hash: '{h}'}}}}\n"
        "    spec: {{containers: [{{name: c}}]}}\n"
    )
    m = _load(NODES, DEPLOY, rs.format(h="old", rev=1, n=0), rs.format(h="new", rev=2, n=3))
    assert [r.name for r in m.replica_sets] == ["frontend-old", "frontend-new"]
    assert len(m.pods) == 3
    assert all(_controller(p).name == "frontend-new" for p in m.pods)


def test_expansion_can_be_turned_off() -> None:
    """``expand_workloads=False`` (CLI ``--no-expand-workloads``): controllers are kept as
    objects, no pods are made."""
    m = _load(NODES, DEPLOY, expand=False)
    assert m.pods == [] and m.replica_sets == [] and len(m.deployments) == 1


# --------------------------------------------------------------------------- StatefulSet


SS = _workload(
    "StatefulSet",
    "web",
    """\
  serviceName: web
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c}]
      volumes: [{name: data, emptyDir: {}}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {storageClassName: fast, accessModes: [ReadWriteOnce]}
""",
)


def test_statefulset_pods_have_ordinal_names_and_claims() -> None:
    """StatefulSet controller newStatefulSetPod / getPersistentVolumeClaims: pods
    ``<set>-<ordinal>`` labelled with their name and index; each claim template becomes the
    pod's volume of that name (replacing the template's), backed by the pending claim
    ``<template>-<set>-<ordinal>``."""
    m = _load(NODES, SS)
    assert [p.name for p in m.pods] == ["web-0", "web-1"]
    web1 = m.pods[1]
    assert web1.labels["statefulset.kubernetes.io/pod-name"] == "web-1"
    assert web1.labels["apps.kubernetes.io/pod-index"] == "1"
    assert [(v.name, v.persistent_volume_claim) for v in web1.volumes] == [("data", "data-web-1")]
    assert _controller_of(web1.owner_references) == ("StatefulSet", "web")
    claims = [(c.name, c.storage_class_name, c.volume_name) for c in m.persistent_volume_claims]
    assert claims == [("data-web-0", "fast", ""), ("data-web-1", "fast", "")]


def test_statefulset_ordinals_start_and_existing_pods() -> None:
    """spec.ordinals.start shifts the ordinals (StatefulSetStartOrdinal, GA 1.31); a pod the
    set already controls is not created again."""
    spec = SS.replace("replicas: 2", "replicas: 2\n  ordinals: {start: 5}")
    existing = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-5\n"
        "  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: web, uid: u, "
        "controller: true}]\nspec: {nodeName: n1, containers: [{name: c}]}\n"
    )
    m = _load(NODES, spec, existing)
    assert [p.name for p in m.pods] == ["web-5", "web-6"]


# --------------------------------------------------------------------------- DaemonSet


DS = _workload(
    "DaemonSet",
    "agent",
    """\
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: 100m}}}]
""",
    ns="kube-system",
)


def test_daemonset_runs_one_pod_per_node_it_targets() -> None:
    """NodeShouldRunDaemonPod: the cordoned node still gets a pod (the controller's pods
    tolerate node.kubernetes.io/unschedulable); the control-plane node's NoSchedule taint is
    not tolerated, so it gets none. Each pod's required node affinity is the single term
    ``matchFields metadata.name In [node]`` (ReplaceDaemonSetPodNodeNameNodeAffinity) and it
    is pending, for the scheduler to place."""
    m = _load(NODES, DS)
    assert len(m.pods) == 2
    nodes = []
    for pod in m.pods:
        assert pod.node_name == ""
        assert pod.affinity is not None and pod.affinity.node_affinity is not None
        (term,) = pod.affinity.node_affinity.required or ()
        (req,) = term.match_fields
        assert (req.key, req.operator) == ("metadata.name", "In")
        nodes.append(req.values[0])
        assert _controller_of(pod.owner_references) == ("DaemonSet", "agent")
    assert nodes == ["n1", "n2"]


def test_daemonset_pod_tolerations_are_the_controllers() -> None:
    """AddOrUpdateDaemonPodTolerations: not-ready and unreachable (NoExecute), disk-,
    memory-, pid-pressure and unschedulable (NoSchedule), network-unavailable only for
    hostNetwork pods; an equal toleration in the template is updated in place, not
    duplicated. DefaultTolerationSeconds then adds nothing (not-ready and unreachable are
    tolerated already)."""
    m = _load(NODES, DS)
    pod = m.pods[0]
    assert pod.tolerations == DAEMON_SET_TOLERATIONS
    host = DS.replace("containers:", "hostNetwork: true\n      containers:")
    host = host.replace(
        "containers: [",
        "tolerations: [{key: node.kubernetes.io/pid-pressure, "
        "operator: Exists, effect: NoSchedule}]\n      containers: [",
    )
    (ds,) = _load(NODES, host, expand=False).daemon_sets
    pod = daemon_set_pod(ds, "n1")
    keys = [t.key for t in pod.tolerations]
    assert keys[0] == "node.kubernetes.io/pid-pressure"
    assert keys.count("node.kubernetes.io/pid-pressure") == 1
    assert keys[-1] == "node.kubernetes.io/network-unavailable"
    assert len(keys) == 7


def test_daemonset_respects_node_selector_and_keeps_preferred_affinity() -> None:
    """The template's nodeSelector limits the nodes (GetRequiredNodeAffinity); the pod's
    preferred node affinity is kept when the required part is replaced."""
    spec = DS.replace(
        "containers:",
        "nodeSelector: {disk: ssd}\n      affinity:\n        nodeAffinity:\n"
        "          preferredDuringSchedulingIgnoredDuringExecution:\n"
        "          - weight: 5\n            preference:\n"
        "              matchExpressions: [{key: disk, operator: In, values: [ssd]}]\n"
        "      containers:",
    )
    m = _load(NODES, spec)
    (pod,) = m.pods
    assert pod.affinity is not None and pod.affinity.node_affinity is not None
    assert pod.affinity.node_affinity.required == (
        NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", ("n1",)),)),
    )
    assert [p.weight for p in pod.affinity.node_affinity.preferred] == [5]
    (ds,) = _load(NODES, spec, expand=False).daemon_sets
    assert [daemon_set_should_run(ds, n) for n in m.nodes] == [True, False, False]


def test_daemonset_pod_on_node_is_not_duplicated() -> None:
    """A DaemonSet pod already bound to a node covers that node."""
    existing = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: agent-abcde\n  namespace: kube-system\n"
        "  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u, "
        "controller: true}]\nspec: {nodeName: n2, containers: [{name: c}]}\n"
    )
    m = _load(NODES, DS, existing)
    assert sorted(p.node_name or "pending" for p in m.pods) == ["n2", "pending"]


# --------------------------------------------------------------------------- Job


JOB = _workload(
    "Job",
    "batch",
    """\
  parallelism: 2
  completions: 5
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c}]
""",
    api="batch/v1",
)


def test_job_runs_min_of_parallelism_and_remaining_completions() -> None:
    """Job controller manageJob: wantActive = min(parallelism, completions - succeeded);
    pods ``<job>-<5 chars>`` controlled by the Job."""
    m = _load(NODES, JOB)
    assert len(m.pods) == 2
    assert all(re.fullmatch(f"batch-{SUFFIX}{{5}}", p.name) for p in m.pods)
    assert all(_controller_of(p.owner_references) == ("Job", "batch") for p in m.pods)
    done = _load(NODES, JOB + "status: {succeeded: 4}\n")
    assert len(done.pods) == 1


def test_indexed_job_pods_carry_their_completion_index() -> None:
    """Indexed completion mode: pod names ``<job>-<index>-<5 chars>``, the
    batch.kubernetes.io/job-completion-index annotation and label, lowest indexes first."""
    m = _load(NODES, JOB.replace("completions: 5", "completions: 5\n  completionMode: Indexed"))
    assert [p.annotations["batch.kubernetes.io/job-completion-index"] for p in m.pods] == ["0", "1"]
    assert re.fullmatch(f"batch-1-{SUFFIX}{{5}}", m.pods[1].name)


def test_replication_controller_and_standalone_replicaset() -> None:
    """ReplicaSet and ReplicationController controllers: ``replicas`` pods ``<owner>-<5>``."""
    rc = _workload(
        "ReplicationController",
        "legacy",
        "  replicas: 2\n  template:\n    metadata: {labels: {app: l}}\n"
        "    spec: {containers: [{name: c}]}\n",
        api="v1",
    )
    rs = _workload(
        "ReplicaSet",
        "solo",
        "  replicas: 1\n  selector: {matchLabels: {app: s}}\n  template:\n"
        "    metadata: {labels: {app: s}}\n    spec: {containers: [{name: c}]}\n",
    )
    m = _load(NODES, rc, rs)
    owners = sorted(_controller_of(p.owner_references) for p in m.pods)
    assert owners == [
        ("ReplicaSet", "solo"),
        ("ReplicationController", "legacy"),
        ("ReplicationController", "legacy"),
    ]


# --------------------------------------------------------------------------- defaults


def test_generate_name_gets_a_deterministic_name() -> None:
    """metadata.generateName without a name: the API server appends 5 random characters;
    here they are derived from the file and position, so reruns agree."""
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {generateName: debug-}\n"
        "spec: {containers: [{name: c}]}\n"
    )
    a, b = _load(pod, pod).pods
    assert re.fullmatch(f"debug-{SUFFIX}{{5}}", a.name) and a.name != b.name
    assert [p.name for p in _load(pod, pod).pods] == [a.name, b.name]


@pytest.mark.parametrize(
    ("given", "added"),
    [
        pytest.param(
            (), ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"], id="none"
        ),
        pytest.param(
            (
                Toleration(
                    key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute"
                ),
            ),
            ["node.kubernetes.io/unreachable"],
            id="not-ready tolerated",
        ),
        pytest.param((Toleration(operator="Exists"),), [], id="tolerates everything"),
        pytest.param(
            (
                Toleration(
                    key="node.kubernetes.io/unreachable", operator="Exists", effect="NoSchedule"
                ),
            ),
            ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"],
            id="other effect does not count",
        ),
    ],
)
def test_default_toleration_seconds(given: tuple[Toleration, ...], added: list[str]) -> None:
    """DefaultTolerationSeconds admission (its TestForgivenessAdmission cases): not-ready and
    unreachable NoExecute tolerations, operator Exists, tolerationSeconds 300, unless a
    toleration with that key (or none) and effect NoExecute (or none) is there."""
    pod = default_pod(Pod(name="p", tolerations=given))
    new = pod.tolerations[len(given) :]
    assert [t.key for t in new] == added
    assert all(
        (t.operator, t.effect, t.toleration_seconds) == ("Exists", "NoExecute", 300) for t in new
    )


def test_node_allocatable_defaults_to_capacity_and_excess_is_warned() -> None:
    """SetDefaults_NodeStatus: allocatable absent -> capacity. Allocatable above capacity is
    kept (scheduling uses it) and warned about."""
    text = """\
apiVersion: v1
kind: Node
metadata: {name: a}
status: {capacity: {cpu: "4", pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: b}
status: {capacity: {cpu: "4"}, allocatable: {cpu: "6"}}
"""
    m = _load(text)
    assert m.nodes[0].allocatable == {"cpu": 4, "pods": 110}
    assert m.warnings == [
        "f.yaml: Node b: status.allocatable[cpu]: 6 exceeds status.capacity[cpu] 4; scheduling "
        "uses allocatable"
    ]


def test_expansion_past_the_limit_is_refused_before_anything_is_made() -> None:
    """`replicas: 1000000000` used to fill memory for minutes; it is refused at once, naming
    the file, the object and the field, with the way out (--no-expand-workloads)."""
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1000000000
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
"""
    with pytest.raises(ManifestError) as info:
        load_text(text, "huge.yaml")
    assert str(info.value).startswith(
        "huge.yaml: Deployment default/web: spec.replicas: 1000000000 pods would take the "
        "input past schedsim's limit of 1,000,000 pods"
    )
