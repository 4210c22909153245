"""Must be REJECTED by mypy: this Filter returns a bool instead of ``Status | None``."""

from __future__ import annotations

from typing import ClassVar

from schedsim.api.core import Pod
from schedsim.framework import CycleState, FilterPlugin, NodeInfo


class BoolFilter:
    name: ClassVar[str] = "BoolFilter"

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> bool:
        return node_info.node is not None


_: FilterPlugin = BoolFilter()
