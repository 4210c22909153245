"""The sweep spec: a YAML file naming the cluster, the axes and the commands of a sweep.

.. code-block:: yaml

    kind: Sweep                      # optional
    cluster: [cluster.yaml]          # manifests (files or directories), parsed once
    commands: [simulate, replay]     # simulate, scale-up, scale-down, replay (an axis)
    axes:                            # every axis optional; name -> variant
      traces:                        # manifests added to the cluster: a replay's trace
        monday: [monday/]            #   (pods arrive at their creationTimestamp), the
        tuesday: tuesday.yaml        #   pending pods of the other commands
      workloadScale:                 # every workload controller's size times this
        today: 1                     #   (replicas, Job parallelism/completions, rounded
        double: 2                    #   half up; schedsim.api.apps.workload_scale)
      nodeGroups:                    # node-groups files (scale-up needs one)
        small: groups-small.yaml
        large: groups-large.yaml
      schedulerConfig:               # KubeSchedulerConfiguration files; null: the default
        default: null
        packed: most-allocated.yaml
      featureGates:                  # gate overrides on top of the 1.34 defaults
        base: {}
        prioritized: {DRAPrioritizedList: true}
      seeds: [42, 43]                # a list of seeds, or name -> seed: each run's seed
    options:                         # the commands' options, the same for every scenario
      placement: kube-scheduler      # simulate: kube-scheduler | first-fit
      seed: null                     # simulate: tie-breaking seed
      expander: least-waste          # scale-up
      maxNodesPerScaleUp: 1000       # scale-up
      utilizationThreshold: 0.5      # scale-down
      gpuUtilizationThreshold: 0.5   # scale-down, replay
      scanInterval: 10s              # replay: CA's --scan-interval
      scaleDownUnneededTime: 10m     # replay: CA's --scale-down-unneeded-time
      scaleDownDelayAfterAdd: 10m    # replay: CA's --scale-down-delay-after-add
      nodeProvisionDelay: 60s        # replay: --node-provision-delay
      sampleInterval: 1m             # replay: --sample-interval
      until: null                    # replay: --until (null: when nothing can change)

``cluster`` may be left out when ``traces`` is given (each trace is then the whole input).
A ``seeds`` variant overrides ``options.seed`` (simulate's and replay's tie-breaking, the
experiment's shuffle).

The ``experiment`` command is the FGD paper's GPU-sharing experiment
(`schedsim.replay.experiment`, ``schedsim replay --inflate``), alone in ``commands``, with
``traces`` naming Alibaba openb pod lists (one CSV each) and a top-level section:

.. code-block:: yaml

    commands: [experiment]
    experiment:
      alibabaNodes: openb_node_list_gpu_node.csv   # required
      inflate: 1.3                                 # the target workload x GPU capacity
    axes:
      traces: {default: openb_pod_list_default.csv}
      schedulerConfig: {fgd: fgd.yaml, bestfit: bestfit.yaml}
      seeds: [42, 43, 44]

GPUs are shared DRA devices (``--gpu-as dra``), so the DRAConsumableCapacity gate is turned
on in every config variant, as ``schedsim replay --inflate`` does.
``expander``, ``maxNodesPerScaleUp``, the thresholds and ``seed`` apply to replay too (its
flags of the same meaning). Paths are relative to the spec file's directory and appear in
messages as the spec gives them. Every referenced file is read and checked
when the spec is loaded (a node-groups file or a scheduler configuration kube-scheduler would
refuse is a spec error), so a sweep never starts on a typo; a configuration whose plugins
cannot be built fails its own scenarios only (see `schedsim.sweep.executors`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

import attrs

from schedsim.api.apps.workload_scale import check_factor
from schedsim.api.errors import ManifestError
from schedsim.api.loading import inputs
from schedsim.api.loading.decode import key_path, type_name
from schedsim.api.loading.decode import yaml_value as _yaml
from schedsim.api.loading.loader import read_documents
from schedsim.autoscaler.nodegroups import NodeGroup, NodeGroupError, load_node_groups
from schedsim.autoscaler.scaleup import DEFAULT_MAX_NODES_PER_SCALE_UP, EXPANDERS
from schedsim.engine import EngineConfig
from schedsim.framework.features import FeatureGateError
from schedsim.replay.autoscaler import AutoscalerOptions, OptionError
from schedsim.replay.clock import parse_duration

__all__ = [
    "AXES",
    "COMMANDS",
    "ConfigVariant",
    "ExperimentOptions",
    "GroupsVariant",
    "SeedVariant",
    "SweepOptions",
    "SweepSpec",
    "TraceVariant",
    "digest",
    "load_spec",
]

COMMANDS: Final = ("simulate", "scale-up", "scale-down", "replay", "experiment")
"""The commands a scenario can run, as the ``schedsim`` subcommands of the same names."""

AXES: Final = (
    "traces",
    "workloadScale",
    "nodeGroups",
    "schedulerConfig",
    "featureGates",
    "seeds",
)
"""The axes, in the order scenario names list them (then the command)."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_OPTIONS: Final = {
    "placement": "placement",
    "seed": "seed",
    "expander": "expander",
    "maxNodesPerScaleUp": "max_nodes_per_scale_up",
    "utilizationThreshold": "threshold",
    "gpuUtilizationThreshold": "gpu_threshold",
    "scanInterval": "scan_interval",
    "scaleDownUnneededTime": "scale_down_unneeded_time",
    "scaleDownDelayAfterAdd": "scale_down_delay_after_add",
    "nodeProvisionDelay": "node_provision_delay",
    "sampleInterval": "sample_interval",
    "until": "until",
}
_DURATIONS: Final = (
    "scanInterval",
    "scaleDownUnneededTime",
    "scaleDownDelayAfterAdd",
    "nodeProvisionDelay",
    "sampleInterval",
    "until",
)


