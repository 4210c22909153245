"""Must be REJECTED by mypy: a Score hook with Go-style parameter names (``p``, ``nodeInfo``).

pluggy calls hooks by argument name, so these names would fail when the plugin is loaded;
the protocols' keyword-only parameters make mypy catch it first.
"""

from __future__ import annotations

from typing import ClassVar

from schedsim.api.core import Pod
from schedsim.framework import CycleState, NodeInfo, ScorePlugin, Status


class GoStyleScore:
    name: ClassVar[str] = "GoStyleScore"

    def schedsim_score(self, state: CycleState, p: Pod, nodeInfo: NodeInfo) -> int | Status:
        return 0


_: ScorePlugin = GoStyleScore()
