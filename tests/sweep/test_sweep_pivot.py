"""The sweep report's pivot by axis (`schedsim.sweep.report.axis_pivot`): per variant of an
axis, the scenarios that ran with it and each metric's mean and range over them."""

from __future__ import annotations

from schedsim.sweep.report import axis_pivot, sweep_page
from schedsim.sweep.results import ScenarioResult


def _row(i: int, trace: str, groups: str, scheduled: int, cost: float | None) -> ScenarioResult:
    return ScenarioResult(
        name=f"s{i}",
        index=i,
        axes=(("traces", trace), ("nodeGroups", groups)),
        fingerprint=str(i),
        scheduled=scheduled,
        cost=cost,
    )


ROWS = [
    _row(0, "burst", "small", 4, 1.0),
    _row(1, "burst", "large", 6, 2.0),
    _row(2, "steady", "small", 3, None),
    _row(3, "steady", "large", 3, None),
    ScenarioResult(
        name="s4",
        index=4,
        axes=(("traces", "steady"), ("nodeGroups", "huge")),
        fingerprint="4",
        error="ValueError: x",
    ),
]


def test_pivot_by_each_axis() -> None:
    """By hand: burst has scheduled 4 and 6 (mean 5, range 4-6), cost 1 and 2; steady 3 and
    3 (one value) and no cost; the failed scenario counts nowhere."""
    assert axis_pivot(ROWS, "traces", ["scheduled", "cost"]) == [
        ("burst", 2, "5 (4-6)", "1.5 (1-2)"),
        ("steady", 2, 3, ""),
    ]
    assert axis_pivot(ROWS, "nodeGroups", ["scheduled", "cost"]) == [
        ("small", 2, "3.5 (3-4)", 1),
        ("large", 2, "4.5 (3-6)", 2),
    ]


def test_page_has_a_pivot_per_axis() -> None:
    text = sweep_page(ROWS, "schedsim sweep: grid.yaml").render()
    assert "<h2>By axis</h2>" in text
    assert "<p>axis traces</p>" in text and "<p>axis nodeGroups</p>" in text
    assert "<title>schedsim sweep: grid.yaml</title>" in text
