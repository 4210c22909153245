"""Checked by mypy, never run: the out-of-tree example plugins satisfy the typed plugin
protocols (what a plugin author would write in their own project)."""

from __future__ import annotations

from schedsim.framework import (
    FilterPlugin,
    Handle,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScoreExtensions,
)
from schedsim_gpu_guard import GpuGuard
from schedsim_zone_preference import ZonePreference

guard = GpuGuard({}, Handle())
_pre: PreFilterPlugin = guard
_filter: FilterPlugin = guard
_reserve: ReservePlugin = guard

zones = ZonePreference({}, Handle())
_pre_score: PreScorePlugin = zones
_score: ScoreExtensions = zones
