"""Replay: a day of a cluster's life on a virtual clock, kube-scheduler and the Cluster
Autoscaler in the loop (``schedsim replay``).

.. code-block:: python

    from schedsim.replay import Replay, trace_from_paths
    from schedsim.autoscaler.nodegroups import load_node_groups

    replay = Replay(trace_from_paths(["trace.yaml"]), load_node_groups("groups.yaml"))
    replay.run_until(600)            # ten simulated minutes
    print(replay.state().pending)
    metrics = replay.run()           # to the end
    print(metrics.summary())

Modules: `clock` (virtual clock, events), `trace` (manifest traces), `alibaba` (the Alibaba
GPU trace), `autoscaler` (CA's loop), `metrics` (and `gpus`), `loop`
(`Replay`; `state`, its `ReplayState`), `export` (JSON and CSV).
"""

from schedsim.replay.autoscaler import AutoscalerOptions, ScaleEvent
from schedsim.replay.clock import parse_duration
from schedsim.replay.loop import Replay, ReplayState
from schedsim.replay.metrics import ReplayMetrics, Sample
from schedsim.replay.trace import (
    DURATION_ANNOTATION,
    Trace,
    TracePod,
    manifest_trace,
    trace_from_paths,
)

__all__ = [
    "DURATION_ANNOTATION",
    "AutoscalerOptions",
    "Replay",
    "ReplayMetrics",
    "ReplayState",
    "Sample",
    "ScaleEvent",
    "Trace",
    "TracePod",
    "manifest_trace",
    "parse_duration",
    "trace_from_paths",
]
