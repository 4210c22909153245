"""Checked by mypy, never run: the out-of-tree example plugin satisfies the typed plugin
protocols (what a plugin author would write in their own project)."""

from __future__ import annotations

from schedsim.framework import FilterPlugin, Handle, PreFilterPlugin, ReservePlugin
from schedsim_gpu_guard import GpuGuard

guard = GpuGuard({}, Handle())
_pre: PreFilterPlugin = guard
_filter: FilterPlugin = guard
_reserve: ReservePlugin = guard
