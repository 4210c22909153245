"""Reading Kubernetes manifests: files, directories and stdin.

Accepts what people have at hand: multi-document YAML, JSON, ``kind: List`` (what
``kubectl get ... -o yaml`` prints, and any ``*List``; Lists inside Lists are flattened as
kubectl flattens them), a directory of ``.yaml``/``.yml``/
``.json`` files (sorted by name, not recursive, like ``kubectl apply -f DIR``) and ``-`` for
stdin. Input files are only read, never written. As with kubectl, a duplicate key in a mapping
is an error and unquoted YAML timestamps stay strings.

Kinds schedsim does not model are skipped and counted in one warning line for all inputs
(CronJobs, read but not run, in another). A file
without objects, and a node-local ResourceSlice or a CSINode whose node is not among the nodes
read, are warned about too. A malformed object (one the API server would reject) raises
`ManifestError` with the message ``FILE: KIND NS/NAME: FIELD: problem``. The decoded objects
are collected in a `schedsim.api.loading.manifests.Manifests`.
"""

from __future__ import annotations

import codecs
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Final

from schedsim.api.apps import controllers
from schedsim.api.apps.workload_scale import scale_workloads
from schedsim.api.core import Pod
from schedsim.api.errors import FieldError, ManifestError
from schedsim.api.evolve import evolve
from schedsim.api.loading import defaults, inputs
from schedsim.api.loading.admission import PodAdmission
from schedsim.api.loading.ca_snapshot import expand_ca_snapshot, looks_like_ca_snapshot
from schedsim.api.loading.decode import type_name
from schedsim.api.loading.defaults import generate_name
from schedsim.api.loading.kss import EXPORT_KINDS, expand_export, looks_like_export
from schedsim.api.loading.kwok import ResourcePatch, is_resource_patch, timeline_warning
from schedsim.api.loading.manifest_text import go_template_hint, parse_text
from schedsim.api.loading.manifests import KINDS, NOT_RUN, Manifests, describe_object
from schedsim.api.loading.spec_memo import SpecMemo
from schedsim.api.loading.strict import FieldChecker, check_mode
from schedsim.api.scheduling import priority
from schedsim.api.storage import admission as storage_admission
from schedsim.api.validation import ApiValidator

__all__ = [
    "Manifests",
    "decode_objects",
    "load_paths",
    "load_text",
    "parse_text",
    "read_documents",
    "read_stdin",
]

_MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


def _is_list(obj: Mapping[str, Any]) -> bool:
    kind = obj.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "items" in obj


def _typed_item(lst: Mapping[str, Any], item: Mapping[str, Any]) -> Mapping[str, Any]:
    """An item of a typed list (``NodeList``, ``PodList``, ...; not the generic ``List``)
    with the kind and apiVersion it lacks taken from the list: ``XList`` holds ``X`` objects
    of the list's apiVersion, which is why the API server leaves them out of each item
    (``kubectl get --raw /api/v1/nodes``). A generic ``List`` names no kind: its items must
    carry theirs."""
    kind = lst.get("kind")
    if kind == "List" or not isinstance(kind, str) or len(kind) <= len("List"):
        return item
    missing: dict[str, Any] = {}
    if "kind" not in item:
        missing["kind"] = kind[: -len("List")]
    if "apiVersion" not in item and isinstance(lst.get("apiVersion"), str):
        missing["apiVersion"] = lst["apiVersion"]
    return {**missing, **item} if missing else item


