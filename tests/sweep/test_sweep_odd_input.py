"""Odd sweep specs (issue 30): a YAML ``true`` is no number, refused as ``FILE: FIELD``."""

from __future__ import annotations

from pathlib import Path

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
    assert "True" in str(e.value) or "False" in str(e.value)


def test_workload_scale_true_is_refused(sweep_dir: Path) -> None:
    (sweep_dir / "sweep.yaml").write_text(HEAD + "axes: {workloadScale: {x: true}}\n")
    with pytest.raises(ManifestError, match=r"axes\.workloadScale\.x: expected a number"):
        load_spec(str(sweep_dir / "sweep.yaml"))
