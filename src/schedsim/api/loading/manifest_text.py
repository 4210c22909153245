"""Manifest text to documents: YAML (PyYAML's C loader) and JSON, read the way kubectl and
the API server read them.

A duplicate key in a mapping is an error (``key "kind" already set in map``), unquoted YAML
timestamps stay strings (the decoders check them, naming the field), keys are spelled as
kubectl's YAML-to-JSON conversion spells them, an explicitly tagged bad scalar names its line,
YAML alias expansion is bounded (`schedsim.api.loading.yaml_aliases`) and a JSON string
holding a lone UTF-16 surrogate is refused.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Callable
from itertools import accumulate
from typing import Any

import yaml

from schedsim.api.errors import ManifestError
from schedsim.api.loading.yaml_aliases import ALIAS_TOKEN, AliasError, check_aliasing

__all__ = ["go_template_hint", "parse_text"]

# the C loader is ~10x faster on large `kubectl get -o yaml` dumps
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_MERGE_TAG = "tag:yaml.org,2002:merge"


def _construct_mapping(loader: Any, node: Any, deep: bool = False) -> Any:
    """Reject duplicate keys, as kubectl does (``key "kind" already set in map``), and spell
    keys as kubectl's YAML-to-JSON conversion (sigs.k8s.io/yaml) does: YAML 1.1 booleans
    (``yes``, ``on``, ``true``) become ``"true"``/``"false"``, numbers their decimal text; a
    null or collection key is refused ("unsupported map key")."""
    if not isinstance(node, yaml.MappingNode):
        return yaml.constructor.SafeConstructor.construct_mapping(loader, node, deep)
    seen: set[tuple[str, str]] = set()
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
            continue
        key = (key_node.tag, key_node.value)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key_node.value!r}",
                key_node.start_mark,
            )
        seen.add(key)
    loader.flatten_mapping(node)  # merge keys (``<<: *base``), as SafeConstructor does
    out: dict[str, Any] = {}
    for key_node, value_node in node.value:
        name = _json_key(loader.construct_object(key_node, deep=deep), key_node)
        out[name] = loader.construct_object(value_node, deep=deep)
    return out


def _json_key(key: Any, key_node: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return repr(key).removesuffix(".0")
    what = "null" if key is None else type(key).__name__
    raise yaml.constructor.ConstructorError(
        None, None, f"unsupported map key: {what}", key_node.start_mark
    )


def _checked_scalar(tag: str) -> Callable[[Any, Any], Any]:
    """Wrap the safe constructor of ``!!tag`` so a bad explicitly tagged value (``!!int abc``,
    an integer of more digits than `int` accepts) is a YAML error naming its line."""
    construct = _Loader.yaml_constructors[f"tag:yaml.org,2002:{tag}"]

    def checked(loader: Any, node: Any) -> Any:
        try:
            return construct(loader, node)
        except (ValueError, KeyError):
            text = node.value if len(node.value) <= 40 else node.value[:37] + "..."
            raise yaml.constructor.ConstructorError(
                None, None, f"invalid !!{tag} value {text!r}", node.start_mark
            ) from None

    return checked


# Manifests are read the way the API server reads them: timestamps stay strings (the decoders
# check them, naming the field; PyYAML would fail on ``2024-13-45`` without saying where) and
# duplicate keys are an error instead of the last one silently winning.
def _init_loader(loader: Any, stream: Any) -> None:
    """PyYAML's loader set-up, then, when no path resolver is registered (none is), the
    resolver hooks the composer calls once per node made cheap."""
    _Loader.__init__(loader, stream)
    if not loader.yaml_path_resolvers:
        # Without path resolvers PyYAML's descend/ascend_resolver do nothing; the composer
        # calls them twice per node (the GCDA file: 282,895 nodes), so built-ins that return
        # at once stand in for them (``{}.get(parent, index)``, ``tuple()``).
        loader.descend_resolver = _NOTHING.get
        loader.ascend_resolver = tuple
        # PyYAML's ``resolve`` (a node's tag from its kind and, for a plain scalar, its text)
        # then depends on ``(kind, value, implicit)`` alone, and manifests repeat their
        # scalars (the GCDA file: 282,895 scalars, 8,368 distinct): memoized per loader, a
        # repeated scalar costs no Python call and the implicit-resolver regexes run once
        # per distinct one
        loader.resolve = functools.lru_cache(maxsize=None)(
            functools.partial(_Loader.resolve, loader)
        )


_NOTHING: dict[Any, Any] = {}


def _dispose(loader: Any) -> None:
    """PyYAML's ``dispose``, and the per-loader memo dropped (it refers to the loader)."""
    _Loader.dispose(loader)
    loader.__dict__.pop("resolve", None)


_ManifestLoader: Any = type(
    "_ManifestLoader",
    (_Loader,),
    {"construct_mapping": _construct_mapping, "__init__": _init_loader, "dispose": _dispose},
)
_ManifestLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", yaml.constructor.SafeConstructor.construct_yaml_str
)
for _tag in ("int", "float", "bool"):
    _ManifestLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _checked_scalar(_tag))


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_NULL_TAG = "tag:yaml.org,2002:null"