def _flatten(
    docs: Iterable[Any], source: str, validate: str, sink: Manifests
) -> Iterable[tuple[str, Mapping[str, Any]]]:
    """Yield (where, object) for every object, expanding ``kind: List`` items,
    kube-scheduler-simulator exports (`schedsim.api.loading.kss`; their scheduler configuration goes
    to ``sink``) and Cluster Autoscaler debugging snapshots
    (`schedsim.api.loading.ca_snapshot`; their template node groups go to ``sink``).

    Items of a typed list (``NodeList``, ``PodList``) that carry no kind or apiVersion get
    them from the list (`_typed_item`).

    A List inside a List is expanded too, in kubectl's order (cli-runtime's
    ``FlattenListVisitor`` walks a document's lists breadth first: the items of a List come
    before the items of the Lists it holds).
    """
    for i, doc in enumerate(docs, start=1):
        if doc is None:  # empty YAML document (e.g. a trailing '---')
            continue
        where = f"document {i}"
        if not isinstance(doc, Mapping):
            raise ManifestError(
                f"{source}: {where}: expected a Kubernetes object (a mapping), got {type_name(doc)}"
            )
        if looks_like_ca_snapshot(doc):
            snapshot = expand_ca_snapshot(doc, source)
            sink.warnings.extend(snapshot.warnings)
            if snapshot.node_groups is not None:
                sink._set_ca_node_groups(snapshot.node_groups, source)
            for item_where, item in snapshot.items:
                yield f"{where} {item_where}", item
            continue
        if looks_like_export(doc):
            export = expand_export(doc, source, validate)
            sink.warnings.extend(export.warnings)
            if export.scheduler_config is not None:
                sink._set_scheduler_config(export.scheduler_config, source)
            for item_where, item in export.items:
                yield f"{where} {item_where}", item
            continue
        if not _is_list(doc):
            yield where, doc
            continue
        lists: list[tuple[str, Mapping[str, Any]]] = [(where, doc)]
        nested: list[tuple[str, Mapping[str, Any]]] = []
        while lists:
            for list_where, lst in lists:
                items = lst.get("items")
                items = [] if items is None else items
                if not isinstance(items, list):
                    raise ManifestError(
                        f"{source}: {list_where}: {lst.get('kind')}: items: expected a list, "
                        f"got {type_name(items)}"
                    )
                for j, item in enumerate(items):
                    if not isinstance(item, Mapping):
                        raise ManifestError(
                            f"{source}: {list_where}: items[{j}]: expected a mapping, got "
                            f"{type_name(item)}"
                        )
                    item_where = f"{list_where} items[{j}]"
                    item = _typed_item(lst, item)
                    if _is_list(item):
                        nested.append((item_where, item))
                    else:
                        yield item_where, item
            lists, nested = nested, []


def decode_objects(
    docs: Iterable[Any],
    source: str,
    validate: str = "strict",
    keep_raw: bool = False,
    *,
    api_rules: bool = True,
) -> Manifests:
    """Decode already-parsed documents (dicts) read from ``source``.

    Workload controllers are decoded, not expanded into pods (see `load_paths`,
    `schedsim.api.apps.controllers.expand_workloads`); `Manifests.warnings` ends with the
    aggregated skipped-kinds lines.

    Args:
        docs: parsed YAML/JSON documents; ``None`` documents are ignored.
        source: the file name used in messages.
        validate: kubectl's ``--validate``: ``strict`` (an unknown or misspelled field of a
            modelled kind is an error), ``warn`` (a warning line per field, the field is
            ignored) or ``ignore``; see `schedsim.api.loading.strict`.
        keep_raw: keep the objects a kube-scheduler-simulator export holds, as read, in
            `Manifests.raw_objects`.
        api_rules: False skips the API server's value rules (`schedsim.api.validation`) but
            not the field check: for objects as Kubernetes' own unit tests build them, which
            never pass the API server (the upstream case runners).

    Returns:
        the decoded objects.

    Raises:
        ManifestError: an object is malformed or duplicated, the API server would refuse
            it (one line per problem), or (strict) has an unknown field:
            ``FILE: KIND NS/NAME: FIELD: unknown field "NAME"``.
        ValueError: ``validate`` is not one of strict, warn, ignore.
    """
    out = _decode_objects(docs, source, validate, keep_raw, api_rules)
    out.warnings.extend(out.summary_warnings())
    return out


_RAW_KINDS = frozenset(kind for _, kind in EXPORT_KINDS.values())


