"""The store conformance kit itself: it must fail broken stores, one line per broken invariant.

Cluster Autoscaler's ``TestNode404`` expects every store write on a missing node to fail
(``ErrNodeNotFound``), and its stores remove a pod by namespace and name (``RemovePod``
matches ``pod.Namespace`` and ``pod.Name``); two stores that break exactly one of these must
not pass the kit, and each must be reported once, not once per fork mode.
"""

from __future__ import annotations

import pydoc
from pathlib import Path

import pytest

from schedsim.snapshot import BasicSnapshotStore, DeltaSnapshotStore, NodeNotFoundError
from schedsim.testing import (
    CONFORMANCE_CASES,
    DraConformanceCase,
    run_dra_conformance,
    run_store_conformance,
)


class RemovesPodByNameOnly(BasicSnapshotStore):
    """Broken: removes the first pod with that name on the node, whatever its namespace."""

    def remove_pod_info(self, namespace: str, pod_name: str, node_name: str) -> None:
        for p in self.node_infos().get(node_name).pods:
            if p.pod.name == pod_name:
                namespace = p.pod.namespace
                break
        super().remove_pod_info(namespace, pod_name, node_name)


class IgnoresMissingNodeOnRemove(DeltaSnapshotStore):
    """Broken: removing a node that is not there does nothing instead of failing."""

    def remove_node_info(self, node_name: str) -> None:
        try:
            super().remove_node_info(node_name)
        except NodeNotFoundError:
            pass


FAMILIES = ("modification: extra", "node 404", "node already exists", "pvc used by pods")
CASES = [c for c in CONFORMANCE_CASES if c.name.startswith(FAMILIES)]
"""The kit's families these two bugs can break (the whole kit takes ~15 s per store; the
shipped stores run all of it in test_predicate_snapshot)."""


def _failures(store: type) -> list[str]:
    with pytest.raises(AssertionError) as info:
        run_store_conformance(store, CASES)
    head, *rest = str(info.value).splitlines()
    items = [line.removeprefix("- ") for line in rest if line.startswith("- ")]
    assert head.endswith(f" store conformance case(s) failed, {len(items)} broken invariant(s):")
    return items


def test_kit_fails_a_store_that_ignores_the_namespace() -> None:
    """Both namespace scenarios fail, each reported once with the count of its other fork
    modes; nothing else fails."""
    lines = _failures(RemovesPodByNameOnly)
    modes = sum(1 for c in CONFORMANCE_CASES if c.invariant.endswith("matches namespace and name"))
    assert [line.split(" [")[0] for line in lines] == [
        "modification: extra: force remove pod keeps the same-named pod of another namespace",
        "modification: extra: store.remove_pod_info matches namespace and name",
    ]
    assert all(line.endswith(f"(and {modes - 1} more variant(s))") for line in lines)


def test_kit_fails_a_store_that_ignores_a_missing_node() -> None:
    """CA TestNode404: the store's remove_node_info on a missing node must raise; one line for
    the five situations it is tried in."""
    [line] = _failures(IgnoresMissingNodeOnRemove)
    assert line.startswith("node 404: store.remove_node_info [empty]: ")
    assert line.endswith("(and 4 more variant(s))")


def test_help_is_short() -> None:
    """help(run_store_conformance) shows the signature and docstring only (the default is
    None, not the tuple of every case)."""
    text = pydoc.plain(pydoc.render_doc(run_store_conformance))
    assert len(text) < 1500, len(text)
    assert "cases: 'Iterable[ConformanceCase] | None' = None)" in text, text


def test_dra_kit_reports_one_failure_per_scenario() -> None:
    """The DRA kit groups a scenario's fork modes the same way (one ``- `` item each)."""

    def broken(make_store: object, clone_on_fork: bool) -> None:
        raise AssertionError("claim not reserved\nsecond line")

    cases = [
        DraConformanceCase(f"dra: schedule pod [{mode}]", broken)
        for mode in ("base", "fork", "fork & revert")
    ]
    with pytest.raises(AssertionError) as info:
        run_dra_conformance(BasicSnapshotStore, cases=cases)
    assert str(info.value) == (
        "3 DRA conformance case(s) failed, 1 broken invariant(s):\n"
        "- dra: schedule pod [base]: claim not reserved (and 2 more variant(s))\n"
        "  second line"
    )


def test_dra_help_is_short() -> None:
    """help(run_dra_conformance) was 7 million characters (the default listed every case)."""
    text = pydoc.plain(pydoc.render_doc(run_dra_conformance))
    assert len(text) < 1500, len(text)


def test_kit_modules_are_small() -> None:
    """The kit is split by concept into modules under ~600 lines (STYLE: one concept per
    module)."""
    import schedsim.testing as kit

    folder = Path(kit.__file__).parent
    sizes = {
        p.name: len(p.read_text().splitlines()) for p in folder.glob("snapshot_conformance*.py")
    }
    assert len(sizes) > 1 and max(sizes.values()) <= 600, sizes
