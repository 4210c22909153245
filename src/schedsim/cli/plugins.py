"""``schedsim plugins``: every registered plugin with its extension points and source, then
each profile's plugins per extension point in the order they run.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from schedsim.cli.options import make_engine
from schedsim.framework.extension_points import HOOK_TITLES
from schedsim.framework.handle import PluginFactory
from schedsim.framework.runtime import PluginError


def list_plugins(args: argparse.Namespace) -> str:
    engine, sources = make_engine(args)
    registry: Mapping[str, PluginFactory] = engine.config.registry()
    rows = [("PLUGIN", "EXTENSION POINTS", "SOURCE")]
    for name in sorted(registry):
        try:
            points = ", ".join(_hooks_of(registry[name])) or "-"
        except PluginError as e:  # list it anyway: this is where people look for the cause
            points = f"(cannot be loaded: {e})"
        rows.append((name, points, sources.get(name, "")))
    w0 = max(len(r[0]) for r in rows) + 2
    w1 = max(len(r[1]) for r in rows) + 2
    lines = [f"{a:<{w0}}{b:<{w1}}{c}".rstrip() for a, b, c in rows]
    for framework in engine.frameworks.values():  # every profile, in configuration order
        lines.append("")
        lines.append(f"profile {framework.profile.scheduler_name!r}:")
        weights = framework.score_weights
        for point, names in framework.order().items():
            if point == "Score":  # each Score plugin with its weight, then which normalize
                shown = [f"{n} (weight {weights[n]})" for n in names]
                lines.append(f"  {point}: {', '.join(shown) or '-'}")
                normalize = framework.normalize_score_plugin_names
                lines.append(f"  NormalizeScore: {', '.join(normalize) or '-'}")
                continue
            lines.append(f"  {point}: {', '.join(names) or '-'}")
        if framework.not_emulated:
            lines.append(f"  not emulated (skipped): {', '.join(framework.not_emulated)}")
    return "\n".join(lines) + "\n"


def _hooks_of(factory: object) -> list[str]:
    return [title for hook, title in HOOK_TITLES.items() if callable(getattr(factory, hook, None))]