def _build(loader: Any, node: Any) -> Any:
    """The Python value of a composed node, as `_ManifestLoader` constructs it, without
    PyYAML's per-node constructor machinery for the common cases (plain strings and null,
    mappings with distinct string keys, sequences); anything else (other tags, merge or
    non-string keys, a duplicate key) goes through the loader's own constructors, which also
    raise its errors. Only for texts without aliases (each node appears once)."""
    tag = node.tag
    cls = node.__class__
    if cls is yaml.ScalarNode:
        if tag == _STR_TAG:
            return node.value
        if tag == _NULL_TAG:
            return None
    elif cls is yaml.MappingNode:
        if tag == _MAP_TAG:
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag != _STR_TAG or key_node.__class__ is not yaml.ScalarNode:
                    return _construct_mapping(loader, node, deep=True)
                key = key_node.value
                if key in out:  # the loader's check raises the duplicate-key error
                    return _construct_mapping(loader, node, deep=True)
                out[key] = _build(loader, value_node)
            return out
    elif cls is yaml.SequenceNode and tag == _SEQ_TAG:
        return [_build(loader, item) for item in node.value]
    return loader.construct_object(node, deep=True)


def _has_alias(text: str) -> bool:
    """Whether ``text`` may hold a YAML alias (`ALIAS_TOKEN`); the regex, which has no
    literal prefix to scan for, runs only when the text has a ``*`` at all (a 2.3 MB
    manifest: 70 ms for the regex, 0.1 ms for the ``in`` test)."""
    return "*" in text and ALIAS_TOKEN.search(text) is not None


MAX_NESTING_DEPTH = 10_000
"""Collections nested deeper than this are refused, as Kubernetes' YAML decoder (go-yaml's
``max_flow_level`` / ``max_indents``) refuses them. The libyaml that PyYAML 6.0.4 and later
bundle refuses more than 1,000 levels first ("exceeded maximum nesting depth"); no real manifest
comes near either."""