@attrs.frozen
class SweepOptions:
    """The commands' options (the same for every scenario; the ``schedsim`` flags of the
    same names).

    Attributes:
        placement: simulate's ``--placement`` (``kube-scheduler`` or ``first-fit``).
        seed: simulate's ``--seed`` (None: no seeded tie-breaking).
        expander: scale-up's ``--expander``.
        max_nodes_per_scale_up: scale-up's ``--max-nodes-per-scaleup`` (nodes).
        threshold, gpu_threshold: scale-down's utilization thresholds (fractions 0..1).
        scan_interval, scale_down_unneeded_time, scale_down_delay_after_add,
        node_provision_delay: replay's autoscaler settings (seconds; `AutoscalerOptions`).
        sample_interval: replay's ``--sample-interval`` (seconds, > 0).
        until: replay's ``--until`` (seconds; None: when nothing can change any more).
    """

    placement: str = "kube-scheduler"
    seed: int | None = None
    expander: str = "least-waste"
    max_nodes_per_scale_up: int = DEFAULT_MAX_NODES_PER_SCALE_UP
    threshold: float = 0.5
    gpu_threshold: float = 0.5
    scan_interval: float = 10.0
    scale_down_unneeded_time: float = 600.0
    scale_down_delay_after_add: float = 600.0
    node_provision_delay: float = 60.0
    sample_interval: float = 60.0
    until: float | None = None

    def autoscaler(self) -> AutoscalerOptions:
        """Replay's autoscaler settings (CA's defaults for what the spec does not set).

        Raises:
            ValueError: a value `AutoscalerOptions` refuses.
        """
        return AutoscalerOptions(
            scan_interval=self.scan_interval,
            scale_down_unneeded_time=self.scale_down_unneeded_time,
            scale_down_delay_after_add=self.scale_down_delay_after_add,
            scale_down_utilization_threshold=self.threshold,
            scale_down_gpu_utilization_threshold=self.gpu_threshold,
            node_provision_delay=self.node_provision_delay,
            expander=self.expander,
            max_nodes_per_scaleup=self.max_nodes_per_scale_up,
        )


@attrs.frozen
class TraceVariant:
    """One value of the ``traces`` axis: its name, its manifest paths (added to the spec's
    ``cluster``; none when the axis is absent) and the sha256 of their bytes. Scenarios
    run on the cluster loaded from ``cluster + paths``, keyed by ``name``."""

    name: str
    paths: tuple[str, ...]
    digest: str


