"""Traces: what a replay replays.

A `Trace` is a starting cluster (nodes, the pods already running on them, every other object
a run reads) plus pods that arrive over time, each with an arrival time and a duration. It is
read from manifests (`manifest_trace`, this module) or from the Alibaba GPU cluster trace
(`schedsim.replay.alibaba`).

Manifest traces
    Every manifest kind `schedsim simulate` reads, workload controllers expanded as
    `simulate` expands them. A pending pod (no ``spec.nodeName``) arrives at its
    ``metadata.creationTimestamp`` (a pod made by a controller: its template's); t = 0 is the
    earliest creationTimestamp of the pending pods; pods without one arrive at t = 0. The
    annotation ``schedsim.io/duration`` (`DURATION_ANNOTATION`: a Go duration such as ``90s``,
    ``10m``, ``1h30m``; a number needs its unit, as in Go) is how long the pod runs once
    bound, after which it completes and frees its node; without it the pod runs until the
    replay ends. Pods bound in the input run from t = 0 (their duration counts from then).
    A pod with only ``status.nominatedNodeName`` is pending, as kube-scheduler reads it: it
    arrives as the others do and goes through the scheduling cycle, nominated to that node
    (counted there for pods of equal or higher priority, its node tried first), as in
    ``schedsim simulate``.

KWOK recordings
    Manifests with ``ResourcePatch`` changes (``kwokctl snapshot record``): t = 0 is when
    recording started, so the recorded pending pods arrive at t = 0 (they existed then), and
    the changes are `Trace.recorded` (`schedsim.replay.recording`), applied at their time.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

import attrs

from schedsim.api.core import Pod
from schedsim.api.errors import ManifestError
from schedsim.api.meta import as_utc
from schedsim.engine import Cluster
from schedsim.replay.clock import parse_duration
from schedsim.replay.recording import RecordedChange, recorded_timeline

__all__ = ["DURATION_ANNOTATION", "Trace", "TracePod", "manifest_trace", "pod_duration"]

DURATION_ANNOTATION: Final = "schedsim.io/duration"
"""The pod annotation a manifest trace reads as the pod's running time once bound."""


@attrs.frozen
class TracePod:
    """One pod of a trace.

    Attributes:
        pod: the pod (pending pods without ``spec.nodeName``).
        arrival: seconds since the trace's start when it is created (0 for pods running at
            the start).
        duration: seconds it runs once bound, then it completes; None: until the end.
        source: where it was read (``FILE: Pod NS/NAME`` or ``FILE:LINE``), for messages.
        gpus: the GPUs it asks for through DRA claims (the Alibaba trace's ``--gpu-as dra``),
            for the GPU metrics; None: the GPU extended resource of its requests counts.
    """

    pod: Pod
    arrival: float
    duration: float | None
    source: str = ""
    gpus: int | None = None


@attrs.frozen
class Trace:
    """A starting cluster and the pods that arrive.

    Attributes:
        cluster: the nodes, the pods bound at the start, and every other object (claims,
            storage, controllers); its pending pods are not in it (they are `arrivals`).
        running: the pods bound at the start, with their durations (from t = 0).
        arrivals: the pods that arrive, by arrival time (input order for equal times).
        start: the wall-clock instant of t = 0, when the trace says (None otherwise).
        warnings: what reading the trace had to say, one line each.
        recorded: a KWOK recording's changes, by time (`schedsim.replay.recording`).
    """

    cluster: Cluster
    running: tuple[TracePod, ...] = ()
    arrivals: tuple[TracePod, ...] = ()
    start: datetime | None = None
    warnings: tuple[str, ...] = ()
    recorded: tuple[RecordedChange, ...] = ()

    @property
    def last_arrival(self) -> float:
        """The time of the last arrival (0 without arrivals)."""
        return self.arrivals[-1].arrival if self.arrivals else 0.0


def pod_duration(pod: Pod, where: str) -> float | None:
    raw = pod.annotations.get(DURATION_ANNOTATION)
    if raw is None:
        return None
    field = f"metadata.annotations[{DURATION_ANNOTATION}]"
    try:
        seconds = parse_duration(raw)
    except ValueError as e:
        raise ManifestError(f"{where}: {field}: {e}") from None
    if seconds < 0:
        raise ManifestError(f"{where}: {field}: must not be negative, got {raw!r}")
    return seconds


def manifest_trace(cluster: Cluster, validate: str = "strict") -> Trace:
    """The trace of a loaded cluster (see the module docstring for the rules).

    Args:
        cluster: loaded with workload controllers expanded (`Cluster.from_paths`).
        validate: the loader's ``--validate``, for the objects a KWOK recording creates.

    Returns:
        the `Trace`; ``cluster`` is not modified (the trace's cluster is a copy without the
        pending pods).

    Raises:
        ManifestError: ``FILE: Pod NS/NAME: metadata.annotations[schedsim.io/duration]:
            problem`` for a duration that is not a duration or is negative; a KWOK change
            that does not decode (`schedsim.replay.recording.recorded_timeline`).
    """
    origin = cluster.origin
    recording = origin is not None and bool(origin.kwok_patches)

    def where(pod: Pod) -> str:
        src = origin.source_of(pod) if origin is not None else "<objects>"
        return f"{src}: Pod {pod.key}"

    bound: list[Pod] = []
    running: list[TracePod] = []
    pending: list[tuple[Pod, datetime | None]] = []
    for pod in cluster.pods:
        if pod.is_terminal:
            continue
        if pod.node_name:  # status.nominatedNodeName alone: pending, as kube-scheduler has it
            bound.append(pod)
            running.append(TracePod(pod, 0.0, pod_duration(pod, where(pod)), where(pod)))
            continue
        ts = pod.creation_timestamp
        pending.append((pod, as_utc(ts) if ts is not None else None))
    if recording:  # they existed when recording started
        pending = [(pod, None) for pod, _ in pending]
    stamps = [ts for _, ts in pending if ts is not None]
    start = min(stamps) if stamps else None
    arrivals = [
        TracePod(
            pod,
            (ts - start).total_seconds() if ts is not None and start is not None else 0.0,
            pod_duration(pod, where(pod)),
            where(pod),
        )
        for pod, ts in pending
    ]
    arrivals.sort(key=lambda tp: tp.arrival)  # stable: input order among equal times
    warnings = cluster.warnings
    recorded: tuple[RecordedChange, ...] = ()
    if origin is not None and recording:
        timeline = recorded_timeline(origin.kwok_patches, origin.kwok_nodes, validate)
        told = set(origin.kwok_warnings)  # "not applied": the replay applies them
        warnings = (*(w for w in warnings if w not in told), *timeline.warnings)
        recorded = tuple(
            attrs.evolve(c, duration=pod_duration(c.pod, f"{c.label}: Pod {c.key}"))
            if c.pod is not None
            else c
            for c in timeline.changes
        )
    return Trace(
        attrs.evolve(cluster, pods=tuple(bound)),
        tuple(running),
        tuple(arrivals),
        start,
        warnings,
        recorded,
    )


def trace_from_paths(paths: Sequence[str], *, validate: str = "strict") -> Trace:
    """Load manifests (`Cluster.from_paths`, controllers expanded) and make their trace.

    Raises:
        ManifestError: as `Cluster.from_paths` and `manifest_trace`.
    """
    return manifest_trace(Cluster.from_paths(paths, validate=validate), validate)
