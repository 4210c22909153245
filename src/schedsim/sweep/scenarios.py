"""Scenarios: the cartesian product of a spec's axes, each a picklable unit of work.

A `Scenario` holds plain data only (an `EngineConfig`, node groups, the command and its
options, the key of its cluster), so any executor ships it to any worker; the clusters
(`load_clusters`: one per ``traces`` variant) travel apart, once per worker.
`run_scenario` is the one function every executor calls: it never raises, a failure becomes
a failed `ScenarioResult` carrying the error.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

import attrs

from schedsim.api.errors import ManifestError
from schedsim.api.loading.decode import key_path
from schedsim.autoscaler.nodegroups import NodeGroup
from schedsim.engine import Cluster, Engine, EngineConfig
from schedsim.replay import Replay, manifest_trace
from schedsim.replay.alibaba import alibaba_trace
from schedsim.replay.experiment import GpuSharingExperiment
from schedsim.replay.trace import Trace
from schedsim.sweep.results import ScenarioResult
from schedsim.sweep.spec import ExperimentOptions, SweepOptions, SweepSpec, digest

__all__ = [
    "Scenario",
    "SweepInput",
    "iter_scenarios",
    "load_clusters",
    "run_scenario",
    "scenario_count",
    "scenarios",
]


SweepInput = Cluster | Trace
"""What a scenario runs on: a cluster, or for ``experiment`` an Alibaba trace."""


@attrs.frozen
class Scenario:
    """One run of a sweep.

    Attributes:
        index: its place in the sweep (results are reported in this order).
        name: its axis variants and command joined by ``+`` (``small+packed+scale-up``),
            unique in the sweep; the resume file is ``NAME.json``.
        axes: (axis, variant name) for each axis the spec names, then ``("command", ...)``.
        command: ``simulate``, ``scale-up``, ``scale-down`` or ``replay``.
        cluster_key: the key of its cluster in `load_clusters` (`cluster_key` of its
            ``traces`` and ``workloadScale`` variants; "" without either axis).
        config: the scheduler configuration and gates.
        engine_key: the config variant's name (workers build one Engine per key).
        node_groups: the node groups (None: none given).
        options: the commands' options.
        fingerprint: sha256 of everything the result depends on (cluster and variant files,
            gates, command, options, seed); a resumed result counts only when it matches.
        seed: the ``seeds`` variant's seed (None: ``options.seed``).
        experiment: the ``experiment`` section (the experiment command only).
    """

    index: int
    name: str
    axes: tuple[tuple[str, str], ...]
    command: str
    cluster_key: str
    config: EngineConfig
    engine_key: str
    node_groups: tuple[NodeGroup, ...] | None
    options: SweepOptions
    fingerprint: str
    seed: int | None = None
    experiment: ExperimentOptions | None = None


def load_clusters(spec: SweepSpec) -> dict[str, SweepInput]:
    """The cluster of every ``traces`` variant (its name -> ``spec.cluster`` + its paths,
    loaded once, workload controllers expanded); for ``experiment``, the Alibaba trace of
    each pod list with the spec's node list (GPUs as shared DRA devices).

    Raises:
        ManifestError: a manifest is malformed (``FILE: KIND NS/NAME: FIELD: problem``);
            a CSV row is (`TraceError`, ``FILE:LINE: problem``).
    """
    if spec.experiment is not None:
        nodes = spec.experiment.alibaba_nodes
        return {
            t.name: alibaba_trace(t.paths[0], nodes, gpu_as="dra", gpu_share=True)
            for t in spec.traces
        }
    out: dict[str, SweepInput] = {}
    for t in spec.traces:
        for w in spec.scales:
            try:
                out[cluster_key(t.name, w.name)] = Cluster.from_paths(
                    [*spec.cluster, *t.paths], workload_scale=w.factor
                )
            except ManifestError as e:
                if not w.name:
                    raise
                # the manifest is fine as written: name the variant that scaled it
                raise ManifestError(
                    f"{e}\n{spec.source}: {key_path('axes.workloadScale', w.name)}: the manifests "
                    f"above, with every workload controller's size times {w.factor:g}, are "
                    "refused; use a smaller factor"
                ) from None
    return out


def cluster_key(trace: str, scale: str) -> str:
    """The key of a (``traces``, ``workloadScale``) variant's cluster in `load_clusters`."""
    return f"{trace}/{scale}" if scale else trace


