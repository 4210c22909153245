"""Runner for the ``ca-eligibility-*`` cases: the Cluster Autoscaler's scale-down eligibility
(CA ``core/scaledown/eligibility/eligibility_test.go`` TestFilterOutUnremovable; format in
tests/cases/upstream/README.md, "Cluster Autoscaler scale-down eligibility cases").

The case's Nodes, bound Pods and ResourceSlices are loaded (`schedsim.engine.Cluster`) into a
snapshot with the default profile, on both stores;
`schedsim.autoscaler.scaledown.filter_out_unremovable` runs with the case's options, and the
eligible nodes (CA's "unneeded") and the others with their reasons are compared.
"""

from __future__ import annotations

from typing import Any

from schedsim.api.loading.loader import decode_objects
from schedsim.api.meta import parse_timestamp
from schedsim.autoscaler.scaledown import DEFAULT_UTILIZATION_THRESHOLD, filter_out_unremovable
from schedsim.engine import STORES, Cluster
from schedsim.framework import Framework, Handle, default_profile

# the rows schedsim still disagrees with (tests/cases/upstream/README.md, known divergences)
_DIVERGENT: dict[str, str] = {}


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass)."""
    return _DIVERGENT.get(case["name"])


def run(case: dict[str, Any], source: str) -> None:
    """Run one eligibility case on both stores."""
    check, expect = case["check"], case["expect"]
    assert check["component"] == "ScaleDownEligibility", check
    cluster = Cluster.from_manifests(decode_objects(case["objects"], source, api_rules=False))
    framework = Framework(default_profile(), Handle())
    for store in STORES.values():
        snap, skipped = cluster.snapshot(framework, store())
        assert skipped == []
        got = filter_out_unremovable(
            snap,
            threshold=check.get("scaleDownUtilizationThreshold", DEFAULT_UTILIZATION_THRESHOLD),
            dra_enabled=check.get("draEnabled", False),
            ignore_daemonsets_utilization=check.get("ignoreDaemonSetsUtilization", False),
            scale_down_unready=check.get("scaleDownUnready", True),
            now=parse_timestamp(check.get("now"), "check.now"),
        )
        where = f"{source} ({store.__name__})"
        unneeded = [e.node for e in got if e.reason is None]
        assert unneeded == expect["unneeded"], f"{where}: unneeded {unneeded}"
        unremovable = [{"node": e.node, "reason": e.reason.value} for e in got if e.reason]
        assert unremovable == expect["unremovable"], f"{where}: unremovable {unremovable}"
