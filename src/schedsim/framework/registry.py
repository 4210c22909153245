"""Where plugins come from: the ``schedsim.plugins`` entry-point group (in-tree plugins
included), imported lazily by name, and ``--plugin module:Class`` specs."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from schedsim.framework.handle import PluginFactory
from schedsim.framework.plugin_results import describe_exception, load_failure

__all__ = [
    "ENTRY_POINT_GROUP",
    "EntryPointRegistry",
    "PluginError",
    "discover_plugins",
    "load_plugin_spec",
    "plugin_sources",
]

ENTRY_POINT_GROUP = "schedsim.plugins"

# entry points and their sources per (group, import path and each entry's modification
# time): importlib.metadata reads every installed distribution's entry_points.txt (and
# plugin_sources every plugin distribution's METADATA) on each call, ~20 ms per run; a
# distribution installed or removed changes its directory's mtime, a new path entry the key
_found: dict[tuple[Any, ...], tuple[Any, dict[str, str] | None]] = {}


def _path_key(group: str) -> tuple[Any, ...]:
    stamps: list[object] = [group]
    for entry in sys.path:
        try:
            stamps.append((entry, os.stat(entry or ".").st_mtime_ns))
        except (OSError, ValueError, TypeError):
            stamps.append((entry, None))
    return tuple(stamps)


def _entry_points(group: str) -> tuple[tuple[Any, ...], Any]:
    """``importlib.metadata.entry_points(group=group)``, read once per import path state."""
    key = _path_key(group)
    hit = _found.get(key)
    if hit is None:
        if len(_found) > 16:
            _found.clear()
        hit = _found[key] = (importlib.metadata.entry_points(group=group), None)
    return key, hit[0]


class PluginError(ValueError):
    """A profile names an unknown plugin, or a plugin is invalid or rejects its args."""


class EntryPointRegistry(Mapping[str, PluginFactory]):
    """The plugins of an entry-point group, by name, each imported on first use.

    Only the plugins a profile names are imported, so one broken third-party plugin does not
    stop runs that don't use it.

    Args:
        group: the entry-point group.
        extra: plugins given directly (``--plugin``, tests); they win over entry points.

    Raises:
        PluginError: (on lookup) the entry point cannot be imported.
    """

    def __init__(
        self, group: str = ENTRY_POINT_GROUP, extra: Mapping[str, PluginFactory] | None = None
    ) -> None:
        self._entry_points = {ep.name: ep for ep in _entry_points(group)[1]}
        self._loaded: dict[str, PluginFactory] = dict(extra or {})

    def __getitem__(self, name: str) -> PluginFactory:
        factory = self._loaded.get(name)
        if factory is None:
            ep = self._entry_points[name]
            try:
                factory = ep.load()
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # a broken plugin (even sys.exit()): no traceback, no exit
                raise PluginError(
                    f"plugin {name!r} ({ep.value}) cannot be loaded: {describe_exception(e)}"
                ) from e
            self._loaded[name] = factory
        return factory

    def __iter__(self) -> Iterator[str]:
        return iter(self._entry_points.keys() | self._loaded.keys())

    def __len__(self) -> int:
        return len(self._entry_points.keys() | self._loaded.keys())


def discover_plugins(
    group: str = ENTRY_POINT_GROUP, extra: Mapping[str, PluginFactory] | None = None
) -> EntryPointRegistry:
    """Plugin factories registered in the entry-point ``group`` (plus ``extra``, which win),
    by plugin name, imported lazily (see `EntryPointRegistry`)."""
    return EntryPointRegistry(group, extra)


def plugin_sources(group: str = ENTRY_POINT_GROUP) -> dict[str, str]:
    """Where each entry-point plugin comes from: ``"<distribution> <version> (<module:attr>)"``.

    Does not import the plugins.
    """
    key, eps = _entry_points(group)
    known = _found[key][1]
    if known is not None:
        return dict(known)
    out: dict[str, str] = {}
    for ep in eps:
        dist = ep.dist
        where = f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"
        out[ep.name] = f"{where} ({ep.value})"
    _found[key] = (eps, out)
    return dict(out)


def load_plugin_spec(spec: str) -> tuple[str, PluginFactory]:
    """Import a plugin named on the command line as ``module:Class`` (``--plugin``).

    Returns:
        the plugin's ``name`` attribute and the class (its factory).

    Raises:
        PluginError: bad spec, import failure, or the object has no string ``name``.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise PluginError(f"--plugin {spec!r}: expected module:Class")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # any import-time failure of user code, sys.exit() included
        raise PluginError(f"--plugin {spec!r}: cannot load: {load_failure(e)}") from e
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        raise PluginError(f"--plugin {spec!r}: the plugin class has no string `name`")
    return name, obj
