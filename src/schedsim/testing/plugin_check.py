"""Conformance of a plugin package: what ``schedsim check-plugin`` runs, for a plugin's CI.

Two halves, each giving the exact problems (empty: conformant):

- `static_problems`: mypy ``--strict`` checks each plugin class against the typed protocols
  of the extension points it implements (``schedsim.framework.FilterPlugin``, ...: hook names,
  parameter names, their types and the results; the factory signature ``Cls(args, handle)``),
  through a generated module that assigns an instance to each protocol, as
  docs/writing-plugins.md step 4 does by hand.
- `dynamic_problems`: the runtime's own validation of the class (every ``schedsim_*`` method
  a known hook, its parameters the spec's; the constructor accepting the profile's args),
  then the plugin enabled at ``multiPoint`` in kube-scheduler's default profile scheduling a
  cluster (the shipped demo, or the caller's) on both snapshot stores: no attempt may fail
  with an Error status (an exception or a result of the wrong type), and the basic (clone on
  fork) and delta (layered) stores must give the same placements and messages, which a
  plugin that keeps state outside CycleState or mutates what the snapshot hands it breaks.
"""

from __future__ import annotations

import importlib
import os
import sysconfig
import tempfile
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from schedsim.framework import plugin as protocols
from schedsim.framework.runtime import PluginError, load_plugin_spec

__all__ = ["PROTOCOLS", "dynamic_problems", "protocols_of", "static_problems"]

PROTOCOLS: tuple[str, ...] = (
    "PreEnqueuePlugin",
    "QueueSortPlugin",
    "PreFilterPlugin",
    "PreFilterExtensions",
    "FilterPlugin",
    "PostFilterPlugin",
    "PreScorePlugin",
    "ScorePlugin",
    "ScoreExtensions",
    "ReservePlugin",
    "PermitPlugin",
    "PreBindPlugin",
    "BindPlugin",
    "PostBindPlugin",
)
"""The typed protocols of `schedsim.framework`, one per extension point (and the Extensions
ones), in the order the points run."""


def _own_hooks(name: str) -> set[str]:
    proto = getattr(protocols, name)
    return {
        attr
        for klass in proto.__mro__
        if klass.__name__ not in ("Plugin", "Protocol", "Generic", "object")
        for attr in vars(klass)
        if attr.startswith("schedsim_")
    }


def protocols_of(cls: object) -> list[str]:
    """The protocols ``cls`` should satisfy: those whose hooks it defines all of."""
    return [
        p
        for p in PROTOCOLS
        if _own_hooks(p) and all(callable(getattr(cls, h, None)) for h in _own_hooks(p))
    ]


def _root_of(module: Any) -> str | None:
    """The directory from which ``module``'s top-level package is imported, or None when that
    is an installation directory (site-packages): mypy finds installed packages itself and
    refuses to run with one in MYPYPATH."""
    file = getattr(module, "__file__", None)
    if file is None:
        return None
    path = Path(file).resolve()
    depth = module.__name__.count(".") + (1 if path.name == "__init__.py" else 0)
    root = path.parents[depth]
    installed = {Path(sysconfig.get_path(k)).resolve() for k in ("purelib", "platlib")}
    return None if root in installed else str(root)