_DEEP = 2_000
# every byte but the four brackets, deleted by ``bytes.translate`` (C-level, ~10x faster than a
# regex scan of the text); UTF-8 never puts these ASCII bytes inside a multi-byte sequence
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_BRACKET_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_DEEP_BLOCK = (" " * _DEEP, "- " * (_DEEP // 2), "-  " * (_DEEP // 3), "\t" * _DEEP)
_DEEP_STACK_BYTES = 1 << 30


def _may_nest_deeply(text: str) -> bool:
    """An upper bound says the text may nest deeper than a few thousand levels: unclosed flow
    brackets (counted without regard to quoting, and as ``max - min`` of the running count, so
    never an underestimate) or a run of indentation or block indicators that long.
    Cheap: a few C-level passes over the text."""
    if text.count("[") + text.count("{") > _DEEP:
        brackets = text.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
        running = list(accumulate(map(_BRACKET_STEP.__getitem__, brackets)))
        if max(running) - min(0, min(running)) > _DEEP:
            return True
    # block nesting needs a line whose indentation and indicators are as long as the depth
    return any(run in text for run in _DEEP_BLOCK)


def _check_depth(text: str) -> None:
    """Walk the parser's events (libyaml's parser keeps its own stack, so this cannot overflow
    the C stack as composing can) and refuse nesting deeper than `MAX_NESTING_DEPTH`.

    Raises:
        yaml.MarkedYAMLError: at the collection that is one level too deep.
    """
    loader = _ManifestLoader(text)
    try:
        depth = 0
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_NESTING_DEPTH:
                    start: Any = event.start_mark
                    raise yaml.MarkedYAMLError(
                        problem=f"exceeded max nesting depth of {MAX_NESTING_DEPTH}",
                        problem_mark=yaml.Mark("", 0, start.line, start.column, "", 0),
                    )
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    finally:
        loader.dispose()


def _yaml_documents(text: str) -> list[Any]:
    """``list(yaml.load_all(text, Loader=_ManifestLoader))``, the same values and errors, with
    Kubernetes' nesting limit. Text that may nest deeply is checked first and composed on a
    thread with a large stack: libyaml's composer recurses in C once per level, and deep
    nesting overflows a default 8 MiB stack (a segmentation fault, not an error)."""
    if not _may_nest_deeply(text):
        return _compose_documents(text)
    _check_depth(text)
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(_compose_documents(text))
        except BaseException as e:  # re-raised on the caller's thread
            outcome.append(e)

    previous = threading.stack_size(_DEEP_STACK_BYTES)
    try:
        worker = threading.Thread(target=run, name="yaml-compose")
        worker.start()
    finally:
        threading.stack_size(previous)
    worker.join()
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    docs: list[Any] = outcome[0]
    return docs


def _compose_documents(text: str) -> list[Any]:
    """The documents built by `_build` (~2x faster than PyYAML's constructor on manifests)
    when the text has no alias; with aliases, or nesting deeper than the interpreter's
    stack, PyYAML's own construction."""
    if not _has_alias(text):
        loader = _ManifestLoader(text)
        try:
            docs = []
            while loader.check_node():
                docs.append(_build(loader, loader.get_node()))
                loader.constructed_objects = {}
            return docs
        except RecursionError:
            pass
        finally:
            loader.dispose()
    return list(yaml.load_all(text, Loader=_ManifestLoader))


def _yaml_problem(e: yaml.YAMLError, text: str) -> str:
    """``line L, column C: what`` for a YAML error (PyYAML's own text names "<unicode string>")."""
    if not isinstance(e, yaml.MarkedYAMLError) or e.problem_mark is None:
        return " ".join(str(e).split())
    mark = e.problem_mark
    what = " ".join(" ".join(x for x in (e.context, e.problem) if x).split())
    lines = text.splitlines()
    line = lines[mark.line] if mark.line < len(lines) else ""
    if "\t" in line[: mark.column + 1] and "tab" not in what:
        what += " (tabs cannot be used for indentation)"
    return f"line {mark.line + 1}, column {mark.column + 1}: {what}"


_GO_ACTION = re.compile(r"\{\{-?\s*[.$/a-zA-Z(-][^{}]*\}\}")


def go_template_hint(text: str, lines: bool = True) -> str:
    """``"; it looks like a Go template (line L: {{ ... }}): ..."`` when ``text`` holds a Go
    template action (``{{ .Name }}``, ``{{- if ... }}``: scheduler_perf's templates, Helm
    charts), else ``""``. Appended to an error about such a text: a template is not a manifest
    until it is rendered. ``lines``: name the action's line (``text`` is the whole file)."""
    match = _GO_ACTION.search(text)
    if match is None:
        return ""
    action = match.group(0) if len(match.group(0)) <= 40 else match.group(0)[:35] + "...}}"
    where = f"line {text.count(chr(10), 0, match.start()) + 1}: " if lines else ""
    return (
        f"; it looks like a Go template ({where}{action}): render it first (helm template, "
        "or the tool whose template it is) and give schedsim the output"
    )


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _check_surrogates(value: Any) -> None:
    """Refuse a lone UTF-16 surrogate (``"\\ud800"``) in any JSON string: such a string has no
    UTF-8 form (Go's decoder turns it into U+FFFD, and the name or label then fails the API
    server's validation). Only called when the text has a surrogate escape."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as e:
                bad = v[e.start]
                raise ValueError(f"lone surrogate \\u{ord(bad):04x} in string {v[:40]!r}") from None
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; duplicate keys are an error, as in YAML."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _json_documents(text: str) -> list[Any]:
    """The JSON values of ``text``, one or several written one after another (a JSON
    stream, as kubectl reads it); whitespace between them is skipped.

    Raises:
        json.JSONDecodeError: with the line and column in ``text``.
    """
    decoder = json.JSONDecoder(object_pairs_hook=_json_object)
    docs: list[Any] = []
    end = len(text)
    i = 0
    while True:
        while i < end and text[i] in " \t\r\n":
            i += 1
        if i >= end:
            break
        doc, i = decoder.raw_decode(text, i)
        docs.append(doc)
    if not docs:
        json.loads(text)  # raises the usual "Expecting value"
    return docs


def _checked_json(text: str) -> list[Any]:
    docs = _json_documents(text)
    if _SURROGATE_ESCAPE.search(text):
        for doc in docs:
            _check_surrogates(doc)
    return docs


def parse_text(text: str, source: str) -> list[Any]:
    """Parse YAML (JSON when ``source`` ends in ``.json``; one or several JSON objects one
    after another are read as a stream, as kubectl does) into its documents with the manifest rules
    (duplicate keys are errors, timestamps stay strings, alias limits).

    Raises:
        ManifestError: ``SOURCE: not valid YAML|JSON: problem``.
    """
    is_json = source.endswith(".json")
    try:
        if is_json:
            return _checked_json(text)
        try:
            docs = _yaml_documents(text)
        except yaml.YAMLError:
            # Concatenated JSON objects ({...}{...}, what `kubectl get -o json` in a loop
            # writes) are not YAML; kubectl's decoder (NewYAMLOrJSONDecoder) reads input
            # that starts with "{" as a JSON stream, and so does schedsim.
            if text.lstrip().startswith("{"):
                try:
                    return _checked_json(text)
                except (json.JSONDecodeError, ValueError, RecursionError):
                    pass  # report the YAML error
            raise
        if _has_alias(text):
            for doc in docs:
                check_aliasing(doc)
        return docs
    except AliasError as e:
        problem = str(e)
    except yaml.YAMLError as e:
        problem = _yaml_problem(e, text) + go_template_hint(text)
    except json.JSONDecodeError as e:
        problem = f"line {e.lineno}, column {e.colno}: {e.msg}"
    except ValueError as e:  # json: a duplicate key, or an integer too long for `int`
        problem = str(e).split(";")[0]
    except RecursionError:  # json: nesting deeper than the interpreter's stack
        problem = "nested too deeply"
    raise ManifestError(f"{source}: not valid {'JSON' if is_json else 'YAML'}: {problem}")
