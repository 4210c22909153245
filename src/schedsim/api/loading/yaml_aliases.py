"""YAML alias limits, as the Kubernetes YAML decoder (go-yaml) applies them.

PyYAML resolves an alias to the very object its anchor built, so a "billion laughs"
document parses into a small shared graph; it explodes only when something walks it as a
tree (decoding, copying, validation, JSON output). kubectl and the API server decode YAML
with go-yaml, which counts every node it decodes, including those reached through aliases,
and refuses a document in which aliases make up too much of it (``document contains
excessive aliasing``) and an anchor that contains itself. `check_aliasing` applies the same
rule to a parsed document, so such a file is refused when read instead of hanging later.

Cost: O(nodes decoded until the rule triggers): a bomb is refused after about a thousand
nodes; a document without aliases is never walked (the caller checks for an alias token
first).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["ALIAS_TOKEN", "AliasError", "check_aliasing"]

ALIAS_TOKEN = re.compile(r"(?:^|[\s\[{,:?-])\*[^\s\]},]")
"""A YAML alias (``*name``) somewhere in the text: only such texts need `check_aliasing`."""

_RATIO_RANGE_LOW = 400_000
_RATIO_RANGE_HIGH = 4_000_000


class AliasError(ValueError):
    """The document aliases too much, or an anchor contains itself (go-yaml's wording)."""


def _allowed_alias_ratio(decode_count: int) -> float:
    """go-yaml's ``allowedAliasRatio``: 99% of the nodes may come from aliases in documents
    of up to 400,000 nodes, scaling down to 10% at 4,000,000."""
    if decode_count <= _RATIO_RANGE_LOW:
        return 0.99
    if decode_count >= _RATIO_RANGE_HIGH:
        return 0.10
    span = _RATIO_RANGE_HIGH - _RATIO_RANGE_LOW
    return 0.99 - 0.89 * (decode_count - _RATIO_RANGE_LOW) / span


def _children(node: Any) -> Iterator[Any]:
    if isinstance(node, Mapping):
        for k, v in node.items():
            yield k
            yield v
    else:
        yield from node


def check_aliasing(document: Any) -> None:
    """Walk ``document`` as go-yaml decodes it and refuse excessive aliasing.

    Mirrors go-yaml's ``decoder.unmarshal`` accounting: every node decoded counts; nodes
    decoded below an alias count as alias nodes; once more than 100 alias nodes and 1,000
    nodes were decoded, an alias share above `_allowed_alias_ratio` stops decoding. A
    mapping or sequence met again (the same Python object) is an alias of it.

    Raises:
        AliasError: ``document contains excessive aliasing``, or
            ``anchor value contains itself`` for a recursive anchor.
    """
    decoded = 0
    aliased = 0
    seen: set[int] = set()
    on_path: set[int] = set()
    # (iterator over a container's children, its id, whether it is reached through an alias)
    stack: list[tuple[Iterator[Any], int, bool]] = []
    node, in_alias = document, False
    while True:
        decoded += 1
        if in_alias:
            aliased += 1
        if aliased > 100 and decoded > 1000 and aliased / decoded > _allowed_alias_ratio(decoded):
            raise AliasError("document contains excessive aliasing")
        if isinstance(node, (Mapping, list)) and node:
            nid = id(node)
            if nid in on_path:
                raise AliasError("anchor value contains itself")
            below_alias = in_alias or nid in seen
            seen.add(nid)
            on_path.add(nid)
            stack.append((_children(node), nid, below_alias))
        while stack:
            children, nid, below_alias = stack[-1]
            child = next(children, _END)
            if child is not _END:
                node, in_alias = child, below_alias
                break
            stack.pop()
            on_path.discard(nid)
        else:
            return


_END = object()
