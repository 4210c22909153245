"""Scenarios: the cartesian product of a spec's axes, each a picklable unit of work.

A `Scenario` holds plain data only (an `EngineConfig`, node groups, the command and its
options), so any executor ships it to any worker; the `Cluster` travels apart, once per
worker. `run_scenario` is the one function every executor calls: it never raises, a failure
becomes a failed `ScenarioResult` carrying the error.
"""

from __future__ import annotations

import time
from collections.abc import MutableMapping

import attrs

from schedsim.engine import Cluster, Engine, EngineConfig
from schedsim.simulation.nodegroups import NodeGroup
from schedsim.sweep.results import ScenarioResult
from schedsim.sweep.spec import SweepOptions, SweepSpec, digest

__all__ = ["Scenario", "run_scenario", "scenarios"]


@attrs.frozen
class Scenario:
    """One run of a sweep.

    Attributes:
        index: its place in the sweep (results are reported in this order).
        name: its axis variants and command joined by ``+`` (``small+packed+scale-up``),
            unique in the sweep; the resume file is ``NAME.json``.
        axes: (axis, variant name) for each axis the spec names, then ``("command", ...)``.
        command: ``simulate``, ``scale-up`` or ``scale-down``.
        config: the scheduler configuration and gates.
        engine_key: the config variant's name (workers build one Engine per key).
        node_groups: the node groups (None: none given).
        options: the commands' options.
        fingerprint: sha256 of everything the result depends on (cluster and variant files,
            gates, command, options); a resumed result counts only when it matches.
    """

    index: int
    name: str
    axes: tuple[tuple[str, str], ...]
    command: str
    config: EngineConfig
    engine_key: str
    node_groups: tuple[NodeGroup, ...] | None
    options: SweepOptions
    fingerprint: str


def scenarios(spec: SweepSpec) -> list[Scenario]:
    """Every scenario of ``spec``: nodeGroups x schedulerConfig x featureGates x commands,
    in that nesting order (the last varies fastest)."""
    out: list[Scenario] = []
    for g in spec.groups:
        for c in spec.configs:
            for command in spec.commands:
                values = {
                    "nodeGroups": g.name,
                    "schedulerConfig": c.config_name,
                    "featureGates": c.gates_name,
                }
                axes = (*((a, values[a]) for a in spec.named_axes), ("command", command))
                name = "+".join(v for _, v in axes)
                out.append(
                    Scenario(
                        index=len(out),
                        name=name,
                        axes=axes,
                        command=command,
                        config=c.config,
                        engine_key=f"{c.config_name}+{c.gates_name}",
                        node_groups=g.groups,
                        options=spec.options,
                        fingerprint=digest(
                            spec.cluster_digest,
                            g.digest,
                            c.digest,
                            command,
                            attrs.asdict(spec.options),
                        ),
                    )
                )
    return out


def run_scenario(
    cluster: Cluster, scenario: Scenario, engines: MutableMapping[str, Engine] | None = None
) -> ScenarioResult:
    """Run one scenario on ``cluster`` (never modified); never raises.

    Args:
        cluster: the loaded cluster.
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
        metrics = _run(engine, cluster, scenario)
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
        scheduled=metrics[0],
        unschedulable=metrics[1],
        plugin_errors=metrics[2],
        nodes_added=metrics[3],
        nodes_removed=metrics[4],
    )


def _run(engine: Engine, cluster: Cluster, s: Scenario) -> tuple[int, int, int, int, int]:
    """(scheduled, unschedulable, plugin errors, nodes added, nodes removed)."""
    o = s.options
    if s.command == "simulate":
        r = engine.simulate(cluster, placement=o.placement, seed=o.seed)
        return (
            r.scheduled,
            r.unschedulable,
            r.errors,
            0,
            0,
        )
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
        added = 0 if chosen is None else chosen.node_count
        return (
            len(u.scheduled) + helped,
            max(0, u.pending - len(u.scheduled) - helped - len(u.errors)),
            len(u.errors),
            added,
            0,
        )
    d = engine.scale_down(
        cluster, threshold=o.threshold, gpu_threshold=o.gpu_threshold, node_groups=s.node_groups
    )
    return (
        len(d.pending_placed),
        len(d.pending_unplaced),
        len(d.errors),
        0,
        sum(1 for v in d.verdicts if v.removable),
    )