def static_problems(specs: Sequence[str]) -> list[str]:
    """mypy ``--strict`` of each ``MODULE:CLASS`` against its protocols (see the module
    docstring): one problem per mypy error, or one naming a class that implements no
    extension point."""
    from mypy import api  # a test dependency; imported only when asked

    import schedsim

    problems: list[str] = []
    lines = ["from schedsim.framework import Handle"]
    # schedsim's own sources too: an editable install is an import hook mypy cannot follow
    own = _root_of(schedsim)
    roots: list[str] = [own] if own is not None else []
    for i, spec in enumerate(specs):
        module_name, _, class_name = spec.partition(":")
        _, cls = load_plugin_spec(spec)
        root = _root_of(importlib.import_module(module_name))
        if root is not None and root not in roots:
            roots.append(root)
        found = protocols_of(cls)
        if not found:
            problems.append(f"{spec}: implements no extension point (no schedsim_* hook)")
            continue
        lines.append(f"from {module_name} import {class_name} as _Plugin{i}")
        lines.append(f"_plugin{i} = _Plugin{i}({{}}, Handle())")
        for p in found:
            lines.append(f"from schedsim.framework import {p}")
            lines.append(f"_{p}_{i}: {p} = _plugin{i}  # {spec} as {p}")
    with tempfile.TemporaryDirectory() as tmp:
        check = Path(tmp) / "schedsim_plugin_conformance.py"
        check.write_text("\n".join(lines) + "\n")
        env_path = os.environ.get("MYPYPATH")
        os.environ["MYPYPATH"] = os.pathsep.join([*roots, *([env_path] if env_path else [])])
        try:
            out, err, status = api.run(
                ["--strict", "--no-incremental", "--cache-dir", os.devnull, str(check)]
            )
        finally:
            if env_path is None:
                os.environ.pop("MYPYPATH", None)
            else:
                os.environ["MYPYPATH"] = env_path
    for line in out.splitlines():
        if ": error:" in line:
            problems.append(_explain(line, lines))
    # mypy reports some setup problems (a site-packages directory in MYPYPATH) on its own
    # stdout with status 0 and no verdict: no "Success" line means it did not check
    if status not in (0, 1) or (status == 0 and "Success" not in out):
        problems.append(f"mypy could not run: {(err or out).strip() or 'no result'}")
    return problems


def _explain(line: str, lines: Sequence[str]) -> str:
    """A mypy line on the generated module, with the assignment it is about."""
    try:
        _, lineno, rest = line.split(":", 2)
        text = lines[int(lineno) - 1]
    except (ValueError, IndexError):
        return f"mypy: {line}"
    what = text.split("# ", 1)[1] if "# " in text else text
    return f"mypy --strict: {what}:{rest}"


def dynamic_problems(
    specs: Sequence[str],
    *,
    cluster_paths: Sequence[str] = (),
    plugin_args: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """The runtime's validation, then a run on both stores (see the module docstring).

    Args:
        specs: ``MODULE:CLASS`` of each plugin.
        cluster_paths: manifests to schedule (default: the shipped demo cluster).
        plugin_args: plugin name -> its ``pluginConfig`` args (default ``{}``).
    """
    from schedsim.engine import Cluster, Engine, EngineConfig
    from schedsim.framework.scheduler_config import scheduler_configuration_from_mapping

    problems: list[str] = []
    names = []
    for spec in specs:
        try:
            name, _ = load_plugin_spec(spec)
        except PluginError as e:
            problems.append(f"{spec}: {e}")
            continue
        names.append(name)
    if problems:
        return problems
    doc: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": n} for n in names]}},
                "pluginConfig": [
                    {"name": n, "args": dict((plugin_args or {}).get(n, {}))} for n in names
                ],
            }
        ],
    }
    config = scheduler_configuration_from_mapping(doc)
    if cluster_paths:
        cluster = Cluster.from_paths(list(cluster_paths))
    else:
        text = resources.files("schedsim.examples").joinpath("demo-cluster.yaml").read_text()
        cluster = Cluster.from_text(text, "<example demo-cluster.yaml>")
    loaded_specs: Any = tuple(specs)  # EngineConfig converts with tuple()
    seen: dict[str, list[tuple[str, str | None, str]]] = {}
    for store in ("basic", "delta"):
        try:
            engine = Engine(
                EngineConfig(
                    profile=config.profiles[0],
                    plugins=loaded_specs,
                    store=store,
                    scheduler_config=config,
                )
            )
            result = engine.simulate(cluster)
        except PluginError as e:
            return [*problems, f"building the profile: {e}"]
        rows = [(o.pod.key, o.node_name, o.message) for o in result.outcomes]
        seen[store] = rows
        for o in result.outcomes:
            if o.error and store == "basic":
                problems.append(f"pod {o.pod.key}: the attempt failed: {o.message}")
    if seen["basic"] != seen["delta"]:
        for (key, a, msg_a), (_, b, msg_b) in zip(seen["basic"], seen["delta"], strict=False):
            if (a, msg_a) != (b, msg_b):
                problems.append(
                    f"pod {key}: the basic store places it on {a or '<none>'} ({msg_a or 'ok'}), "
                    f"the delta store on {b or '<none>'} ({msg_b or 'ok'}): the plugin depends "
                    "on state outside CycleState or changes what the snapshot returns"
                )
    return problems