def _decode_objects(
    docs: Iterable[Any],
    source: str,
    validate: str = "strict",
    keep_raw: bool = False,
    api_rules: bool = True,
    parsed: bool = False,
) -> Manifests:
    """`decode_objects` without the summary lines; ``parsed``: ``docs`` come from
    `parse_text` (then each distinct pod spec is decoded and validated once,
    `schedsim.api.loading.spec_memo`)."""
    out = Manifests()
    checker = FieldChecker(source, validate)
    memo = SpecMemo() if parsed else None
    api = ApiValidator(source, validate if api_rules else "ignore", memo)
    found = 0
    patches: list[ResourcePatch] = []
    raw_nodes: dict[str, Mapping[str, Any]] = {}
    for where, obj in _flatten(docs, source, validate, out):
        found += 1
        kind = obj.get("kind")
        if kind is not None and not isinstance(kind, str):
            raise ManifestError(
                f"{source}: {where}: kind: expected a string, got {type_name(kind)}"
            )
        if not kind:
            raise ManifestError(f"{source}: {where}: kind: required")
        entry = KINDS.get(kind)
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        raw_name, raw_ns = meta.get("name"), meta.get("namespace")
        name = raw_name if isinstance(raw_name, str) else ""
        ns = raw_ns if isinstance(raw_ns, str) else ""
        if is_resource_patch(obj):  # a KWOK recording's change: kept, not applied
            try:
                patches.append(ResourcePatch.from_manifest(obj, source, where))
            except FieldError as e:
                raise ManifestError(
                    f"{source}: ResourcePatch ({where}): {e.field}: {e.problem}"
                ) from None
            continue
        if kind in NOT_RUN:
            out._not_run.setdefault(kind, []).append(f"{ns or 'default'}/{name}")
            api.check(obj, kind, describe_object(kind, ns or "default", name))
            continue
        if entry is None:
            out.skipped[kind] = out.skipped.get(kind, 0) + 1
            continue
        decoder, _, namespaced = entry
        ns = (ns or "default") if namespaced else ""
        if not raw_name and isinstance(meta.get("generateName"), str) and meta["generateName"]:
            # the API server names the object: generateName + 5 characters (deterministic)
            name = generate_name(meta["generateName"], f"{source}:{where}")
            obj = {**obj, "metadata": {**meta, "name": name}}
        if keep_raw and kind in _RAW_KINDS:
            out.raw_objects.append((kind, obj))
        if kind == "Node" and name:  # as read: a recording's Node patches apply to it
            raw_nodes[name] = obj
        label = describe_object(kind, ns, name) if name else f"{kind} ({where}, no name)"
        try:
            value = decoder(obj) if memo is None or kind != "Pod" else Pod.from_manifest(obj, memo)
        except FieldError as e:
            # reported with every other problem of the file by api.finish (cli.md: "every
            # problem of a file is reported"); the object itself is left out
            hint = go_template_hint(e.problem, lines=False)
            api.add_error(f"{source}: {label}: {e.field}: {e.problem}{hint}")
            continue
        # after decoding: the decoders' messages say more (a v1beta1 field under v1, ...)
        checker.check(obj, kind, label)
        api.check(obj, kind, label)  # the API server's value rules (schedsim.api.validation)
        out._add(value, source)
    if not found:  # an empty file, only comments or '---', or empty Lists: likely a slip
        out.warnings.append(f"no objects found in {source}")
    if patches:
        out.kwok_patches.extend(patches)
        out.kwok_nodes.update(raw_nodes)
        out.kwok_warnings.append(timeline_warning(source, patches))
        out.warnings.append(out.kwok_warnings[-1])
    try:
        out.warnings.extend(checker.warnings() + api.finish())
    except ManifestError as e:
        hint = go_template_hint(str(e), lines=False)
        if hint:  # a value such as a name "pod-{{ .Index }}" failed the server's rules
            raise ManifestError(f"{e}\n{source}: {hint.removeprefix('; ')}") from None
        raise
    return out


MAX_INPUT_BYTES: Final = 1 << 30
"""Largest input file schedsim reads (1 GiB): an endless stream (``/dev/zero``, a FIFO that
never closes) is refused when it gets there instead of exhausting memory."""

_CHUNK: Final = 1 << 20


def read_text_stream(fh: BinaryIO, name: str) -> str:
    """The UTF-8 text of a byte stream (a leading BOM dropped), read in 1 MiB chunks.

    Reading stops after the first NUL character (YAML and JSON allow none: the parser then
    reports it with its position), so an endless binary stream like ``/dev/zero`` ends at
    its first chunk.

    Raises:
        ManifestError: ``NAME: not a UTF-8 text file``; more than `MAX_INPUT_BYTES`.
    """
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    parts: list[str] = []
    total = 0
    while True:
        chunk = fh.read(_CHUNK)
        if not chunk:
            break
        total += len(chunk)
        try:
            text = decoder.decode(chunk)
        except UnicodeDecodeError:
            raise ManifestError(f"{name}: not a UTF-8 text file") from None
        nul = text.find("\0")
        if nul >= 0:  # YAML and JSON allow no NUL: the parser reports it where it is
            parts.append(text[: nul + 1])
            return "".join(parts)
        if total > MAX_INPUT_BYTES:
            raise ManifestError(
                f"{name}: larger than {MAX_INPUT_BYTES:,} bytes, more than schedsim reads "
                "(is it an endless stream?)"
            )
        parts.append(text)
    try:
        parts.append(decoder.decode(b"", final=True))
    except UnicodeDecodeError:
        raise ManifestError(f"{name}: not a UTF-8 text file") from None
    return "".join(parts)


