"""Strict field validation: unknown or misspelled fields of modelled kinds, as kubectl's
``--validate=strict`` reports them.

kubectl (and the API server's strict field validation, ``fieldValidation=Strict``) refuses an
object with a field its schema does not have: ``strict decoding error: unknown field
"spec.containers[0].resoures"``. Without that check a misspelled ``toleration:`` is silently
dropped and the pod is reported as blocked by the very taint it meant to tolerate.

Where the field knowledge comes from: the Kubernetes 1.34 OpenAPI definitions shipped by the
`kubernetes-validate` package (``kubernetes-json-schema/v1.34.*-local-strict/_definitions.json``,
generated from the API server's own ``swagger.json``; each top-level kind carries its
``x-kubernetes-group-version-kind``). It was chosen over the official ``kubernetes`` client's
models (``openapi_types``/``attribute_map``) and ``lightkube-models`` by measurement
(docs/performance.md): the same 1.34 field sets, but ~15 ms to read and compile against
~430 ms to import the client's models and ~290 ms for lightkube's dataclasses, and no
networking dependencies. Every DRA kind of 1.34 is in it (``resource.k8s.io/v1``, ``v1beta1``,
``v1beta2``). Only the data file is read; the package's own ``jsonschema`` validator is never
imported.

How it works: the definitions are compiled once per process (`functools.cache`) into a compact
field tree: per definition a dict from field name to ``None`` (a scalar, or a value not
validated inside) or ``(shape, subtree)`` with shape one of object, list of objects, map of
objects. Validation is then a walk over the decoded dict, visiting each mapping of the object
once: O(size of the object). Not validated inside, as the API server prunes nothing there
either: ``runtime.RawExtension`` (DRA opaque driver parameters, ``data``), ``FieldsV1``
(managedFields), anything marked ``x-kubernetes-preserve-unknown-fields``, maps of strings
(labels, annotations) and quantities. CEL expressions are strings, checked elsewhere.

Cost: compiling ~15 ms once; the walk about 1 µs per mapping (see docs/performance.md for the
GCDA-sized load with and without validation).
"""

from __future__ import annotations

import functools
import importlib.util
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from schedsim.api.errors import ManifestError, UnknownFieldError

__all__ = [
    "MAX_FIELD_WARNINGS",
    "SCHEMA_VERSION",
    "VALIDATION_MODES",
    "FieldChecker",
    "SchemaUnavailableError",
    "UnknownField",
    "check_mode",
    "find_unknown_fields",
    "has_schema",
]

SCHEMA_VERSION: Final = "v1.34"
"""The Kubernetes minor version whose schema is used."""

VALIDATION_MODES: Final = ("strict", "warn", "ignore")
"""kubectl's ``--validate`` values: ``strict`` (an unknown field is an error), ``warn`` (a
warning, the field is ignored), ``ignore`` (nothing is said)."""

MAX_FIELD_WARNINGS: Final = 20
"""Under ``warn``, at most this many unknown-field lines per file, then one line counting the
rest."""

# shapes of a field whose value is validated inside
_OBJECT: Final = 0  # a mapping of known fields
_LIST: Final = 1  # a list of such mappings
_MAP: Final = 2  # a mapping from any key to such mappings (e.g. ResourceSlice attributes)

_Tree = dict[str, "tuple[int, _Tree] | None"]


class SchemaUnavailableError(RuntimeError):
    """The Kubernetes schema (package ``kubernetes-validate``, 1.34 definitions) cannot be
    read; strict validation is impossible (``--validate=ignore`` runs without it)."""


@attrs.frozen
class UnknownField:
    """A field an object has and its kind's schema does not.

    Attributes:
        path: the full field path, e.g. ``spec.containers[0].resoures``.
        name: the unknown key itself, e.g. ``resoures``.
    """

    path: str
    name: str

    @property
    def problem(self) -> str:
        """``unknown field "NAME"``, kubectl's wording."""
        return f'unknown field "{self.name}"'


def _definitions_file() -> Path:
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise SchemaUnavailableError(
            "strict field validation needs the kubernetes-validate package (pip install "
            "kubernetes-validate); or run with --validate=ignore"
        )
    root = Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"
    found = sorted(root.glob(f"{SCHEMA_VERSION}.*-local-strict/_definitions.json"))
    if not found:
        raise SchemaUnavailableError(
            f"the installed kubernetes-validate has no Kubernetes {SCHEMA_VERSION} schema "
            f"(looked in {root}); install kubernetes-validate 1.34.x, or run with "
            "--validate=ignore"
        )
    return found[-1]