@attrs.frozen
class ScaleVariant:
    """One value of the ``workloadScale`` axis: its name and factor (1: as read)."""

    name: str
    factor: float


@attrs.frozen
class SeedVariant:
    """One value of the ``seeds`` axis: its name and seed (None: ``options.seed``)."""

    name: str
    seed: int | None


@attrs.frozen
class ExperimentOptions:
    """The ``experiment`` section: the node list and the target workload.

    Attributes:
        alibaba_nodes: the openb node list CSV (joined to the spec's directory).
        inflate: the target workload as a multiple of the cluster's GPU capacity (> 0).
        digest: sha256 of the node list's bytes and ``inflate``.
    """

    alibaba_nodes: str
    inflate: float
    digest: str


@attrs.frozen
class GroupsVariant:
    """One value of the ``nodeGroups`` axis: its name, file (None: no node groups) and the
    groups read from it."""

    name: str
    path: str | None
    groups: tuple[NodeGroup, ...] | None
    digest: str


@attrs.frozen
class ConfigVariant:
    """One value of the ``schedulerConfig`` x ``featureGates`` axes: the names of both
    variants and the `EngineConfig` they make."""

    config_name: str
    gates_name: str
    config: EngineConfig
    digest: str


@attrs.frozen
class SweepSpec:
    """A loaded spec (see the module docstring for the format).

    Attributes:
        source: the spec file.
        cluster: the manifest paths (joined to the spec's directory; may be empty when
            ``traces`` is given).
        cluster_digest: sha256 of the manifests' bytes (resumed results must match it).
        commands: the command axis, in spec order.
        traces: the ``traces`` variants, in spec order (one unnamed variant without paths
            when the axis is absent).
        scales: the ``workloadScale`` variants, in spec order (one unnamed variant of
            factor 1 when the axis is absent).
        groups: the ``nodeGroups`` variants, in spec order (one unnamed, empty one when the
            axis is absent).
        configs: the ``schedulerConfig`` x ``featureGates`` variants, in spec order.
        seeds: the ``seeds`` variants, in spec order (one unnamed variant of
            ``options.seed`` when the axis is absent).
        experiment: the ``experiment`` section (None unless the command is experiment).
        warnings: what the spec sets that none of its commands uses (`_unused_options`).
        options: the commands' options.
        named_axes: the axes the spec names (scenario names list only these and the
            command).
    """

    source: str
    cluster: tuple[str, ...]
    cluster_digest: str
    commands: tuple[str, ...]
    traces: tuple[TraceVariant, ...]
    scales: tuple[ScaleVariant, ...]
    groups: tuple[GroupsVariant, ...]
    configs: tuple[ConfigVariant, ...]
    options: SweepOptions
    named_axes: tuple[str, ...]
    seeds: tuple[SeedVariant, ...] = (SeedVariant("", None),)
    experiment: ExperimentOptions | None = None
    warnings: tuple[str, ...] = ()


_OPTION_COMMANDS: Final = {
    "placement": ("simulate",),
    "seed": ("simulate", "replay", "experiment"),
    "expander": ("scale-up", "replay"),
    "maxNodesPerScaleUp": ("scale-up", "replay"),
    "utilizationThreshold": ("scale-down", "replay"),
    "gpuUtilizationThreshold": ("scale-down", "replay"),
    **dict.fromkeys(
        (
            "scanInterval",
            "scaleDownUnneededTime",
            "scaleDownDelayAfterAdd",
            "nodeProvisionDelay",
            "sampleInterval",
            "until",
        ),
        ("replay",),
    ),
}
"""The commands each option of ``options`` applies to (docs/cli.md's sweep spec)."""


def _unused_options(source: str, raw: Any, commands: list[str]) -> tuple[str, ...]:
    """A warning for each option the spec sets that none of its ``commands`` uses: nothing
    is silently ignored."""
    if not isinstance(raw, Mapping):
        return ()
    out = []
    for key in raw:
        used_by = _OPTION_COMMANDS.get(key, ())
        if used_by and not set(used_by) & set(commands):
            out.append(
                f"{source}: options.{key}: ignored: used only by {', '.join(used_by)}, and the "
                f"spec runs {', '.join(commands)} (remove it, or add such a command)"
            )
    return tuple(out)


def digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _file_digest(path: str) -> str:
    h = hashlib.sha256()
    paths = [path]
    if os.path.isdir(path):
        inputs.note_dir(path)  # no output may be written into it (schedsim.cli.output)
        paths = sorted(
            os.path.join(root, f)
            for root, _, files in os.walk(path)
            for f in files
            if f.endswith((".yaml", ".yml", ".json"))
        )
    for p in paths:
        inputs.note(p)  # no output may replace it (schedsim.cli.output)
        try:
            with open(p, "rb") as fh:
                h.update(p.encode() + b"\0" + fh.read())
        except OSError:
            pass  # loading the cluster reports it
    return h.hexdigest()


def _variants(source: str, axes: Mapping[str, Any], axis: str) -> list[tuple[str, Any]]:
    raw = axes.get(axis)
    if raw is None:
        return []
    if not isinstance(raw, Mapping) or not raw:
        raise ManifestError(f"{source}: axes.{axis}: expected a mapping of variant name -> value")
    for name in raw:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ManifestError(
                f"{source}: {key_path(f'axes.{axis}', str(name))}: variant names are letters, "
                "digits, '_', '.', '-'"
            )
    return list(raw.items())


def _path(source: str, where: str, value: Any) -> str:
    """The path field ``where`` names, joined to the spec's directory; it must exist."""
    if not isinstance(value, str) or not value:
        raise ManifestError(f"{source}: {where}: expected a file path, got {_yaml(value)}")
    path = os.path.join(os.path.dirname(source), value)
    if not os.path.exists(path):
        raise ManifestError(
            f"{source}: {where}: {path}: no such file or directory (paths are relative to "
            "the spec's directory)"
        )
    return path


@contextmanager
def _reading(source: str, where: str) -> Iterator[None]:
    """Errors of the file that field ``where`` names say so: ``SPEC: FIELD: FILE: problem``
    (one line per problem)."""
    try:
        yield
    except (ManifestError, NodeGroupError) as e:
        lines = str(e).splitlines() or [""]
        raise ManifestError("\n".join(f"{source}: {where}: {line}" for line in lines)) from None


def _options(source: str, raw: Any) -> SweepOptions:
    if raw is None:
        return SweepOptions()
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{source}: options: expected a mapping")
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in _OPTIONS:
            raise ManifestError(
                f"{source}: options.{key}: unknown option (expected one of {', '.join(_OPTIONS)})"
            )
        if key in _DURATIONS and value is not None:
            value = _duration(source, key, value)
        kwargs[_OPTIONS[key]] = value
    opts = SweepOptions(**kwargs)
    checks = [
        (
            "placement",
            opts.placement in ("kube-scheduler", "first-fit"),
            "expected kube-scheduler or first-fit",
        ),
        (
            "seed",
            opts.seed is None or _is_int(opts.seed),
            "expected an integer or null",
        ),
        ("expander", opts.expander in EXPANDERS, f"expected one of {', '.join(EXPANDERS)}"),
        (
            "maxNodesPerScaleUp",
            _is_int(opts.max_nodes_per_scale_up) and opts.max_nodes_per_scale_up >= 0,
            "expected an integer >= 0",
        ),
        (
            "utilizationThreshold",
            _is_number(opts.threshold) and 0 <= opts.threshold <= 1,
            "expected a number in [0, 1]",
        ),
        (
            "gpuUtilizationThreshold",
            _is_number(opts.gpu_threshold) and 0 <= opts.gpu_threshold <= 1,
            "expected a number in [0, 1]",
        ),
    ]
    for field, ok, problem in checks:
        if not ok:
            raise ManifestError(f"{source}: options.{field}: {problem}, got {_yaml(raw[field])}")
    if not opts.sample_interval > 0:
        raise ManifestError(f"{source}: options.sampleInterval: must be > 0")
    try:
        opts.autoscaler()
    except OptionError as e:  # named as the spec names it
        field = next((k for k, v in _OPTIONS.items() if v == e.option), e.option)
        raise ManifestError(f"{source}: options.{field}: {e.problem}") from None
    return opts