def scenario_count(spec: SweepSpec) -> int:
    """How many scenarios `iter_scenarios` yields, from the axes' sizes (none is built)."""
    sizes = (spec.traces, spec.scales, spec.groups, spec.configs, spec.seeds, spec.commands)
    return math.prod(len(axis) for axis in sizes)


def scenarios(spec: SweepSpec) -> list[Scenario]:
    """Every scenario of ``spec`` as a list (`iter_scenarios`, all built at once)."""
    return list(iter_scenarios(spec))


def iter_scenarios(spec: SweepSpec) -> Iterator[Scenario]:
    """Every scenario of ``spec``, built one at a time as the sweep consumes them:
    traces x workloadScale x nodeGroups x schedulerConfig x featureGates x seeds x commands,
    in that nesting order (the last varies fastest), ``index`` counting from 0."""
    grid = (
        (t, w, g, c, seed, cmd)
        for t in spec.traces
        for w in spec.scales
        for g in spec.groups
        for c in spec.configs
        for seed in spec.seeds
        for cmd in spec.commands
    )
    for index, (t, w, g, c, seed, command) in enumerate(grid):
        values = {
            "traces": t.name,
            "workloadScale": w.name,
            "nodeGroups": g.name,
            "schedulerConfig": c.config_name,
            "featureGates": c.gates_name,
            "seeds": seed.name,
        }
        axes = (*((a, values[a]) for a in spec.named_axes), ("command", command))
        yield (
            Scenario(
                index=index,
                name="+".join(v for _, v in axes),
                axes=axes,
                command=command,
                cluster_key=cluster_key(t.name, w.name),
                config=c.config,
                engine_key=f"{c.config_name}+{c.gates_name}",
                node_groups=g.groups,
                options=spec.options,
                fingerprint=digest(
                    spec.cluster_digest,
                    t.digest,
                    w.factor,
                    g.digest,
                    c.digest,
                    command,
                    attrs.asdict(spec.options),
                    # absent from fingerprints of specs without them (resumable as before)
                    *(() if seed.seed is None else (seed.seed,)),
                    *(() if spec.experiment is None else (spec.experiment.digest,)),
                ),
                seed=seed.seed,
                experiment=spec.experiment,
            )
        )


def run_scenario(
    clusters: Mapping[str, SweepInput],
    scenario: Scenario,
    engines: MutableMapping[str, Engine] | None = None,
) -> ScenarioResult:
    """Run one scenario on its cluster (never modified); never raises.

    Args:
        clusters: the loaded clusters by `Scenario.cluster_key` (`load_clusters`).
        scenario: what to run.
        engines: a per-worker cache of Engines by `Scenario.engine_key` (the framework is
            built once per config and worker; runs never leak state into each other).

    Returns:
        the headline metrics, or a failed result with ``error`` (``Type: message``) when
        building the engine or running raised.
    """
    start = time.perf_counter()
    try:
        engine = None if engines is None else engines.get(scenario.engine_key)
        if engine is None:
            engine = Engine(scenario.config)
            if engines is not None:
                engines[scenario.engine_key] = engine
        metrics = _run(engine, clusters[scenario.cluster_key], scenario)
    except Exception as e:  # a scenario's failure is data; the others go on
        return ScenarioResult.failed(
            scenario.name,
            scenario.index,
            scenario.axes,
            scenario.fingerprint,
            f"{type(e).__name__}: {e}",
            time.perf_counter() - start,
        )
    return ScenarioResult(
        name=scenario.name,
        index=scenario.index,
        axes=scenario.axes,
        fingerprint=scenario.fingerprint,
        wall_seconds=time.perf_counter() - start,
        **metrics,
    )