class _Compiler:
    """Turns OpenAPI definitions into field trees, each definition once (recursive
    definitions share their tree)."""

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self.trees: dict[str, _Tree] = {}

    def _target(self, schema: Mapping[str, Any]) -> tuple[int, _Tree] | None:
        """What a property's value holds: None for scalars and opaque values."""
        shape = _OBJECT
        while True:
            if schema.get("x-kubernetes-preserve-unknown-fields"):
                return None
            ref = schema.get("$ref")
            if ref is not None:
                name = ref.rsplit("/", 1)[-1]
                target = self.defs.get(name, {})
                if "properties" not in target or target.get("x-kubernetes-preserve-unknown-fields"):
                    return None  # RawExtension, FieldsV1, Quantity, IntOrString, Time
                return shape, self.tree(name)
            items = schema.get("items")
            if isinstance(items, Mapping) and shape == _OBJECT:
                shape, schema = _LIST, items
                continue
            extra = schema.get("additionalProperties")
            if isinstance(extra, Mapping) and shape == _OBJECT:
                shape, schema = _MAP, extra
                continue
            return None  # a scalar, a list of scalars, a map of strings

    def tree(self, name: str) -> _Tree:
        tree = self.trees.get(name)
        if tree is None:
            tree = self.trees[name] = {}
            for field, schema in self.defs[name].get("properties", {}).items():
                tree[field] = self._target(schema)
        return tree


@attrs.frozen
class _Schema:
    trees: Mapping[tuple[str, str], _Tree]  # (apiVersion, kind) -> tree
    preferred: Mapping[str, str]  # kind -> apiVersion used when an object names none


@functools.cache
def _schema() -> _Schema:
    """The compiled field trees of every kind of the 1.34 schema (once per process)."""
    path = _definitions_file()
    try:
        defs = json.loads(path.read_text(encoding="utf-8"))["$defs"]
    except (OSError, ValueError, KeyError) as e:
        raise SchemaUnavailableError(f"{path}: cannot read the Kubernetes schema: {e}") from None
    compiler = _Compiler(defs)
    trees: dict[tuple[str, str], _Tree] = {}
    versions: dict[str, list[str]] = {}
    for name, definition in defs.items():
        for gvk in definition.get("x-kubernetes-group-version-kind", ()):
            group, version, kind = gvk.get("group", ""), gvk["version"], gvk["kind"]
            api_version = f"{group}/{version}" if group else version
            trees[(api_version, kind)] = compiler.tree(name)
            versions.setdefault(kind, []).append(api_version)
    # without an apiVersion (node-group templates), a kind is read as its GA version
    preferred = {
        kind: next((v for v in vs if v.rsplit("/", 1)[-1] == "v1"), vs[0])
        for kind, vs in versions.items()
    }
    return _Schema(trees=trees, preferred=preferred)


def _lookup(kind: str, api_version: object) -> _Tree | None:
    schema = _schema()
    if api_version is None:
        api_version = schema.preferred.get(kind)
    if not isinstance(api_version, str):
        return None
    return schema.trees.get((api_version, kind))


def has_schema(kind: str, api_version: str | None) -> bool:
    """Whether the 1.34 schema has ``kind`` in ``api_version`` (None: its GA version).

    Raises:
        SchemaUnavailableError: the schema package is not installed or lacks 1.34.
    """
    return _lookup(kind, api_version) is not None


def find_unknown_fields(
    obj: Mapping[str, Any], kind: str, visited: list[int] | None = None
) -> list[UnknownField]:
    """The fields of ``obj`` that the Kubernetes 1.34 schema of its kind does not have, in
    document order (mirrors the API server's strict decoding, ``unknown field "PATH"``).

    Values of the wrong type are left to the decoders (they name the field); values not
    validated inside are listed in the module docstring.

    Args:
        obj: one decoded object (its ``apiVersion`` picks the schema; absent: the kind's GA
            version).
        kind: its kind.
        visited: when given, ``visited[0]`` is increased by the number of keys examined (the
            linear-cost test counts with it).

    Returns:
        the unknown fields; empty for a kind or apiVersion the schema does not have (the
        decoders report an unsupported apiVersion).

    Raises:
        SchemaUnavailableError: the schema package is not installed or lacks 1.34.
    """
    tree = _lookup(kind, obj.get("apiVersion"))
    if tree is None:
        return []
    found = _walk(obj, tree, visited)
    if not found:
        return []
    # each path was collected innermost segment first
    return [UnknownField(".".join(reversed(parts)), name) for parts, name in found]