def _is_int(value: Any) -> bool:
    """A YAML integer (``true`` is a bool, not the number 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    """A YAML integer or float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _duration(source: str, key: str, value: Any) -> float:
    """A duration option: a Go duration (``10m``) or a number of seconds, >= 0."""
    try:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ValueError(f"expected a duration (10s, 10m, 1h) or seconds, got {_yaml(value)}")
        seconds = parse_duration(value) if isinstance(value, str) else float(value)
        if not 0 <= seconds < float("inf"):
            raise ValueError(f"must be a finite duration >= 0, got {_yaml(value)}")
    except ValueError as e:
        raise ManifestError(f"{source}: options.{key}: {e}") from None
    return seconds


def _gates(source: str, name: str, value: Any) -> dict[str, bool]:
    where = f"{source}: {key_path('axes.featureGates', name)}"
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ManifestError(f"{where}: expected a mapping of gate name -> true/false")
    for gate, on in value.items():
        if not isinstance(on, bool):
            raise ManifestError(
                f"{key_path(where, str(gate))}: expected true or false, got {_yaml(on)}"
            )
    return dict(value)


MAX_SCENARIOS: Final = 100_000
"""The most scenarios one sweep runs; a larger grid is refused before anything is built."""


def _check_grid_size(source: str, axes: Mapping[str, Any], commands: int) -> None:
    """Refuse a grid of more than `MAX_SCENARIOS` scenarios, counted from the axes' sizes
    (O(axes): no variant file is read and no scenario is built to count them)."""
    sizes = [
        (a, len(v)) for a in AXES if isinstance(v := axes.get(a), (Mapping, list)) and len(v) > 1
    ]
    count = commands * math.prod(n for _, n in sizes)
    if count > MAX_SCENARIOS:
        factors = " x ".join(f"{n} {a}" for a, n in sizes)
        raise ManifestError(
            f"{source}: axes: {count:,} scenarios ({factors} x {commands} command(s)), more "
            f"than one sweep runs ({MAX_SCENARIOS:,}); split the grid into several specs"
        )


def _configs(
    source: str, axes: Mapping[str, Any], required_gates: Mapping[str, bool] | None = None
) -> tuple[ConfigVariant, ...]:
    configs = _variants(source, axes, "schedulerConfig") or [("", None)]
    gates = _variants(source, axes, "featureGates") or [("", {})]
    out = []
    for cname, cvalue in configs:
        path = (
            None
            if cvalue is None
            else _path(source, key_path("axes.schedulerConfig", cname), cvalue)
        )
        for gname, gvalue in gates:
            overrides = _gates(source, gname, gvalue) | dict(required_gates or {})
            try:
                if path is None:
                    config = EngineConfig(feature_gates=overrides)
                else:
                    with _reading(source, key_path("axes.schedulerConfig", cname)):
                        config = EngineConfig.from_config_file(path, feature_gates=overrides)
            except FeatureGateError as e:
                raise ManifestError(
                    f"{source}: {key_path('axes.featureGates', gname)}: {e.args[0]}"
                ) from None
            key = digest(None if path is None else _file_digest(path), sorted(overrides.items()))
            out.append(ConfigVariant(cname, gname, config, key))
    return tuple(out)


def _groups(source: str, axes: Mapping[str, Any]) -> tuple[GroupsVariant, ...]:
    out = []
    for name, value in _variants(source, axes, "nodeGroups"):
        if value is None:
            out.append(GroupsVariant(name, None, None, digest(None)))
            continue
        path = _path(source, key_path("axes.nodeGroups", name), value)
        with _reading(source, key_path("axes.nodeGroups", name)):
            groups = tuple(load_node_groups(path))
        out.append(GroupsVariant(name, path, groups, _file_digest(path)))
    return tuple(out) or (GroupsVariant("", None, None, digest(None)),)


