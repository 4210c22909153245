"""Imported only by the process pool's fork server (`schedsim.sweep.executors`): builds
kube-scheduler's default profile once, so that every worker forked from the server starts
with the plugin modules imported and the plugin entry points read, instead of paying that
(about 0.15-0.3 s) in each worker's first scenario. Importing it anywhere else just costs
that time once."""

from __future__ import annotations

from schedsim.engine import Engine, EngineConfig

Engine(EngineConfig())
