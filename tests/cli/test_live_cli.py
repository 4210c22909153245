"""Issue 28: ``--kubeconfig FILE`` reads a live cluster, read-only, through the official
``kubernetes`` client, for simulate, scale-up and scale-down. The tests run the real client
against `live_server.RecordedServer` on 127.0.0.1 (started and stopped by each test): the
recorded answers of a 1.34 kind cluster (the objects of tests/cli/data/kubectl-get-all.yaml),
its aggregated discovery documents, pages joined by ``continue``, and a list RBAC forbids."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.cli import main

sys.path.insert(0, str(Path(__file__).parent))
from live_server import TOKEN, kubeconfig, recorded, serving

DUMP = Path(__file__).parent / "data" / "kubectl-get-all.yaml"
NODE_GROUPS = """\
nodeGroups:
- name: workers
  minSize: 1
  maxSize: 4
  nodes: [kind-worker, kind-worker2]
  template:
    node:
      metadata: {name: workers-template, labels: {kubernetes.io/os: linux}}
      status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
"""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    groups = tmp_path / "groups.yaml"
    groups.write_text(NODE_GROUPS)
    return {
        "simulate": ["simulate", "-o", "json"],
        "scale-up": ["scale-up", "--node-groups", str(groups), "-o", "json"],
        "scale-down": ["scale-down", "-o", "json"],
    }


FORBIDDEN = (
    "CSIStorageCapacity not read: 403 csistoragecapacities.storage.k8s.io is forbidden: User "
    '"system:serviceaccount:tools:schedsim-reader" cannot list resource "csistoragecapacities" '
    'in API group "storage.k8s.io" at the cluster scope'
)


@pytest.mark.parametrize("command", ["simulate", "scale-up", "scale-down"])
def test_a_live_read_answers_as_the_dump_does_and_save_reruns_byte_identical(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    """The live cluster is the dump's cluster: the same JSON answer. The one forbidden list
    is a warning naming the kind, the server and the server's message; every request is a
    GET; the pods came in three pages. ``--save`` writes one List that, run offline, gives
    byte-identical output; no credential is printed or saved."""
    argv = _commands(tmp_path)[command]
    saved = tmp_path / "cluster.json"
    with serving() as server:
        config = kubeconfig(tmp_path / "kubeconfig", server.url)
        code, live, err = _run(capsys, *argv, "--kubeconfig", str(config), "--save", str(saved))
        url = server.url
        requests = list(server.requests)
    assert code == 0, err
    assert err == f"warning: <cluster kind-kind at {url}>: {FORBIDDEN}\n"
    assert {method for method, _ in requests} == {"GET"}
    pods = [target for _, target in requests if target.startswith("/api/v1/pods")]
    assert pods == [
        "/api/v1/pods?limit=500",
        "/api/v1/pods?limit=500&continue=4",
        "/api/v1/pods?limit=500&continue=8",
    ]
    code, offline, err = _run(capsys, *argv, str(saved))
    assert (code, err) == (0, "")
    assert offline == live
    code, from_dump, _ = _run(capsys, *argv, str(DUMP))
    assert from_dump == live
    text = saved.read_text()
    assert TOKEN not in text and TOKEN not in live
    doc = json.loads(text)
    assert (doc["apiVersion"], doc["kind"], len(doc["items"])) == ("v1", "List", 30)
    assert doc["items"][0]["apiVersion"] == "v1" and doc["items"][0]["kind"] == "Node"


def test_save_as_yaml_reruns_the_same(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    saved = tmp_path / "cluster.yaml"
    with serving() as server:
        config = kubeconfig(tmp_path / "kubeconfig", server.url)
        code, live, _ = _run(
            capsys, "simulate", "-o", "json", "--kubeconfig", str(config), "--save", str(saved)
        )
    assert code == 0
    assert yaml.safe_load(saved.read_text())["kind"] == "List"
    assert _run(capsys, "simulate", "-o", "json", str(saved))[1] == live


def test_a_server_that_is_down_is_an_error_naming_context_and_server(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = kubeconfig(tmp_path / "kubeconfig", f"http://127.0.0.1:{port}")
    saved = tmp_path / "cluster.json"
    code, out, err = _run(capsys, "simulate", "--kubeconfig", str(config), "--save", str(saved))
    assert (code, out) == (2, "")
    assert err == (
        f"schedsim: error: <cluster kind-kind at http://127.0.0.1:{port}>: cannot reach the "
        "server: connection refused\n"
    )
    assert not saved.exists()


def test_a_cluster_without_dra_warns_per_kind_and_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An older cluster's discovery has no resource.k8s.io: each DRA kind is a warning."""
    data = recorded()
    apis = data["discovery"]["/apis"]
    apis["items"] = [g for g in apis["items"] if g["metadata"].get("name") != "resource.k8s.io"]
    with serving(data) as server:
        config = kubeconfig(tmp_path / "kubeconfig", server.url)
        code, out, err = _run(capsys, "simulate", "-o", "json", "--kubeconfig", str(config))
        url = server.url
    assert code == 0, err
    assert (
        f"warning: <cluster kind-kind at {url}>: the server does not serve resource.k8s.io "
        "(v1, v1beta2, v1beta1): DeviceClass, ResourceClaim, ResourceClaimTemplate, "
        "ResourceSlice not read"
    ) in err.splitlines()
    assert json.loads(out)["summary"]["scheduled"] == 1