_Found = list[tuple[list[str], str]]  # (path segments innermost first, unknown key)


def _walk(obj: Mapping[str, Any], tree: _Tree, visited: list[int] | None) -> _Found | None:
    """Check one mapping against its tree; the unknown fields found below it (paths
    relative to it), or None. Paths are only built when something is found: the common,
    clean case allocates nothing per level."""
    if visited is not None:
        visited[0] += len(obj)
    found: _Found | None = None
    for key, value in obj.items():
        try:
            child = tree[key]
        except KeyError:  # also a non-string key (YAML allows `1: x`)
            found = found or []
            found.append(([str(key)], str(key)))
            continue
        if child is None or value is None:
            continue
        shape, sub = child
        if shape == _OBJECT:
            if isinstance(value, dict) or isinstance(value, Mapping):
                below = _walk(value, sub, visited)
                if below:
                    for parts, _ in below:
                        parts.append(key)
                    found = (found or []) + below
        elif shape == _LIST:
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, dict) or isinstance(item, Mapping):
                        below = _walk(item, sub, visited)
                        if below:
                            for parts, _ in below:
                                parts.append(f"{key}[{i}]")
                            found = (found or []) + below
        elif isinstance(value, dict) or isinstance(value, Mapping):  # _MAP
            for name, item in value.items():
                if isinstance(item, dict) or isinstance(item, Mapping):
                    below = _walk(item, sub, visited)
                    if below:
                        for parts, _ in below:
                            parts.append(f"{key}.{name}")
                        found = (found or []) + below
    return found


def check_mode(validate: str) -> None:
    """Raise ValueError unless ``validate`` is one of `VALIDATION_MODES`."""
    if validate not in VALIDATION_MODES:
        raise ValueError(
            f"validate: expected one of {', '.join(VALIDATION_MODES)}, got {validate!r}"
        )


class FieldChecker:
    """Applies one ``--validate`` mode to the objects of one file (the loader's side).

    Args:
        source: the file name used in messages.
        validate: ``strict``, ``warn`` or ``ignore``.

    Raises:
        ValueError: ``validate`` is not one of `VALIDATION_MODES`.
    """

    def __init__(self, source: str, validate: str) -> None:
        check_mode(validate)
        self.source = source
        self.validate = validate
        self._lines: list[str] = []
        self._count = 0

    def check(self, obj: Mapping[str, Any], kind: str, label: str) -> None:
        """Check one decoded object of a modelled kind.

        Args:
            obj: the object as read.
            kind: its kind.
            label: how messages name it (``Pod shop/web``).

        Raises:
            ManifestError: (strict) ``FILE: LABEL: FIELD: unknown field "NAME"``, the other
                unknown fields of the object following in ``(also unknown: ...)``; or the
                schema cannot be read.
        """
        if self.validate == "ignore":
            return
        try:
            unknown = find_unknown_fields(obj, kind)
        except SchemaUnavailableError as e:
            raise ManifestError(f"{self.source}: {e}") from None
        if not unknown:
            return
        if self.validate == "strict":
            first, rest = unknown[0], unknown[1:]
            also = f" (also unknown: {', '.join(u.path for u in rest)})" if rest else ""
            raise UnknownFieldError(f"{self.source}: {label}: {first.path}: {first.problem}{also}")
        for u in unknown:
            if self._count < MAX_FIELD_WARNINGS:
                self._lines.append(f"{self.source}: {label}: {u.path}: {u.problem} (ignored)")
            self._count += 1

    def warnings(self) -> list[str]:
        """The warning lines (``warn``), with a count of those beyond `MAX_FIELD_WARNINGS`."""
        extra = self._count - MAX_FIELD_WARNINGS
        if extra > 0:
            return [*self._lines, f"{self.source}: {extra} more unknown field(s) not shown"]
        return list(self._lines)
