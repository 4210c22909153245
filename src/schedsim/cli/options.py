"""Command-line options to an `Engine`: the one place they become an `EngineConfig`
(``--config``, ``--plugin``, ``--feature-gates``, ``--store``), with the warnings about
plugins that are enabled but not emulated or configured but not enabled.
"""

from __future__ import annotations

import argparse
import os
import sys

from schedsim.cli.common import UsageError
from schedsim.cli.output import warn
from schedsim.engine import Engine, EngineConfig
from schedsim.framework.features import FeatureGates
from schedsim.framework.runtime import PluginError, PluginTimings, load_plugin_spec, plugin_sources
from schedsim.framework.scheduler_config import SchedulerConfiguration, load_scheduler_configuration


def parse_gates(text: str | None) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, sep, val = part.partition("=")
        if not sep or val.strip().lower() not in ("true", "false"):
            raise UsageError(f"--feature-gates: expected NAME=true|false, got {part!r}")
        out[name.strip()] = val.strip().lower() == "true"
    return out


def plugin_sources_for(args: argparse.Namespace) -> dict[str, str]:
    """Where each plugin comes from: entry points, then ``--plugin`` ones (which win, with a
    warning when they replace an installed plugin).

    ``--plugin`` modules are imported with the current directory on the import path, as
    ``python -m`` would.
    """
    sources = plugin_sources()
    if args.plugin and os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    for spec in args.plugin:
        name, _ = load_plugin_spec(spec)
        if name in sources:
            warn(f"--plugin {spec} replaces the installed plugin {name!r} ({sources[name]})")
        sources[name] = f"--plugin {spec}"
    return sources


def engine_config(
    args: argparse.Namespace, embedded: tuple[SchedulerConfiguration, str] | None = None
) -> tuple[EngineConfig, dict[str, str]]:
    """The one place command-line options become an `EngineConfig` (and where each plugin
    comes from, for ``schedsim plugins``)."""
    try:
        gates = parse_gates(args.feature_gates)
        FeatureGates().with_overrides(gates)
    except KeyError as e:
        raise UsageError(f"--feature-gates: {e.args[0]}") from None
    sources = plugin_sources_for(args)
    loaded, config_file = embedded if embedded is not None else (None, args.config)
    profile = None if loaded is None else loaded.profiles[0]
    if args.config:
        loaded = load_scheduler_configuration(args.config)
        for w in loaded.warnings:
            warn(f"{args.config}: KubeSchedulerConfiguration: {w}")
        profile = loaded.profiles[0]
    config = EngineConfig(
        profile=profile,
        config_file=config_file,
        feature_gates=gates,
        plugins=tuple(args.plugin),
        store=getattr(args, "store", "delta"),
        scheduler_config=loaded,
    )
    return config, sources


EMBEDDED_CONFIG_HINT = (
    "the profile is the kube-scheduler-simulator export's embedded schedulerConfig: give "
    "--config FILE (a KubeSchedulerConfiguration) to run the export with that configuration "
    "instead"
)


def make_engine(
    args: argparse.Namespace,
    timings: PluginTimings | None = None,
    embedded: tuple[SchedulerConfiguration, str] | None = None,
) -> tuple[Engine, dict[str, str]]:
    """The engine of the run; ``embedded``: a kube-scheduler-simulator export's configuration and
    file, used without ``--config``."""
    config, sources = engine_config(args, embedded)
    try:
        engine = Engine(config, timings=timings)
    except PluginError as e:
        if embedded is None or args.config:
            raise
        # kube-scheduler 1.34 refuses this profile too (so --validate does not relax it);
        # the way on is another configuration
        raise PluginError(f"{e}; {EMBEDDED_CONFIG_HINT}") from None
    framework = engine.framework
    for spec in args.plugin:
        name, _ = load_plugin_spec(spec)
        if not any(name in fw.plugins for fw in engine.frameworks.values()):
            profiles = ", ".join(repr(n) for n in engine.frameworks)
            warn(
                f"--plugin {spec}: plugin {name!r} is loaded but enabled in no profile "
                f"({profiles}); it does not run (enable it in a --config profile)"
            )
    asked = [n for n in framework.not_emulated if n in framework.profile.explicit]
    if asked:
        warn(
            f"{config.config_file}: plugin(s) {', '.join(asked)} enabled but not emulated "
            "yet: they do not run"
        )
    for line in framework.config_warnings:
        warn(f"{config.config_file}: {line}")
    unused = sorted(set(framework.profile.plugin_args) - set(framework.plugins))
    if unused:
        warn(f"pluginConfig for plugin(s) not enabled in the profile: {', '.join(unused)}")
    return engine, sources
