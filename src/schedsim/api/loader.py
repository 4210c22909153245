"""Reading Kubernetes manifests: files, directories and stdin.

Accepts what people have at hand: multi-document YAML, JSON, ``kind: List`` (what
``kubectl get ... -o yaml`` prints, and any ``*List``), a directory of ``.yaml``/``.yml``/
``.json`` files (sorted by name, not recursive, like ``kubectl apply -f DIR``) and ``-`` for
stdin. Input files are only read, never written.

Kinds schedsim does not model are skipped with one warning line per kind and file. A malformed
object raises `ManifestError` with the message ``FILE: KIND NS/NAME: FIELD: problem``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import yaml

from schedsim.api.core import Node, Pod
from schedsim.api.errors import FieldError, ManifestError

__all__ = ["Manifests", "decode_objects", "load_paths", "load_text"]

# the C loader is ~10x faster on large `kubectl get -o yaml` dumps
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

_DECODERS: Mapping[str, Callable[[Mapping[str, Any]], Node | Pod]] = {
    "Node": Node.from_manifest,
    "Pod": Pod.from_manifest,
}


@attrs.define
class Manifests:
    """Objects read from the inputs, in input order.

    Attributes:
        nodes: decoded Nodes.
        pods: decoded Pods (bound and pending).
        warnings: one line per skipped kind and file, e.g.
            ``deploy.yaml: skipped 2 Deployment object(s): kind not modelled by schedsim``.
    """

    nodes: list[Node] = attrs.field(factory=list)
    pods: list[Pod] = attrs.field(factory=list)
    warnings: list[str] = attrs.field(factory=list)
    _seen: dict[tuple[str, str, str], str] = attrs.field(factory=dict, init=False, repr=False)

    def extend(self, other: Manifests) -> None:
        """Append another batch, checking for duplicate objects across files."""
        for n in other.nodes:
            self._claim(("Node", "", n.name), other._seen[("Node", "", n.name)])
            self.nodes.append(n)
        for p in other.pods:
            self._claim(("Pod", p.namespace, p.name), other._seen[("Pod", p.namespace, p.name)])
            self.pods.append(p)
        self.warnings.extend(other.warnings)

    def _claim(self, key: tuple[str, str, str], source: str) -> None:
        first = self._seen.get(key)
        if first is not None:
            kind, ns, name = key
            raise ManifestError(
                f"{source}: {_describe(kind, ns, name)}: metadata.name: duplicate object "
                f"(first seen in {first})"
            )
        self._seen[key] = source


def _describe(kind: str, namespace: str, name: str) -> str:
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def _flatten(docs: Iterable[Any], source: str) -> Iterable[tuple[str, Mapping[str, Any]]]:
    """Yield (where, object) for every object, expanding ``kind: List`` items."""
    for i, doc in enumerate(docs, start=1):
        if doc is None:  # empty YAML document (e.g. a trailing '---')
            continue
        where = f"document {i}"
        if not isinstance(doc, Mapping):
            raise ManifestError(f"{source}: {where}: expected a Kubernetes object (a mapping)")
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
            items = doc.get("items") or []
            if not isinstance(items, list):
                raise ManifestError(f"{source}: {where}: {kind}: items: expected a list")
            for j, item in enumerate(items):
                if not isinstance(item, Mapping):
                    raise ManifestError(f"{source}: {where}: items[{j}]: expected a mapping")
                yield f"{where} items[{j}]", item
        else:
            yield where, doc


def decode_objects(docs: Iterable[Any], source: str) -> Manifests:
    """Decode already-parsed documents (dicts) read from ``source``.

    Args:
        docs: parsed YAML/JSON documents; ``None`` documents are ignored.
        source: the file name used in messages.

    Returns:
        the decoded objects.

    Raises:
        ManifestError: an object is malformed or duplicated.
    """
    out = Manifests()
    skipped: dict[str, int] = {}
    for where, obj in _flatten(docs, source):
        kind = obj.get("kind")
        if not isinstance(kind, str) or not kind:
            raise ManifestError(f"{source}: {where}: kind: required")
        decoder = _DECODERS.get(kind)
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        raw_name, raw_ns = meta.get("name"), meta.get("namespace")
        name = raw_name if isinstance(raw_name, str) else ""
        ns = raw_ns if isinstance(raw_ns, str) else ""
        if decoder is None:
            skipped[kind] = skipped.get(kind, 0) + 1
            continue
        if kind == "Pod" and not ns:
            ns = "default"
        label = _describe(kind, ns, name) if name else f"{kind} ({where}, no name)"
        try:
            value = decoder(obj)
        except FieldError as e:
            raise ManifestError(f"{source}: {label}: {e.field}: {e.problem}") from None
        if isinstance(value, Node):
            out._claim(("Node", "", value.name), source)
            out.nodes.append(value)
        else:
            out._claim(("Pod", value.namespace, value.name), source)
            out.pods.append(value)
    for kind, n in skipped.items():
        out.warnings.append(
            f"{source}: skipped {n} {kind} object(s): kind not modelled by schedsim"
        )
    return out


def _parse_text(text: str, source: str) -> list[Any]:
    try:
        if source.endswith(".json"):
            return [json.loads(text)]
        return list(yaml.load_all(text, Loader=_Loader))
    except (yaml.YAMLError, json.JSONDecodeError) as e:
        problem = " ".join(str(e).split())
        raise ManifestError(
            f"{source}: not valid {'JSON' if source.endswith('.json') else 'YAML'}: {problem}"
        ) from None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ManifestError(f"{path}: no such file or directory") from None
    except UnicodeDecodeError:
        raise ManifestError(f"{path}: not a UTF-8 text file") from None
    except OSError as e:
        raise ManifestError(f"{path}: cannot read: {e.strerror}") from None


def load_text(text: str, source: str) -> Manifests:
    """Parse and decode manifest text (YAML, or JSON when ``source`` ends in ``.json``).

    Raises:
        ManifestError: the text is not YAML/JSON or an object is malformed.
    """
    return decode_objects(_parse_text(text, source), source)


def load_paths(paths: Sequence[str], stdin_text: Callable[[], str] | None = None) -> Manifests:
    """Load manifests from files, directories and ``-`` (stdin).

    Args:
        paths: file paths, directory paths (their ``.yaml``/``.yml``/``.json`` files, sorted)
            and ``-`` for standard input.
        stdin_text: reads standard input (tests inject it); defaults to ``sys.stdin.read``.

    Returns:
        all objects, in input order.

    Raises:
        ManifestError: a path is missing or unreadable, a file is not YAML/JSON, an object is
            malformed, or two inputs define the same object.
    """
    out = Manifests()
    for p in paths:
        if p == "-":
            out.extend(load_text((stdin_text or sys.stdin.read)(), "<stdin>"))
            continue
        path = Path(p)
        if path.is_dir():
            files = sorted(
                f for f in path.iterdir() if f.is_file() and f.suffix in _MANIFEST_SUFFIXES
            )
            if not files:
                raise ManifestError(f"{path}: directory has no .yaml, .yml or .json files")
        else:
            files = [path]
        for f in files:
            out.extend(load_text(_read(f), str(f)))
    return out