def _read(path: Path) -> str:
    inputs.note(str(path))  # no output may replace it (schedsim.cli.output)
    try:
        with path.open("rb") as fh:
            return read_text_stream(fh, str(path))
    except FileNotFoundError:
        raise ManifestError(f"{path}: no such file or directory") from None
    except IsADirectoryError:
        raise ManifestError(f"{path}: cannot read: Is a directory") from None
    except OSError as e:
        raise ManifestError(f"{path}: cannot read: {e.strerror}") from None


def read_documents(path: str) -> list[Any]:
    """Read and parse one YAML (or ``.json``) file into its documents, with the manifest
    rules (duplicate keys are errors, timestamps stay strings).

    Raises:
        ManifestError: ``FILE: problem`` for a missing/unreadable file or invalid YAML/JSON.
    """
    return parse_text(_read(Path(path)), path)


def read_stdin() -> str:
    """Standard input as UTF-8 text (its bytes, whatever the locale's encoding).

    Raises:
        ManifestError: ``<stdin>: problem`` (closed, not UTF-8, unreadable).
    """
    stream = sys.stdin
    if stream is None:  # started with stdin closed
        raise ManifestError("<stdin>: standard input is closed")
    try:
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            return read_text_stream(buffer, "<stdin>")
        data: str = stream.read()  # a text stream without bytes (a test's StringIO)
        return data
    except UnicodeDecodeError:
        raise ManifestError("<stdin>: not a UTF-8 text file") from None
    except OSError as e:
        raise ManifestError(f"<stdin>: cannot read: {e.strerror or e}") from None


def load_text(
    text: str,
    source: str,
    *,
    expand_workloads: bool = True,
    validate: str = "strict",
    keep_raw: bool = False,
    workload_scale: float = 1.0,
) -> Manifests:
    """Parse and decode manifest text (YAML, or JSON when ``source`` ends in ``.json``),
    then expand workload controllers and apply the API server's defaults (see
    `load_paths`; ``validate``, ``keep_raw`` and ``workload_scale`` as there).

    Raises:
        ManifestError: the text is not YAML/JSON or an object is malformed.
    """
    check_mode(validate)
    out = _decode_objects(parse_text(text, source), source, validate, keep_raw, parsed=True)
    _finish(out, expand_workloads, workload_scale)
    return out


def _finish(m: Manifests, expand: bool, workload_scale: float = 1.0) -> None:
    """The steps after every input is read: controllers' pods (their sizes scaled by
    ``workload_scale``), claims' default StorageClass, pod admission (LimitRanger, Priority,
    DefaultTolerationSeconds, RuntimeClass, in the API server's order), warnings."""
    read = len(m.pods)  # the input's own pods; a controller's are appended after them
    if expand:
        scale_workloads(m, workload_scale)
        controllers.expand_workloads(m)
    else:
        m.warnings.extend(controllers.unexpanded_warning(m))
    m.persistent_volume_claims[:], pvc_warnings = storage_admission.admit_claims(
        m.persistent_volume_claims, m.storage_classes, m.persistent_volumes, m.source_of
    )
    pod_admission = PodAdmission(m.limit_ranges, m.runtime_classes, m.source_of)
    from_input: dict[int, bool] = {}
    limited = []
    for i, pod in enumerate(m.pods):
        admitted_pod = pod_admission.limit_ranger(pod, i < read)
        if admitted_pod is not None:
            from_input[id(admitted_pod)] = i < read
            limited.append(admitted_pod)
    # admission's priority and DefaultTolerationSeconds' tolerations, in one copy per pod
    admitted, refused = priority.priority_changes(
        limited, m.priority_classes, stored=lambda p: from_input[id(p)] and p.priority_given
    )
    pods = []
    for pod, changes in admitted:
        more = defaults.default_pod_changes(pod)
        if more:
            changes = {**changes, **more}
        given = from_input[id(pod)]
        new = evolve(pod, **changes) if changes else pod
        if new.runtime_class_name:
            kept = pod_admission.runtime_class(new, given)
            if kept is None:
                continue
            new = kept
        pods.append(new)
    m.pods[:] = pods
    m.warnings.extend(refused + pvc_warnings + pod_admission.finish())
    for node in m.nodes:
        m.warnings.extend(
            f"{m.source_of(node)}: Node {node.name}: {w}"
            for w in defaults.node_warnings(node, has_pods=bool(m.pods))
        )
    m.warnings.extend(m.summary_warnings())


