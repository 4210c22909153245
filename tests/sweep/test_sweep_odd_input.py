"""Odd sweep specs (issue 30): a YAML ``true`` is no number, refused as ``FILE: FIELD``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from schedsim.api.errors import ManifestError
from schedsim.sweep import load_spec

HEAD = "cluster: [cluster.yaml]\ncommands: [simulate]\n"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ("maxNodesPerScaleUp: true", "maxNodesPerScaleUp"),
        ("utilizationThreshold: true", "utilizationThreshold"),
        ("gpuUtilizationThreshold: false", "gpuUtilizationThreshold"),
        ("seed: true", "seed"),
        ("scanInterval: true", "scanInterval"),
    ],
)
def test_a_bool_is_not_a_number(sweep_dir: Path, options: str, field: str) -> None:
    """YAML 1.1 ``true`` decodes to a bool, which Python counts as the int 1; the spec's
    numbers must be numbers (a sweep ran with maxNodesPerScaleUp = 1)."""
    (sweep_dir / "sweep.yaml").write_text(HEAD + f"options: {{{options}}}\n")
    with pytest.raises(ManifestError) as e:
        load_spec(str(sweep_dir / "sweep.yaml"))
    assert str(e.value).startswith(f"{sweep_dir / 'sweep.yaml'}: options.{field}: ")
    # the value as YAML spells it, not Python
    assert str(e.value).endswith(("got true", "got false")), str(e.value)


def test_workload_scale_true_is_refused(sweep_dir: Path) -> None:
    (sweep_dir / "sweep.yaml").write_text(HEAD + "axes: {workloadScale: {x: true}}\n")
    # the key in brackets (field.Path.Key), the value as YAML spells it
    want = r"axes\.workloadScale\[x\]: expected a number >= 0, got true$"
    with pytest.raises(ManifestError, match=want):
        load_spec(str(sweep_dir / "sweep.yaml"))


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("prefix", ["", "ray://"])
def test_unreachable_ray_address_fails_at_once(prefix: str) -> None:
    """``--ray 127.0.0.1:PORT`` with nothing listening: ray.init retried for minutes (issue
    30 fresh-user finding); the probe refuses it before ray.init, naming the address."""
    from schedsim.sweep.ray import RayUnavailableError, probe_address

    address = f"{prefix}127.0.0.1:{_closed_port()}"
    with pytest.raises(RayUnavailableError, match=rf"cannot reach Ray at {address}: .*ray start"):
        probe_address(address)


def test_reachable_and_portless_addresses_pass_the_probe() -> None:
    import socket

    from schedsim.sweep.ray import probe_address

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        probe_address(f"127.0.0.1:{s.getsockname()[1]}")
    probe_address("auto")  # left to ray.init


def test_sweep_cli_with_unreachable_ray_exits_2(sweep_dir: Path, capsys: Any) -> None:
    pytest.importorskip("ray")
    import time

    from schedsim.cli import main

    start = time.monotonic()
    code = main(["sweep", str(sweep_dir / "sweep.yaml"), "--ray", f"127.0.0.1:{_closed_port()}"])
    assert code == 2
    assert time.monotonic() - start < 60
    assert "cannot reach Ray at 127.0.0.1:" in capsys.readouterr().err


def test_resume_on_a_file_says_it_is_not_a_directory(sweep_dir: Path, capsys: Any) -> None:
    """``--resume FILE`` where FILE is a regular file: the error said "File exists"."""
    from schedsim.cli import main

    target = sweep_dir / "results.txt"
    target.write_text("x")
    assert main(["sweep", str(sweep_dir / "sweep.yaml"), "--resume", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"--resume {target}: not a directory: give a directory for the results" in err
    assert target.read_text() == "x"  # no input file is ever modified
