"""One data-driven runner for Kubernetes' own test cases (../shared/cases, format in its
README; ``SCHEDSIM_CASES_DIR`` points it elsewhere) and for the project's own transcription of
the remaining cases of the same upstream tables, tests/cases/upstream/<table>/NNN-name.yaml
(same format; the table directory names the group, e.g. ``upstream/fit/`` is the ``fit-``
group; tests/cases/upstream/README.md counts them and EXCLUSIONS lists what the format cannot
express).

Each case is a fact about kube-scheduler 1.34 taken from an upstream test (its ``source``
field names it); a failure means schedsim disagrees with Kubernetes. Each group of cases has
its checker module (``cases_<group>.py``: ``run`` and ``expected_failure``); groups without a
checker yet are skipped with the issue that brings them.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CASES_DIR = Path(os.environ.get("SCHEDSIM_CASES_DIR") or ROOT.parent / "shared" / "cases")
UPSTREAM_DIR = Path(__file__).resolve().parent / "upstream"

# case-name prefix -> (checker module, issue that brings it when the module is absent)
GROUPS = {
    "fit-": ("cases_fit", "NodeResourcesFit (issue #2)"),
    "csi-": ("cases_csi", "NodeVolumeLimits arrives with issue #6 (CSI volume limits)"),
    "dra-alloc-": ("cases_dra_alloc", "the structured DRA allocator arrives with issues #4/#5"),
    "dra-plugin-": ("cases_dra_plugin", "the DynamicResources plugin arrives with issue #4"),
    "vol-": ("cases_vol", "VolumeBinding, VolumeZone and VolumeRestrictions (issue #13)"),
    "score-": ("cases_plugin", "the score plugins arrive with issue #12"),
    "spread-": ("cases_spreadipa", "PodTopologySpread (issue #13)"),
    "ipa-": ("cases_spreadipa", "InterPodAffinity (issue #13)"),
    "taint-": ("cases_plugin", "TaintToleration"),
    "nodeaffinity-": ("cases_plugin", "NodeAffinity"),
    "ports-": ("cases_plugin", "NodePorts"),
    "nodename-": ("cases_plugin", "NodeName"),
    "unschedulable-": ("cases_plugin", "NodeUnschedulable"),
    "balanced-": ("cases_plugin", "NodeResourcesBalancedAllocation"),
    "leastallocated-": ("cases_plugin", "NodeResourcesFit LeastAllocated"),
    "mostallocated-": ("cases_plugin", "NodeResourcesFit MostAllocated"),
    "rtcr-": ("cases_plugin", "NodeResourcesFit RequestedToCapacityRatio"),
    "imagelocality-": ("cases_plugin", "ImageLocality"),
    "volumerestrictions-": ("cases_vol", "VolumeRestrictions"),
    "volumezone-": ("cases_vol", "VolumeZone"),
    "volumebinding-": ("cases_vol", "VolumeBinding"),
    "preempt-": ("cases_preempt", "DefaultPreemption (issue #14)"),
    "qhint-": ("cases_qhint", "queueing hints through the scheduling queue"),
    "queue-": ("cases_queue", "scheduling-queue scenarios"),
    "ca-estimate-": ("cases_ca_estimate", "the Cluster Autoscaler's binpacking estimator"),
    "ca-drain-": ("cases_ca_drain", "the Cluster Autoscaler's drainability rules"),
    "ca-static-": ("cases_ca_static", "the Cluster Autoscaler's RunOnce decisions"),
    "ca-eligibility-": ("cases_ca_eligibility", "the Cluster Autoscaler's scale-down eligibility"),
}


def _group_name(path: Path) -> str:
    """The name a case file is grouped by: its file name in a flat cases directory,
    ``<table>-<file name>`` under tests/cases/upstream/<table>/."""
    if path.parent.parent == UPSTREAM_DIR:
        return f"{path.parent.name}-{path.name}"
    return path.name


def _checker(name: str) -> tuple[ModuleType | None, str]:
    for prefix, (module, why) in GROUPS.items():
        if name.startswith(prefix):
            try:
                return importlib.import_module(module), why
            except ModuleNotFoundError as e:
                if e.name != module:
                    raise
                return None, why
    return None, f"no checker for the case group of {name}"


def _params() -> list[Any]:
    files = sorted(CASES_DIR.glob("*.yaml")) if CASES_DIR.is_dir() else []
    absent = pytest.mark.skip(
        reason=f"cases directory {CASES_DIR} is absent (set SCHEDSIM_CASES_DIR)"
    )
    out = [] if files else [pytest.param(None, id="no-cases", marks=absent)]
    for f in [*files, *sorted(UPSTREAM_DIR.glob("*/*.yaml"))]:
        checker, why = _checker(_group_name(f))
        marks: list[Any] = []
        if checker is None:
            marks.append(pytest.mark.skip(reason=why))
        else:
            case = yaml.safe_load(f.read_text())
            # `xfail: <why>` in a case file: a known disagreement being worked on (temporary)
            reason = case.get("xfail") or checker.expected_failure(case)
            if reason:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
        upstream = f.parent.parent == UPSTREAM_DIR
        out.append(
            pytest.param(
                f, id=f"upstream/{f.parent.name}/{f.stem}" if upstream else f.stem, marks=marks
            )
        )
    return out


@pytest.mark.parametrize("path", _params())
def test_case(path: Path) -> None:
    """Run one case with its group's checker; it asserts every field ``expect`` gives."""
    checker, _ = _checker(_group_name(path))
    assert checker is not None
    checker.run(yaml.safe_load(path.read_text()), str(path))
