"""``simulate --output kss`` with pods schedsim created from workload controllers.

kube-scheduler-simulator's export (``ResourcesForSnap``) holds pods, not controllers, so the
pods a Deployment, a StatefulSet and a Job created are written as the controllers would have
created them, each with the simulator's full annotation set (keys from
kubernetes-sigs/kube-scheduler-simulator ``simulator/scheduler/plugin/annotation``, values in
``resultstore`` shapes) and ``result-history`` (``storereflector.updateResultHistory``: a JSON
list of one string map per attempt). Importing the export gives the same placements.

The cluster: nodes n1 and n2 (4 cpu, 8Gi each); a Deployment of 2 (500m), a StatefulSet of 2
(250m) with a ``data`` claim template of a dynamically provisioned class, a Job of
parallelism 2 (250m), a bare pod (100m) and a pod of 16 cpu that fits nowhere ("Insufficient
cpu" on both nodes).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from schedsim.api.loading.kss import RESULT_HISTORY_ANNOTATION, SELECTED_NODE_ANNOTATION
from schedsim.cli import main
from schedsim.scheduler.explain import KSS_RESULT_KEYS

P = "kube-scheduler-simulator.sigs.k8s.io/"
# the simulator's annotation keys (annotation.go) plus its history key (storereflector)
UPSTREAM_KEYS = {
    P + k
    for k in (
        "prefilter-result-status",
        "prefilter-result",
        "filter-result",
        "postfilter-result",
        "prescore-result",
        "score-result",
        "finalscore-result",
        "reserve-result",
        "permit-result",
        "permit-result-timeout",
        "prebind-result",
        "bind-result",
        "selected-node",
    )
}

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m}}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: c
        image: postgres
        resources: {requests: {cpu: 250m}}
        volumeMounts: [{name: data, mountPath: /data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: local
      resources: {requests: {storage: 1Gi}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: report, namespace: batch}
spec:
  parallelism: 2
  completions: 4
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: 250m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: bare, namespace: default}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: default}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "16"}}}]
"""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["simulate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(CLUSTER)
    return path


def _placements(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, str | None]:
    code, out, _ = _run(capsys, str(path), "-o", "json")
    assert code == 0
    return {f"{p['namespace']}/{p['name']}": p["node"] for p in json.loads(out)["pods"]}


def _export(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[dict[str, Any], str]:
    code, out, err = _run(capsys, str(path), "-o", "kss")
    assert code == 0
    doc: dict[str, Any] = json.loads(out)
    return doc, err


def test_our_keys_are_the_simulators() -> None:
    assert set(KSS_RESULT_KEYS) == UPSTREAM_KEYS
    assert RESULT_HISTORY_ANNOTATION == P + "result-history"


def test_every_pod_is_written_with_every_annotation(
    capsys: pytest.CaptureFixture[str], cluster: Path
) -> None:
    placed = _placements(capsys, cluster)
    assert len(placed) == 8  # 2 web, 2 db, 2 report, bare, huge
    assert [k for k, node in placed.items() if node is None] == ["default/huge"]
    doc, err = _export(capsys, cluster)
    assert "left out" not in err
    pods = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in doc["pods"]}
    assert set(pods) == set(placed)
    for key, node in placed.items():
        pod = pods[key]
        notes = pod["metadata"]["annotations"]
        assert UPSTREAM_KEYS | {RESULT_HISTORY_ANNOTATION} <= set(notes), key
        assert notes[SELECTED_NODE_ANNOTATION] == (node or "")
        assert pod["spec"].get("nodeName") == node
        history = json.loads(notes[RESULT_HISTORY_ANNOTATION])
        assert isinstance(history, list) and history
        # the last entry is the last attempt: the annotations themselves
        assert {k: notes[k] for k in UPSTREAM_KEYS} == history[-1]
        assert all(isinstance(v, str) for h in history for v in h.values())


def test_annotation_values_have_the_simulators_shapes(
    capsys: pytest.CaptureFixture[str], cluster: Path
) -> None:
    doc, _ = _export(capsys, cluster)
    pods = {p["metadata"]["name"]: p for p in doc["pods"]}
    web = next(p for name, p in pods.items() if name.startswith("web-"))
    notes = {k[len(P) :]: v for k, v in web["metadata"]["annotations"].items() if k.startswith(P)}
    node = notes["selected-node"]
    assert node in ("n1", "n2")
    # node -> plugin -> "passed" (PassedFilterMessage)
    filters = json.loads(notes["filter-result"])
    assert set(filters) == {"n1", "n2"}
    assert filters[node]["NodeResourcesFit"] == "passed"
    # node -> plugin -> decimal string; final = normalized x weight
    scores = json.loads(notes["score-result"])
    final = json.loads(notes["finalscore-result"])
    assert all(isinstance(v, str) and v.lstrip("-").isdigit() for v in scores[node].values())
    assert set(final[node]) == set(scores[node])
    # plugin -> "success" (SuccessMessage)
    assert json.loads(notes["prefilter-result-status"])["NodeResourcesFit"] == "success"
    assert json.loads(notes["reserve-result"]) == {
        "DynamicResources": "success",
        "VolumeBinding": "success",
    }
    assert json.loads(notes["bind-result"]) == {"DefaultBinder": "success"}
    # no claims, no volumes: both PreBind pre-flights said Skip
    assert json.loads(notes["prebind-result"]) == {
        "DynamicResources": "skip",
        "VolumeBinding": "skip",
    }
    assert json.loads(notes["permit-result"]) == {}
    assert json.loads(notes["permit-result-timeout"]) == {}
    assert json.loads(notes["postfilter-result"]) == {}  # a node fitted: PostFilter not run
    # the pod that fits nowhere: every node rejected, PostFilter ran and nominated nothing
    huge = {k[len(P) :]: v for k, v in pods["huge"]["metadata"]["annotations"].items()}
    assert json.loads(huge["filter-result"]) == {
        # plugins their PreFilter skipped did not run (NodeAffinity, NodePorts, ...)
        n: {
            "NodeName": "passed",
            "NodeUnschedulable": "passed",
            "TaintToleration": "passed",
            "NodeResourcesFit": "Insufficient cpu",
        }
        for n in ("n1", "n2")
    }
    assert json.loads(huge["postfilter-result"]) == {"n1": {}, "n2": {}}
    assert huge["selected-node"] == ""
    assert json.loads(huge["bind-result"]) == {}


def test_controller_pods_are_written_as_the_controllers_make_them(
    capsys: pytest.CaptureFixture[str], cluster: Path
) -> None:
    doc, _ = _export(capsys, cluster)
    pods = {p["metadata"]["name"]: p for p in doc["pods"]}
    db0 = pods["db-0"]
    assert db0["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "db-0"
    assert db0["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "db",
            "uid": db0["metadata"]["ownerReferences"][0]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert db0["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}
    ]
    claims = {c["metadata"]["name"] for c in doc["pvcs"]}
    assert claims == {"data-db-0", "data-db-1"}
    web = [p for n, p in pods.items() if n.startswith("web-")]
    assert len(web) == 2
    assert all("pod-template-hash" in p["metadata"]["labels"] for p in web)
    assert {p["metadata"]["ownerReferences"][0]["kind"] for p in web} == {"ReplicaSet"}
    jobs = [p for n, p in pods.items() if n.startswith("report-")]
    assert [p["metadata"]["ownerReferences"][0]["kind"] for p in jobs] == ["Job", "Job"]
    assert all(p["spec"]["restartPolicy"] == "Never" for p in jobs)


def test_importing_the_export_gives_the_same_placements(
    capsys: pytest.CaptureFixture[str], cluster: Path, tmp_path: Path
) -> None:
    placed = _placements(capsys, cluster)
    doc, _ = _export(capsys, cluster)
    after = tmp_path / "after.json"
    after.write_text(json.dumps(doc))
    # every placed pod is bound in the export; the one that fitted nowhere still fits nowhere
    code, out, err = _run(capsys, str(after), "-o", "json")
    assert code == 0, err
    again = json.loads(out)
    assert [f"{p['namespace']}/{p['name']}" for p in again["pods"]] == ["default/huge"]
    assert again["pods"][0]["node"] is None
    # and the bound pods are where the run put them
    code, out, err = _run(capsys, str(after), "-o", "kss")
    assert code == 0, err
    bound = {
        f"{p['metadata']['namespace']}/{p['metadata']['name']}": p["spec"].get("nodeName")
        for p in json.loads(out)["pods"]
    }
    assert bound == placed


def test_a_retried_pod_keeps_every_attempt_in_its_history(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A pod that fits nowhere is retried when an event could help: the preemptor below is
    attempted, nominated after its PostFilter evicts the victim, and placed on its second
    attempt; result-history has both attempts, the first naming the nominated node
    ("preemption victim", the simulator's PostFilterNominatedMessage)."""
    path = tmp_path / "c.yaml"
    path.write_text(
        """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: victim, namespace: default}
spec:
  nodeName: n1
  containers: [{name: c, image: x, resources: {requests: {cpu: 800m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: boss, namespace: default}
spec:
  priorityClassName: high
  containers: [{name: c, image: x, resources: {requests: {cpu: 800m}}}]
"""
    )
    doc, _ = _export(capsys, path)
    pods = {p["metadata"]["name"]: p for p in doc["pods"]}
    assert "victim" not in pods  # deleted by preemption
    notes = pods["boss"]["metadata"]["annotations"]
    history = json.loads(notes[RESULT_HISTORY_ANNOTATION])
    assert len(history) == 2
    assert json.loads(history[0][P + "postfilter-result"]) == {
        "n1": {"DefaultPreemption": "preemption victim"}
    }
    assert history[0][P + "selected-node"] == ""
    assert history[1][P + "selected-node"] == "n1"
    assert notes[SELECTED_NODE_ANNOTATION] == "n1"


def test_past_the_limit_the_per_plugin_results_are_asked_for(
    capsys: pytest.CaptureFixture[str], cluster: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """8 pending pods x 2 nodes past a limit of 4: selected-node only, with a warning that
    says how to get the rest; --explain writes them all."""
    # the module (schedsim.cli re-exports a function of the same name)
    monkeypatch.setattr(sys.modules["schedsim.cli.simulate"], "KSS_EXPLAIN_LIMIT", 4)
    doc, err = _export(capsys, cluster)
    assert "8 pending pods x 2 nodes: the per-plugin result annotations are left out" in (
        " ".join(err.split())
    )
    for pod in doc["pods"]:
        assert set(pod["metadata"]["annotations"]) & UPSTREAM_KEYS == {SELECTED_NODE_ANNOTATION}
    code, out, _ = _run(capsys, str(cluster), "-o", "kss", "--explain")
    assert code == 0
    for pod in json.loads(out)["pods"]:
        assert UPSTREAM_KEYS <= set(pod["metadata"]["annotations"])
