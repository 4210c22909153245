"""`SchedulingError` text and accessors, as CA ``clustersnapshot/scheduling_error.go``
formats them (reference section 2.1): prefix ``can't schedule pod <ns>/<name>: ``; internal
``unexpected error: <msg>``; failing predicate
``predicate "<name>" didn't pass (predicateReasons=[r1, r2]; debugInfo=..; unexpectedError=..)``
with the optional parts only when non-empty; no nodes
``couldn't find a matching Node with passing predicates``."""

from __future__ import annotations

import pytest

from schedsim.snapshot import SchedulingError, SchedulingErrorType
from schedsim.testing import make_pod

POD = make_pod("web-0", namespace="shop")


@pytest.mark.parametrize(
    ("err", "text"),
    [
        pytest.param(
            SchedulingError.internal(POD, "boom"),
            "can't schedule pod shop/web-0: unexpected error: boom",
            id="internal",
        ),
        pytest.param(
            SchedulingError.failing_predicate(POD, "NodeResourcesFit", ["Insufficient cpu"]),
            "can't schedule pod shop/web-0: predicate \"NodeResourcesFit\" didn't pass "
            "(predicateReasons=[Insufficient cpu])",
            id="failing predicate, reasons only",
        ),
        pytest.param(
            SchedulingError.failing_predicate(
                POD, "NodeResourcesFit", ["Insufficient cpu", "Insufficient memory"], "", "d"
            ),
            "can't schedule pod shop/web-0: predicate \"NodeResourcesFit\" didn't pass "
            "(predicateReasons=[Insufficient cpu, Insufficient memory]; debugInfo=d)",
            id="failing predicate, two reasons and debug info",
        ),
        pytest.param(
            SchedulingError.failing_predicate(POD, "P", [], "PreFilter failed"),
            "can't schedule pod shop/web-0: predicate \"P\" didn't pass "
            "(predicateReasons=[]; unexpectedError=PreFilter failed)",
            id="failing predicate, unexpected error only",
        ),
        pytest.param(
            SchedulingError.failing_predicate(POD, "P", ["r"], "u", 'nodeName: "n1"'),
            "can't schedule pod shop/web-0: predicate \"P\" didn't pass "
            '(predicateReasons=[r]; debugInfo=nodeName: "n1"; unexpectedError=u)',
            id="failing predicate, debug info before unexpected error",
        ),
        pytest.param(
            SchedulingError.no_nodes_passing(POD),
            "can't schedule pod shop/web-0: couldn't find a matching Node with passing predicates",
            id="no nodes passing",
        ),
    ],
)
def test_message(err: SchedulingError, text: str) -> None:
    assert str(err) == text


def test_reasons_and_types() -> None:
    """Reasons(): the predicate's reasons for FailingPredicateError, else the message."""
    fp = SchedulingError.failing_predicate(POD, "P", ["a", "b"])
    assert fp.type is SchedulingErrorType.FAILING_PREDICATE
    assert fp.reasons == ("a", "b") == fp.failing_predicate_reasons
    assert fp.failing_predicate_name == "P"
    internal = SchedulingError.internal(POD, "x")
    assert internal.type is SchedulingErrorType.INTERNAL_ERROR
    assert internal.reasons == (str(internal),)
    none = SchedulingError.no_nodes_passing(POD)
    assert none.type is SchedulingErrorType.NO_NODES_PASSING_PREDICATES
    assert none.reasons == (str(none),)
    assert none.pod is POD and fp.pod is POD
    assert isinstance(none, Exception)


def test_type_names_are_cas() -> None:
    assert [t.value for t in SchedulingErrorType] == [
        "SchedulingInternalError",
        "FailingPredicateError",
        "NoNodesPassingPredicatesFoundError",
    ]