def test_namespace_and_selector_are_sent_to_the_server(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--namespace shop --selector app=web``: namespaced kinds are listed in shop with the
    selector; nodes and other cluster-scoped kinds are read whole; a warning says other
    namespaces' pods are not read (so the nodes look freer: the web replica now fits)."""
    with serving() as server:
        config = kubeconfig(tmp_path / "kubeconfig", server.url)
        argv = ["simulate", "-o", "json", "--kubeconfig", str(config)]
        code, out, err = _run(capsys, *argv, "--namespace", "shop", "--selector", "app=web")
        requests = [t for _, t in server.requests]
    assert code == 0, err
    assert "/api/v1/namespaces/shop/pods?limit=500&labelSelector=app%3Dweb" in requests
    assert "/api/v1/nodes?limit=500" in requests
    assert "warning: --namespace shop: pods of other namespaces are not read" in err
    doc: dict[str, Any] = json.loads(out)
    assert [p["name"] for p in doc["pods"]] == ["web-7c5ddbdf54-x2lmb"]
    assert doc["summary"]["preempted"] == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--context", "nope"],
            "kubeconfig {config}: no context 'nope' (contexts: kind-kind, other)",
        ),
    ],
)
def test_kubeconfig_errors_name_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, extra: list[str], message: str
) -> None:
    config = kubeconfig(tmp_path / "kubeconfig", "http://127.0.0.1:9")
    code, out, err = _run(capsys, "simulate", "--kubeconfig", str(config), *extra)
    assert (code, out) == (2, "")
    assert err == f"schedsim: error: {message.format(config=config)}\n"


def test_a_missing_kubeconfig_and_wrong_credentials(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "nope"
    code, _, err = _run(capsys, "scale-down", "--kubeconfig", str(missing))
    assert (code, err) == (2, f"schedsim: error: kubeconfig {missing}: no such file\n")
    with serving() as server:
        config = kubeconfig(tmp_path / "kubeconfig", server.url)
        config.write_text(config.read_text().replace(TOKEN, "wrong-token"))
        code, _, err = _run(capsys, "simulate", "--kubeconfig", str(config), "--context", "other")
        url = server.url
    assert code == 2
    assert err == (
        f"schedsim: error: <cluster other at {url}>: discovery /api: 401 Unauthorized: the "
        "server did not accept the kubeconfig's credentials\n"
    )
    assert "wrong-token" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--context", "x"], "--context reads a live cluster: give --kubeconfig FILE too"),
        (["-A"], "-A reads a live cluster: give --kubeconfig FILE too"),
        (["--save", "f.json"], "--save reads a live cluster: give --kubeconfig FILE too"),
        (
            ["--kubeconfig", "k", str(DUMP)],
            "give CLUSTER files or --kubeconfig FILE, not both",
        ),
    ],
)
def test_live_options_misused(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = _run(capsys, "simulate", *argv)
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == f"schedsim: error: {message}"


def test_reading_files_does_not_import_the_kubernetes_client(tmp_path: Path) -> None:
    """The client is imported lazily: ``schedsim simulate FILE`` does not pay for it."""
    out = tmp_path / "out.json"  # never a device: --output-file renames a temporary over it
    code = (
        "import sys\nfrom schedsim.cli import main\n"
        f"main(['simulate', {str(DUMP)!r}, '-o', 'json', '--output-file', {str(out)!r}])\n"
        "print('kubernetes' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip().splitlines()[-1] == "False"
    assert json.loads(out.read_text())["summary"]["scheduled"] == 1


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", "empty: not a kubeconfig (kubectl config view --raw writes one)"),
        ("\n# nothing\n", "empty: not a kubeconfig (kubectl config view --raw writes one)"),
        (
            "[a, b]\n",
            "not a kubeconfig: expected a mapping (kind: Config, with clusters, contexts and "
            "users), got a list (kubectl config view --raw writes one)",
        ),
        ("a: [\n", "not valid YAML"),
        (b"\xff\xfe", "not a UTF-8 text file"),
        (b"\0\0\0\0", "not valid YAML"),  # what /dev/zero reads as
    ],
    ids=["empty", "comment", "list", "bad-yaml", "not-utf8", "nul"],
)
def test_a_kubeconfig_that_is_not_one_says_what_it_is(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str | bytes, problem: str
) -> None:
    """F5: ``--kubeconfig /dev/null`` (or an empty file, or /dev/zero) said "no such file":
    an existing path that is not a kubeconfig says what is wrong with it, as every other
    input does (exit 2, ``kubeconfig FILE: problem``)."""
    config = tmp_path / "kubeconfig"
    if isinstance(content, bytes):
        config.write_bytes(content)
    else:
        config.write_text(content)
    code, out, err = _run(capsys, "simulate", "--kubeconfig", str(config))
    assert (code, out, err) == (2, "", f"schedsim: error: kubeconfig {config}: {problem}\n")


def test_a_kubeconfig_path_that_is_a_directory_or_a_device(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """F5: a directory and ``/dev/null`` were "no such file" too."""
    code, _, err = _run(capsys, "simulate", "--kubeconfig", str(tmp_path))
    assert (code, err) == (
        2,
        f"schedsim: error: kubeconfig {tmp_path}: is a directory (give the kubeconfig file)\n",
    )
    code, _, err = _run(capsys, "simulate", "--kubeconfig", os.devnull)
    assert (code, err) == (
        2,
        f"schedsim: error: kubeconfig {os.devnull}: empty: not a kubeconfig (kubectl config "
        "view --raw writes one)\n",
    )