def _run(engine: Engine, on: SweepInput, s: Scenario) -> dict[str, Any]:
    """The scenario's `ScenarioResult` metrics, by field name (those a command does not
    measure keep their defaults: 0 for counts it cannot have, None for cost and latency)."""
    o = s.options
    seed = o.seed if s.seed is None else s.seed
    if isinstance(on, Trace):
        assert s.experiment is not None  # the spec pairs them
        return _experiment(engine, on, s.experiment, 42 if seed is None else seed)
    cluster = on
    if s.command == "simulate":
        r = engine.simulate(cluster, placement=o.placement, seed=seed)
        return {
            "scheduled": r.scheduled,
            "unschedulable": r.unschedulable,
            "plugin_errors": r.errors,
            "preempted": r.preempted,
            "warnings": r.warnings,
        }
    if s.command == "scale-up":
        assert s.node_groups is not None  # the spec checks it
        u = engine.scale_up(
            cluster,
            s.node_groups,
            expander=o.expander,
            max_nodes_per_scale_up=o.max_nodes_per_scale_up,
        )
        chosen = next((g for g in u.options if g.name == u.chosen), None)
        helped = 0 if chosen is None else len(chosen.pods)
        return {
            "scheduled": len(u.scheduled) + helped,
            "unschedulable": max(0, u.pending - len(u.scheduled) - helped - len(u.errors)),
            "plugin_errors": len(u.errors),
            "nodes_added": 0 if chosen is None else chosen.node_count,
        }
    if s.command == "replay":
        return _replay(engine, cluster, s, seed)
    d = engine.scale_down(
        cluster, threshold=o.threshold, gpu_threshold=o.gpu_threshold, node_groups=s.node_groups
    )
    return {
        "scheduled": len(d.pending_placed),
        "unschedulable": len(d.pending_unplaced),
        "plugin_errors": len(d.errors),
        "nodes_removed": sum(1 for v in d.verdicts if v.removable),
    }


def _experiment(
    engine: Engine, trace: Trace, options: ExperimentOptions, seed: int
) -> dict[str, Any]:
    """The GPU-sharing experiment (`GpuSharingExperiment`, as ``schedsim replay --inflate``):
    pods scheduled and failed after tuning, and the curve (one point per arrived percent)."""
    result = GpuSharingExperiment(trace, engine, inflate=options.inflate, seed=seed).run()
    return {
        "scheduled": result.scheduled,
        "unschedulable": result.failed,
        "curve": tuple(
            (p.arrived, p.gpu_allocation, p.fragmentation, p.fragmentation_amount)
            for p in result.curve
        ),
    }


def _replay(engine: Engine, cluster: Cluster, s: Scenario, seed: int | None) -> dict[str, Any]:
    """``schedsim replay`` of the cluster as a trace (`schedsim.replay.Replay`): pods
    scheduled and still pending at the end, preempted, nodes the autoscaler added and
    removed, total cost, scheduling latency percentiles (seconds)."""
    o = s.options
    trace = manifest_trace(cluster)
    replay = Replay(
        trace,
        s.node_groups or (),
        engine=engine,
        options=o.autoscaler(),
        sample_interval=o.sample_interval,
        until=o.until,
        seed=seed,
    )
    m = replay.run()
    summary = m.summary()
    lat = m.latency_percentiles() if m.latencies else None
    return {
        "scheduled": len(m.latencies),
        "unschedulable": len(m.unschedulable),
        "preempted": m.preempted,
        "nodes_added": summary["nodesAdded"],
        "nodes_removed": summary["nodesRemoved"],
        "cost": sum(m.cost().values()),
        "latency_p50": None if lat is None else lat["p50"],
        "latency_p90": None if lat is None else lat["p90"],
        "latency_p99": None if lat is None else lat["p99"],
        "warnings": tuple(w for w in replay.warnings if w not in trace.warnings),
    }
