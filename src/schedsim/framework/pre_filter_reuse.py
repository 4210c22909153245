"""Reusing PreFilter outcomes that depend on the pod alone, between attempts of one pod.

The Cluster Autoscaler's simulations run PreFilter for every placement they try
(``RunFiltersOnNode``, ``RunFiltersUntilPassingNode``): a replay's scale-down plans move the
same pods again at every plan, and for a pod without volumes, claims, affinity or spread
constraints nine of the ten default PreFilters compute the same thing each time (a Skip, the
pod's request vector, its host ports). schedsim keeps, per pod object, what those plugins
returned and wrote into the CycleState, and gives it back instead of calling them; the other
plugins run as before, in profile order, so the merged result, the first failure and the
Skip set are what `Framework.run_pre_filter_plugins` gives.

**The rule.** A plugin's outcome is kept only when the plugin is in-tree (its class comes
from ``schedsim_plugins``, so a ``--plugin`` replacing it turns this off for it) and
declares, for the pod, ``pre_filter_reusable(pod) -> bool`` True: its PreFilter's outcome
and what it writes into the CycleState depend on the pod object and the plugin's own
configuration (args, feature gates) only, not on the cluster (nodes, pods, listers), and
nothing later in the attempt (Filter, Reserve, Unreserve) changes the values it wrote, so
attempts may share them. And only an outcome that is None or a ``Success``/``Skip``
`Status` is kept (a rejection, an error or a `PreFilterResult` runs the plugin again each
time). Pods are immutable, so the pod object identifies its inputs; the memo holds the pod
(no id reuse) and is emptied past `MEMO_LIMIT` pods. Nothing is kept when the framework
times plugin calls (the timings count calls).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from schedsim.api.core import Pod
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.interface import NodeInfo
from schedsim.framework.status import Code, Status

__all__ = ["MEMO_LIMIT", "PreFilterChain", "PreFilterReuse"]

MEMO_LIMIT: Final = 1 << 15
"""Pods whose PreFilter chain is kept; the memo is emptied past this many."""

_IN_TREE_MODULE = "schedsim_plugins."

PreFilterChain = tuple[tuple[str, Callable[..., Any]], ...]
"""(plugin name, PreFilter function) in profile order, as `Framework` runs them."""

_MISSING: Final = object()
_CANONICAL_PER_TYPE: Final = 8
"""Distinct kept values remembered per type for sharing (`PreFilterReuse._shared`)."""
_KEPT_CODES: Final = (Code.Success, Code.Skip)


def _keepable(out: object) -> bool:
    """None, or a plain Success/Skip `Status`: what does not stop or narrow the run."""
    if out is None:
        return True
    return isinstance(out, Status) and out.__class__ is Status and out.code in _KEPT_CODES


class PreFilterReuse:
    """The per-pod chains of one framework (see the module docstring).

    Args:
        chain: the framework's PreFilter chain.
        plugins: the framework's plugins by name.

    Time: `chain_for` O(1) for a known pod; O(plugins) calls of ``pre_filter_reusable``
    once per pod.
    """

    def __init__(self, chain: PreFilterChain, plugins: dict[str, Any]) -> None:
        self._chain = chain
        self._reusable: dict[str, Callable[[Pod], bool]] = {}
        for name, _ in chain:
            plugin = plugins.get(name)
            method = getattr(plugin, "pre_filter_reusable", None)
            if method is not None and type(plugin).__module__.startswith(_IN_TREE_MODULE):
                self._reusable[name] = method
        # id(pod) -> (pod, its chain, the values its kept plugins write, in order): one
        # tuple per pod, the chains shared by the pods with the same pattern (few objects
        # for the collector to walk)
        self._memo: dict[int, tuple[Any, ...]] = {}
        self._templates: dict[tuple[Any, ...], PreFilterChain] = {}
        self._canonical: dict[type, list[object]] = {}

    @property
    def active(self) -> bool:
        """Whether some plugin of the chain can have its outcome kept."""
        return bool(self._reusable)

    def chain_for(self, pod: Pod) -> PreFilterChain | None:
        """The chain to run for ``pod``: kept outcomes replayed, the other plugins' own
        functions; None when ``pod`` has none yet (run `recording` instead)."""
        hit = self._memo.get(id(pod))
        if hit is not None and hit[0] is pod:
            chain: PreFilterChain = hit[1]
            return chain
        return None

    def _shared(self, value: object) -> object:
        """An earlier kept value equal to ``value`` (attrs equality: the same fields), else
        ``value``: kept values are never changed, so pods whose plugins wrote equal ones
        (an empty DynamicResources or VolumeBinding state, the same request vector) share
        one object, and the collector has fewer to walk."""
        cls = type(value)
        if cls.__eq__ is object.__eq__:
            return value
        seen = self._canonical.setdefault(cls, [])
        for c in seen:
            if c == value:
                return c
        if len(seen) < _CANONICAL_PER_TYPE:
            seen.append(value)
        return value

    def _template(self, pattern: tuple[Any, ...]) -> PreFilterChain:
        """The chain for pods whose reusable plugins returned and wrote as ``pattern``
        says: each run of consecutive kept plugins is one function writing the pod's values
        (from the memo) under their keys and adding the skipped ones to the Skip set, as
        the framework would after calling them; it returns None, so the run goes on."""
        own = dict(self._chain)
        memo = self._memo
        chain: list[tuple[str, Callable[..., Any]]] = []
        i = 0
        at = 2  # where the next group's values start in a memo entry
        while i < len(pattern):
            if len(pattern[i]) == 1:
                chain.append((pattern[i][0], own[pattern[i][0]]))
                i += 1
                continue
            j = i
            while j < len(pattern) and len(pattern[j]) == 3:
                j += 1
            kept = pattern[i:j]
            keys = tuple(k for _, _, ks in kept for k in ks)
            skips = frozenset(name for name, skip, _ in kept if skip)

            def replay(
                state: CycleState,
                pod: Pod,
                nodes: Sequence[NodeInfo],
                start: int = at,
                stop: int = at + len(keys),
                keys: tuple[Any, ...] = keys,
                skips: frozenset[str] = skips,
            ) -> None:
                if keys:  # the framework's own state: no Python call per key
                    state._data.update(zip(keys, memo[id(pod)][start:stop]))  # noqa: B905
                state.skip_filter_plugins.update(skips)

            chain.append((kept[0][0], replay))
            at += len(keys)
            i = j
        return tuple(chain)

    def recording(self, pod: Pod) -> tuple[PreFilterChain, Callable[[], None]]:
        """A chain that runs every plugin and notes what the reusable ones return and
        write, and a function to call when that run succeeded: it keeps ``pod``'s chain."""
        notes: dict[str, tuple[object, dict[Any, object]]] = {}
        out: list[tuple[str, Callable[..., Any]]] = []
        for name, fn in self._chain:
            ok = self._reusable.get(name)
            if ok is None or not ok(pod):
                out.append((name, fn))
                continue

            def note(
                state: CycleState,
                p: Pod,
                nodes: Sequence[NodeInfo],
                fn: Callable[..., Any] = fn,
                name: str = name,
            ) -> object:
                data = state._data
                before = dict(data)
                result = fn(state, p, nodes)
                notes[name] = (
                    result,
                    {k: v for k, v in data.items() if before.get(k, _MISSING) is not v},
                )
                return result

            out.append((name, note))

        def keep() -> None:
            pattern: list[tuple[str, bool, tuple[Any, ...]] | tuple[str]] = []
            values: list[object] = []
            for name, _ in self._chain:
                noted = notes.get(name)
                if noted is not None and _keepable(noted[0]):
                    result, writes = noted
                    skip = isinstance(result, Status) and result.code is Code.Skip
                    pattern.append((name, skip, tuple(writes)))
                    values.extend(map(self._shared, writes.values()))
                    continue
                pattern.append((name,))
            key = tuple(pattern)
            chain = self._templates.get(key)
            if chain is None:
                chain = self._templates[key] = self._template(key)
            if len(self._memo) >= MEMO_LIMIT:
                self._memo.clear()
            self._memo[id(pod)] = (pod, chain, *values)

        return tuple(out), keep
