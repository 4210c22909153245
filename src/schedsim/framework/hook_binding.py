"""Plugin hook methods made callable the fast way: a pluggy PluginManager that takes every
``schedsim_*`` method as a hook (like pytest), and `bind_hook`, which adapts an implementation
whose parameters differ from the spec's once, at profile build time, so the hot path calls
plain positional functions."""

from __future__ import annotations

import inspect
from typing import Any, cast

import pluggy

from schedsim.framework.hookspec import PROJECT
from schedsim.framework.registry import PluginError

__all__ = ["HOOK_PREFIX", "HookPluginManager", "bind_hook"]

HOOK_PREFIX = PROJECT + "_"
"""Every method of a plugin whose name starts with this is a hook implementation."""


class HookPluginManager(pluggy.PluginManager):
    """pluggy's PluginManager where every ``schedsim_*`` method is a hook implementation,
    marked or not (pytest does the same for ``pytest_*``)."""

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith(HOOK_PREFIX):
            return cast(pluggy.HookimplOpts, {})  # pluggy fills in the defaults
        return opts


def bind_hook(fn: Any, spec_args: tuple[str, ...], plugin: str, hook: str) -> Any:
    """``fn`` callable with the spec's arguments, positionally, in spec order.

    An implementation whose parameters are the spec's, in order, is returned as is (the
    common case: no extra call). One that takes fewer, reorders them or takes them keyword-only
    (as the typed protocols spell them) is wrapped once here.

    Raises:
        PluginError: a parameter without a default is not an argument of the hook spec.
    """
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: trust pluggy's check
        return fn
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    pos = tuple(p.name for p in params if p.kind in positional)
    kw_only = [p for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
    if not kw_only and pos == spec_args:
        return fn
    unknown = [
        p.name
        for p in params
        if p.name not in spec_args
        and p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if unknown:
        raise PluginError(
            f"plugin {plugin!r}: {hook}: parameter(s) {', '.join(unknown)} not in the hook "
            f"spec ({', '.join(spec_args)})"
        )
    if not kw_only and all(a in spec_args for a in pos):
        picks = tuple(spec_args.index(a) for a in pos)

        def call(*args: Any) -> Any:
            return fn(*(args[i] for i in picks))

        return call
    by_name = tuple(
        (p.name, spec_args.index(p.name))
        for p in params
        if p.name in spec_args and p.kind is not inspect.Parameter.POSITIONAL_ONLY
    )

    def call_by_name(*args: Any) -> Any:
        return fn(**{a: args[i] for a, i in by_name})

    return call_by_name