def _paths(source: str, where: str, value: Any) -> tuple[str, ...]:
    """A file or directory, or a non-empty list of them, joined to the spec's directory."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ManifestError(f"{source}: {where}: expected a file path or a list of them")
    return tuple(_path(source, f"{where}[{i}]", v) for i, v in enumerate(value))


def _traces(source: str, axes: Mapping[str, Any]) -> tuple[TraceVariant, ...]:
    out = []
    for name, value in _variants(source, axes, "traces"):
        paths = _paths(source, key_path("axes.traces", name), value)
        out.append(TraceVariant(name, paths, digest([_file_digest(p) for p in paths])))
    return tuple(out) or (TraceVariant("", (), digest([])),)


def _seeds(source: str, axes: Mapping[str, Any]) -> tuple[SeedVariant, ...]:
    raw = axes.get("seeds")
    if isinstance(raw, list):
        if not raw:
            raise ManifestError(f"{source}: axes.seeds: expected a non-empty list of integers")
        pairs = [(str(v) if _is_int(v) else "", v) for v in raw]
    else:
        pairs = _variants(source, axes, "seeds")
    out = []
    for name, value in pairs:
        if not _is_int(value):
            raise ManifestError(f"{source}: axes.seeds: expected integers, got {_yaml(value)}")
        out.append(SeedVariant(name, int(value)))
    if len({v.name for v in out}) != len(out):
        raise ManifestError(f"{source}: axes.seeds: a seed is listed twice")
    return tuple(out) or (SeedVariant("", None),)


def _experiment(
    source: str, raw: Any, commands: list[str], axes: Mapping[str, Any], has_cluster: bool
) -> ExperimentOptions | None:
    """The ``experiment`` section, checked against the commands and axes it goes with."""
    if "experiment" not in commands:
        if raw is not None:
            raise ManifestError(f"{source}: experiment: only with the experiment command")
        return None
    if len(commands) != 1:
        raise ManifestError(
            f"{source}: commands: experiment runs alone (its traces are Alibaba pod lists)"
        )
    if not isinstance(raw, Mapping) or "alibabaNodes" not in raw:
        raise ManifestError(
            f"{source}: experiment: required with the experiment command: a mapping with "
            "alibabaNodes (the openb node list CSV) and optionally inflate"
        )
    for key in raw:
        if key not in ("alibabaNodes", "inflate"):
            raise ManifestError(
                f"{source}: experiment.{key}: unknown field (expected alibabaNodes, inflate)"
            )
    if has_cluster:
        raise ManifestError(
            f"{source}: cluster: the experiment's cluster is its node list; leave cluster out"
        )
    if axes.get("traces") is None:
        raise ManifestError(f"{source}: axes.traces: required with experiment (pod list CSVs)")
    for axis in ("workloadScale", "nodeGroups"):
        if axes.get(axis) is not None:
            raise ManifestError(f"{source}: axes.{axis}: not used by the experiment command")
    inflate = raw.get("inflate", 1.3)
    if not _is_number(inflate) or not inflate > 0 or not math.isfinite(inflate):
        raise ManifestError(
            f"{source}: experiment.inflate: expected a finite number > 0, got {_yaml(inflate)}"
        )
    nodes = _path(source, "experiment.alibabaNodes", raw["alibabaNodes"])
    return ExperimentOptions(nodes, float(inflate), digest(_file_digest(nodes), inflate))


def _scales(source: str, axes: Mapping[str, Any]) -> tuple[ScaleVariant, ...]:
    out = []
    for name, value in _variants(source, axes, "workloadScale"):
        try:
            check_factor(value)
        except ValueError as e:
            raise ManifestError(f"{source}: {key_path('axes.workloadScale', name)}: {e}") from None
        out.append(ScaleVariant(name, float(value)))
    return tuple(out) or (ScaleVariant("", 1.0),)


def load_spec(path: str) -> SweepSpec:
    """Read and check a sweep spec, and every node-groups and scheduler configuration file
    it names (the manifests of ``cluster`` and ``traces`` are loaded by
    `schedsim.sweep.load_clusters`). Paths are joined to the spec's directory as given, so
    messages quote them relative when the spec path is.

    Raises:
        ManifestError: ``FILE: FIELD: problem`` for a malformed spec (unknown field or
            command, an axis that is not a mapping of names, an option out of range, a gate
            that does not exist, a duration that is not one, a command that needs node
            groups without a nodeGroups axis), and the errors of the node-groups and
            scheduler configuration files it names (``THATFILE: FIELD: problem``).
    """
    docs = [doc for doc in read_documents(path) if doc is not None]
    if len(docs) != 1:
        raise ManifestError(f"{path}: expected one YAML document, got {len(docs)}")
    doc = docs[0]
    if not isinstance(doc, Mapping):
        raise ManifestError(f"{path}: expected a mapping (cluster, commands, axes, options)")
    for key in doc:
        if key not in (
            "apiVersion",
            "kind",
            "cluster",
            "commands",
            "axes",
            "options",
            "experiment",
        ):
            raise ManifestError(
                f"{path}: {key}: unknown field (expected cluster, commands, axes, options, "
                "experiment)"
            )
    if doc.get("kind", "Sweep") != "Sweep":
        raise ManifestError(f"{path}: kind: expected Sweep, got {_yaml(doc.get('kind'))}")
    axes = doc.get("axes")
    if axes is None:  # left out or null: no axes (an empty list is not a mapping)
        axes = {}
    if not isinstance(axes, Mapping):
        raise ManifestError(f"{path}: axes: expected a mapping of axis -> variants")
    for key in axes:
        if key not in AXES:
            raise ManifestError(f"{path}: axes.{key}: unknown axis (expected {', '.join(AXES)})")
    cluster = doc.get("cluster")
    if cluster is None and axes.get("traces") is not None:
        paths: tuple[str, ...] = ()
    else:
        if isinstance(cluster, str):
            cluster = [cluster]
        if cluster is not None and not isinstance(cluster, list):
            raise ManifestError(
                f"{path}: cluster: expected a list of manifest files or directories, got "
                f"{type_name(cluster)}"
            )
        if not cluster:
            raise ManifestError(
                f"{path}: cluster: required (a list of manifest files or directories) unless "
                "axes.traces is given"
            )
        paths = tuple(_path(path, f"cluster[{i}]", c) for i, c in enumerate(cluster))
    commands = doc.get("commands")
    if isinstance(commands, str):
        commands = [commands]
    if commands is not None and not isinstance(commands, list):
        raise ManifestError(
            f"{path}: commands: expected a list of {', '.join(COMMANDS)}, got {type_name(commands)}"
        )
    if not commands:
        raise ManifestError(f"{path}: commands: required (a list of {', '.join(COMMANDS)})")
    for i, c in enumerate(commands):
        if c not in COMMANDS:
            raise ManifestError(
                f"{path}: commands[{i}]: unknown command {_yaml(c)} "
                f"(expected {', '.join(COMMANDS)})"
            )
    if len(set(commands)) != len(commands):
        raise ManifestError(f"{path}: commands: a command is listed twice")
    _check_grid_size(path, axes, len(commands))
    experiment = _experiment(path, doc.get("experiment"), commands, axes, cluster is not None)
    groups = _groups(path, axes)
    if "scale-up" in commands and any(g.groups is None for g in groups):
        raise ManifestError(
            f"{path}: axes.nodeGroups: scale-up needs a node-groups file in every variant"
        )
    return SweepSpec(
        source=path,
        cluster=paths,
        cluster_digest=digest([_file_digest(p) for p in paths]),
        commands=tuple(commands),
        traces=_traces(path, axes),
        scales=_scales(path, axes),
        groups=groups,
        # the experiment's GPUs are shared DRA devices, as `replay --inflate` turns it on
        configs=_configs(path, axes, {"DRAConsumableCapacity": True} if experiment else None),
        options=_options(path, doc.get("options")),
        named_axes=tuple(a for a in AXES if axes.get(a) is not None),
        seeds=_seeds(path, axes),
        experiment=experiment,
        warnings=_unused_options(path, doc.get("options"), commands),
    )