def load_paths(
    paths: Sequence[str],
    stdin_text: Callable[[], str] | None = None,
    *,
    expand_workloads: bool = True,
    validate: str = "strict",
    keep_raw: bool = False,
    workload_scale: float = 1.0,
) -> Manifests:
    """Load manifests from files, directories and ``-`` (stdin).

    A kube-scheduler-simulator export (its ``ResourcesForLoad`` JSON, see
    `schedsim.api.loading.kss`) is read wherever it appears, recognised by its shape.

    After reading every input, workload controllers are expanded into the pods they would
    create (`schedsim.api.apps.controllers.expand_workloads`) and the API server's pod defaults
    and admission are applied (`schedsim.api.loading.defaults.default_pod`, Priority,
    LimitRanger and RuntimeClass: `schedsim.api.loading.admission`); objects given with only
    ``generateName`` get a deterministic name.

    Args:
        paths: file paths, directory paths (their ``.yaml``/``.yml``/``.json`` files, sorted)
            and ``-`` for standard input.
        stdin_text: reads standard input (tests inject it); defaults to reading
            ``sys.stdin`` as UTF-8.
        expand_workloads: False keeps controllers as objects without creating their pods
            (for inputs that already list every pod).
        validate: ``strict``, ``warn`` or ``ignore`` (see `decode_objects`).
        keep_raw: see `decode_objects`.
        workload_scale: multiply every workload controller's size by this before expanding
            it (`schedsim.api.apps.workload_scale`; 1: as read).

    Returns:
        all objects, in input order.

    Raises:
        ManifestError: a path is missing or unreadable, a file is not YAML/JSON, an object is
            malformed, two inputs define the same object, or admission refuses a pending pod
            of the input (a LimitRange's limits, a RuntimeClass missing or in conflict).
    """
    check_mode(validate)
    out = Manifests()
    for p in paths:
        if p == "-":
            text = (stdin_text or read_stdin)()
            docs = parse_text(text, "<stdin>")
            out.extend(_decode_objects(docs, "<stdin>", validate, keep_raw, parsed=True))
            continue
        if not p:  # Path("") would be the current directory
            raise ManifestError("'': empty path")
        path = Path(p)
        if path.is_dir():
            inputs.note_dir(str(path))  # no output may be written into it (schedsim.cli.output)
            try:
                files = sorted(
                    f for f in path.iterdir() if f.is_file() and f.suffix in _MANIFEST_SUFFIXES
                )
            except OSError as e:
                raise ManifestError(f"{path}: cannot read: {e.strerror}") from None
            if not files:
                raise ManifestError(f"{path}: directory has no .yaml, .yml or .json files")
        else:
            files = [path]
        for f in files:
            docs = parse_text(_read(f), str(f))
            out.extend(_decode_objects(docs, str(f), validate, keep_raw, parsed=True))
    _finish(out, expand_workloads, workload_scale)
    out.warnings.extend(_unknown_node_warnings(out))
    return out


def _unknown_node_warnings(m: Manifests) -> list[str]:
    """One line per node-local ResourceSlice and per CSINode whose node is not among the
    nodes read: nothing schedules onto that node, so the object is never used."""
    nodes = {n.name for n in m.nodes}
    out = []
    for sl in m.resource_slices:
        if sl.node_name is not None and sl.node_name not in nodes:
            source = m.source_of(sl)
            out.append(
                f"{source}: ResourceSlice {sl.name}: spec.nodeName: node {sl.node_name!r} is not "
                "among the nodes; ignored for scheduling"
            )
    for csi in m.csi_nodes:
        if csi.name not in nodes:
            source = m.source_of(csi)
            out.append(
                f"{source}: CSINode {csi.name}: metadata.name: node {csi.name!r} is not among "
                "the nodes; ignored for scheduling"
            )
    return out
