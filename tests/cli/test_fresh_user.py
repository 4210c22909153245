"""What a fresh user ran into (issue 15's leftovers): a Node without a pod count, a
concatenated JSON stream, and a Deployment listed with its pods but without its ReplicaSet.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_proc import schedsim_script

from schedsim.api.loading.defaults import NO_PODS_CAPACITY
from schedsim.cli import main

BARE_NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bare"}}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c"}]},
}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_node_without_pods_capacity_gets_one_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """kube-scheduler admits ``allocatable.pods`` pods on a node (NodeResourcesFit: ``Too many
    pods``); kubelets always report it (``maxPods``, 110 by default), so a Node without it
    is hand-written: one warning naming the node, however many pods it rejects, also in
    the JSON."""
    f = tmp_path / "c.json"
    f.write_text(
        json.dumps({"kind": "List", "items": [BARE_NODE, POD, {**POD, "metadata": {"name": "q"}}]})
    )
    code, out, err = _run(capsys, "simulate", str(f), "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert {p["message"] for p in doc["pods"]} == {
        "0/1 nodes are available: 1 Too many pods. no new claims to deallocate, preemption:"
        " 0/1 nodes are available: 1 No"
        " preemption victims found for incoming pod."  # DefaultPreemption: no lower priority
    }
    hint = f"{f}: Node bare: {NO_PODS_CAPACITY}"
    assert err == f"warning: {hint}\n"
    assert doc["warnings"] == [{"message": hint, "object": "Node bare"}]


def test_no_hint_without_pods(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nodes alone (no pod to reject): nothing to say."""
    f = tmp_path / "c.yaml"
    f.write_text(json.dumps(BARE_NODE))
    code, _, err = _run(capsys, "simulate", str(f))
    assert (code, err) == (0, "")


NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "10"}},
}


@pytest.mark.parametrize("separator", ["", "\n", "\n\n  "], ids=["adjacent", "newline", "spaces"])
@pytest.mark.parametrize("source", ["file.json", "file.yaml", "stdin"])
def test_concatenated_json_is_a_stream(source: str, separator: str, tmp_path: Path) -> None:
    """``{...}{...}`` (``kubectl get -o json`` in a loop) is read as a stream of objects, as
    kubectl's ``NewYAMLOrJSONDecoder`` reads input that starts with ``{``; from a .json
    file, another file or stdin."""
    text = separator.join(json.dumps(o) for o in (NODE, POD))
    argv = [schedsim_script(), "simulate", "-o", "json"]
    if source == "stdin":
        argv.append("-")
    else:
        (tmp_path / source).write_text(text)
        argv.append(source)
    proc = subprocess.run(
        argv,
        cwd=tmp_path,
        input=text if source == "stdin" else None,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert [(p["name"], p["node"]) for p in json.loads(proc.stdout)["pods"]] == [("p", "n1")]


def test_broken_json_stream_names_the_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stream whose second object is cut: exit 2, the file and the line/column."""
    f = tmp_path / "c.json"
    f.write_text(json.dumps(NODE) + "\n{")
    code, out, err = _run(capsys, "simulate", str(f))
    assert (code, out) == (2, "")
    assert err == (
        f"schedsim: error: {f}: not valid JSON: line 2, column 2: "
        "Expecting property name enclosed in double quotes\n"
    )


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]}
"""


def _rs_pod(name: str, labels: str = "{app: web, pod-template-hash: 7d9f8b}") -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: shop
  labels: {labels}
  ownerReferences:
  - {{apiVersion: apps/v1, kind: ReplicaSet, name: web-7d9f8b, uid: u1, controller: true}}
spec: {{nodeName: n1, containers: [{{name: c, resources: {{requests: {{cpu: 100m}}}}}}]}}
"""


def test_deployment_pods_without_their_replica_set_are_not_doubled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``kubectl get deploy,pods -o yaml`` lists a Deployment and its pods but not its
    ReplicaSet: the pods a ``web-...`` ReplicaSet controls and the Deployment selects are the
    Deployment's (its controller would not add more), so 3 replicas with 2 running make 1
    pod, with a warning naming the Deployment and the missing ReplicaSet."""
    f = tmp_path / "c.yaml"
    node = "kind: Node\napiVersion: v1\nmetadata: {name: n1}\n"
    node += "status: {allocatable: {cpu: '4', memory: 4Gi, pods: '10'}}\n"
    f.write_text("---\n".join([DEPLOYMENT, _rs_pod("web-7d9f8b-a"), _rs_pod("web-7d9f8b-b"), node]))
    code, out, err = _run(capsys, "simulate", str(f), "-o", "json")
    assert code == 0
    assert len(json.loads(out)["pods"]) == 1  # the third replica
    assert err == (
        f"warning: {f}: Deployment shop/web: 2 pod(s) (e.g. shop/web-7d9f8b-a) are controlled "
        "by ReplicaSet(s) web-7d9f8b that the input does not have; counted as the "
        "Deployment's pods, not created again (add the ReplicaSets to the input to silence "
        "this)\n"
    )


def test_pods_the_deployment_does_not_select_still_count_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``web-...`` ReplicaSet's pods that the Deployment's selector does not match belong to
    something else: the Deployment makes its 3 pods, no warning."""
    f = tmp_path / "c.yaml"
    node = "kind: Node\napiVersion: v1\nmetadata: {name: n1}\n"
    node += "status: {allocatable: {cpu: '4', memory: 4Gi, pods: '10'}}\n"
    f.write_text("---\n".join([DEPLOYMENT, _rs_pod("web-7d9f8b-a", "{app: other}"), node]))
    code, out, err = _run(capsys, "simulate", str(f), "-o", "json")
    assert (code, err) == (0, "")
    assert len(json.loads(out)["pods"]) == 3
