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
`ManifestError` with the message ``FILE: KIND NS/NAME: FIELD: problem``.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from schedsim.api import controllers, defaults, priority, storage_admission
from schedsim.api._decode import type_name
from schedsim.api.core import Node, Pod
from schedsim.api.defaults import generate_name
from schedsim.api.errors import FieldError, ManifestError, first_few
from schedsim.api.evolve import evolve
from schedsim.api.kss import EXPORT_KINDS, expand_export, looks_like_export
from schedsim.api.manifest_text import parse_text
from schedsim.api.policy import Namespace, PodDisruptionBudget, PriorityClass, Service
from schedsim.api.resource import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from schedsim.api.spec_memo import SpecMemo
from schedsim.api.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from schedsim.api.strict import FieldChecker, check_mode
from schedsim.api.validation import ApiValidator
from schedsim.api.workload_scale import scale_workloads
from schedsim.api.workloads import (
    DaemonSet,
    Deployment,
    Job,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
)

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

_Object = (
    Node
    | Pod
    | DeviceClass
    | ResourceClaim
    | ResourceClaimTemplate
    | ResourceSlice
    | CSINode
    | PersistentVolume
    | PersistentVolumeClaim
    | StorageClass
    | VolumeAttachment
    | CSIDriver
    | CSIStorageCapacity
    | Namespace
    | Service
    | PriorityClass
    | PodDisruptionBudget
    | ReplicaSet
    | ReplicationController
    | Deployment
    | StatefulSet
    | DaemonSet
    | Job
)

# kind -> (decoder, Manifests attribute, namespaced). Cluster-scoped kinds ignore
# metadata.namespace, as the API server does; namespaced ones default it to "default".
_KINDS: Mapping[str, tuple[Callable[[Mapping[str, Any]], _Object], str, bool]] = {
    "Node": (Node.from_manifest, "nodes", False),
    "Pod": (Pod.from_manifest, "pods", True),
    "DeviceClass": (DeviceClass.from_manifest, "device_classes", False),
    "ResourceClaim": (ResourceClaim.from_manifest, "resource_claims", True),
    "ResourceClaimTemplate": (
        ResourceClaimTemplate.from_manifest,
        "resource_claim_templates",
        True,
    ),
    "ResourceSlice": (ResourceSlice.from_manifest, "resource_slices", False),
    "CSINode": (CSINode.from_manifest, "csi_nodes", False),
    "PersistentVolume": (PersistentVolume.from_manifest, "persistent_volumes", False),
    "PersistentVolumeClaim": (
        PersistentVolumeClaim.from_manifest,
        "persistent_volume_claims",
        True,
    ),
    "StorageClass": (StorageClass.from_manifest, "storage_classes", False),
    "VolumeAttachment": (VolumeAttachment.from_manifest, "volume_attachments", False),
    "CSIDriver": (CSIDriver.from_manifest, "csi_drivers", False),
    "CSIStorageCapacity": (CSIStorageCapacity.from_manifest, "csi_storage_capacities", True),
    "Namespace": (Namespace.from_manifest, "namespaces", False),
    "Service": (Service.from_manifest, "services", True),
    "PriorityClass": (PriorityClass.from_manifest, "priority_classes", False),
    "PodDisruptionBudget": (PodDisruptionBudget.from_manifest, "pod_disruption_budgets", True),
    "ReplicaSet": (ReplicaSet.from_manifest, "replica_sets", True),
    "ReplicationController": (
        ReplicationController.from_manifest,
        "replication_controllers",
        True,
    ),
    "Deployment": (Deployment.from_manifest, "deployments", True),
    "StatefulSet": (StatefulSet.from_manifest, "stateful_sets", True),
    "DaemonSet": (DaemonSet.from_manifest, "daemon_sets", True),
    "Job": (Job.from_manifest, "jobs", True),
}
_ATTRIBUTE = {
    getattr(decoder, "__self__"): attr  # noqa: B009 (bound classmethod -> its class)
    for decoder, attr, _ in _KINDS.values()
}
_NAMESPACED = frozenset(kind for kind, (_, _, namespaced) in _KINDS.items() if namespaced)

# Kinds that are read but deliberately not run, with why (one warning line each).
_NOT_RUN = {
    "CronJob": "CronJobs create Jobs on a schedule, which schedsim does not run; give the "
    "Job (or its pods) instead",
}


def _key(obj: _Object) -> tuple[str, str, str]:
    """(kind, namespace, name) identifying an object for the duplicate check."""
    namespace = getattr(obj, "namespace", "") if type(obj).__name__ in _NAMESPACED else ""
    return (type(obj).__name__, namespace, obj.name)


@attrs.define
class Manifests:
    """Objects read from the inputs, in input order.

    Attributes:
        nodes: decoded Nodes.
        pods: decoded Pods (bound and pending), then the pods of workload controllers
            (`schedsim.api.controllers.expand_workloads`).
        warnings: things the user should know, one line each: kinds not modelled, in one
            line with counts (``skipped kinds not modelled by schedsim: 2 ConfigMap,
            1 Ingress``); CronJobs; ``no objects found in FILE``; and (from `load_paths`)
            one line per node-local ResourceSlice or CSINode whose node is not among the
            nodes.
        device_classes: decoded DeviceClasses (resource.k8s.io).
        resource_claims: decoded ResourceClaims.
        resource_claim_templates: decoded ResourceClaimTemplates.
        resource_slices: decoded ResourceSlices.
        csi_nodes: decoded CSINodes (storage.k8s.io).
        persistent_volumes: decoded PersistentVolumes.
        persistent_volume_claims: decoded PersistentVolumeClaims (and the pending claims of
            StatefulSet volumeClaimTemplates).
        storage_classes: decoded StorageClasses.
        volume_attachments: decoded VolumeAttachments.
        csi_drivers: decoded CSIDrivers.
        csi_storage_capacities: decoded CSIStorageCapacities.
        namespaces: decoded Namespaces.
        services: decoded Services.
        priority_classes: decoded PriorityClasses.
        pod_disruption_budgets: decoded PodDisruptionBudgets (policy/v1).
        replica_sets: decoded ReplicaSets (and those created for Deployments).
        replication_controllers: decoded ReplicationControllers.
        deployments: decoded Deployments.
        stateful_sets: decoded StatefulSets.
        daemon_sets: decoded DaemonSets.
        jobs: decoded Jobs.
        skipped: kind -> number of objects of a kind schedsim does not model.
        scheduler_config: the KubeSchedulerConfiguration embedded in a kube-scheduler-simulator
            export (``apiVersion``/``kind`` filled in), or None.
        scheduler_config_source: the file it came from.
        raw_objects: with ``keep_raw=True``, (kind, object as read) of every Pod, Node,
            PersistentVolume, PersistentVolumeClaim, StorageClass, PriorityClass and
            Namespace in input order (what ``--output kss`` writes back); else empty.
    """

    nodes: list[Node] = attrs.field(factory=list)
    pods: list[Pod] = attrs.field(factory=list)
    warnings: list[str] = attrs.field(factory=list)
    device_classes: list[DeviceClass] = attrs.field(factory=list)
    resource_claims: list[ResourceClaim] = attrs.field(factory=list)
    resource_claim_templates: list[ResourceClaimTemplate] = attrs.field(factory=list)
    resource_slices: list[ResourceSlice] = attrs.field(factory=list)
    csi_nodes: list[CSINode] = attrs.field(factory=list)
    persistent_volumes: list[PersistentVolume] = attrs.field(factory=list)
    persistent_volume_claims: list[PersistentVolumeClaim] = attrs.field(factory=list)
    storage_classes: list[StorageClass] = attrs.field(factory=list)
    volume_attachments: list[VolumeAttachment] = attrs.field(factory=list)
    csi_drivers: list[CSIDriver] = attrs.field(factory=list)
    csi_storage_capacities: list[CSIStorageCapacity] = attrs.field(factory=list)
    namespaces: list[Namespace] = attrs.field(factory=list)
    services: list[Service] = attrs.field(factory=list)
    priority_classes: list[PriorityClass] = attrs.field(factory=list)
    pod_disruption_budgets: list[PodDisruptionBudget] = attrs.field(factory=list)
    replica_sets: list[ReplicaSet] = attrs.field(factory=list)
    replication_controllers: list[ReplicationController] = attrs.field(factory=list)
    deployments: list[Deployment] = attrs.field(factory=list)
    stateful_sets: list[StatefulSet] = attrs.field(factory=list)
    daemon_sets: list[DaemonSet] = attrs.field(factory=list)
    jobs: list[Job] = attrs.field(factory=list)
    skipped: dict[str, int] = attrs.field(factory=dict)
    # read from the inputs, not object lists (a Cluster reaches them through its origin)
    scheduler_config: Mapping[str, Any] | None = attrs.field(default=None, init=False)
    scheduler_config_source: str = attrs.field(default="", init=False)
    raw_objects: list[tuple[str, Mapping[str, Any]]] = attrs.field(factory=list, init=False)
    _not_run: dict[str, list[str]] = attrs.field(factory=dict, init=False, repr=False)
    _seen: dict[tuple[str, str, str], str] = attrs.field(factory=dict, init=False, repr=False)

    def extend(self, other: Manifests) -> None:
        """Append another batch, checking for duplicate objects across files."""
        for _, attr, _ in _KINDS.values():
            for obj in getattr(other, attr):
                self._add(obj, other._seen[_key(obj)])
        self.warnings.extend(other.warnings)
        for kind, n in other.skipped.items():
            self.skipped[kind] = self.skipped.get(kind, 0) + n
        for kind, names in other._not_run.items():
            self._not_run.setdefault(kind, []).extend(names)
        self.raw_objects.extend(other.raw_objects)
        if other.scheduler_config is not None:
            self._set_scheduler_config(other.scheduler_config, other.scheduler_config_source)

    def _set_scheduler_config(self, config: Mapping[str, Any], source: str) -> None:
        if self.scheduler_config is not None:
            raise ManifestError(
                f"{source}: kube-scheduler-simulator export: schedulerConfig: a second "
                f"scheduler configuration (the first is in {self.scheduler_config_source}); "
                "give one export, or --config"
            )
        self.scheduler_config, self.scheduler_config_source = config, source

    def source_of(self, obj: _Object) -> str:
        """The file (or ``<stdin>``, ``<example ...>``) ``obj`` was read from; ``?`` for an
        object that did not come through this Manifests."""
        return self._seen.get(_key(obj), "?")

    def add(self, obj: _Object, source: str) -> None:
        """Record ``obj`` (one of the decoded kinds) read from, or made for an object of,
        ``source``.

        Raises:
            ManifestError: an object of that kind, namespace and name is already there.
        """
        self._add(obj, source)

    def _add(self, obj: _Object, source: str) -> None:
        """Record ``obj`` read from ``source``; a duplicate raises ManifestError."""
        self._claim(_key(obj), source)
        getattr(self, _ATTRIBUTE[type(obj)]).append(obj)

    def _claim(self, key: tuple[str, str, str], source: str) -> None:
        first = self._seen.get(key)
        if first is not None:
            kind, ns, name = key
            raise ManifestError(
                f"{source}: {_describe(kind, ns, name)}: metadata.name: duplicate object "
                f"(first seen in {first})"
            )
        self._seen[key] = source

    def summary_warnings(self) -> list[str]:
        """The aggregated lines for kinds not modelled and kinds not run (CronJob)."""
        out = []
        if self.skipped:
            counts = ", ".join(
                f"{n} {kind}{_did_you_mean(kind)}" for kind, n in sorted(self.skipped.items())
            )
            out.append(f"skipped kinds not modelled by schedsim: {counts}")
        for kind, names in sorted(self._not_run.items()):
            shown = first_few(names)
            out.append(f"skipped {len(names)} {kind} object(s) ({shown}): {_NOT_RUN[kind]}")
        return out


def _did_you_mean(kind: str) -> str:
    """`` (did you mean Pod?)`` for a skipped kind one typo away from a kind schedsim reads
    (kinds are case-sensitive: ``pod`` is not ``Pod`` for the API server either)."""
    close = difflib.get_close_matches(kind, _KINDS, n=1, cutoff=0.75)
    if not close:
        close = [k for k in _KINDS if k.lower() == kind.lower()]
    return f" (did you mean {close[0]}?)" if close else ""


def _describe(kind: str, namespace: str, name: str) -> str:
    """``KIND NS/NAME``; a name or namespace that is not printable is shown escaped (a
    terminal escape sequence in a name is never printed raw)."""
    key = f"{namespace}/{name}" if namespace else name
    return f"{kind} {key if key.isprintable() else repr(key)}"


def _is_list(obj: Mapping[str, Any]) -> bool:
    kind = obj.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "items" in obj


def _flatten(
    docs: Iterable[Any], source: str, validate: str, sink: Manifests
) -> Iterable[tuple[str, Mapping[str, Any]]]:
    """Yield (where, object) for every object, expanding ``kind: List`` items and
    kube-scheduler-simulator exports (`schedsim.api.kss`; their scheduler configuration goes
    to ``sink``).

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
    `schedsim.api.controllers.expand_workloads`); `Manifests.warnings` ends with the
    aggregated skipped-kinds lines.

    Args:
        docs: parsed YAML/JSON documents; ``None`` documents are ignored.
        source: the file name used in messages.
        validate: kubectl's ``--validate``: ``strict`` (an unknown or misspelled field of a
            modelled kind is an error), ``warn`` (a warning line per field, the field is
            ignored) or ``ignore``; see `schedsim.api.strict`.
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
    `schedsim.api.spec_memo`)."""
    out = Manifests()
    checker = FieldChecker(source, validate)
    memo = SpecMemo() if parsed else None
    api = ApiValidator(source, validate if api_rules else "ignore", memo)
    found = 0
    for where, obj in _flatten(docs, source, validate, out):
        found += 1
        kind = obj.get("kind")
        if kind is not None and not isinstance(kind, str):
            raise ManifestError(
                f"{source}: {where}: kind: expected a string, got {type_name(kind)}"
            )
        if not kind:
            raise ManifestError(f"{source}: {where}: kind: required")
        entry = _KINDS.get(kind)
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        raw_name, raw_ns = meta.get("name"), meta.get("namespace")
        name = raw_name if isinstance(raw_name, str) else ""
        ns = raw_ns if isinstance(raw_ns, str) else ""
        if kind in _NOT_RUN:
            out._not_run.setdefault(kind, []).append(f"{ns or 'default'}/{name}")
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
        label = _describe(kind, ns, name) if name else f"{kind} ({where}, no name)"
        try:
            value = decoder(obj) if memo is None or kind != "Pod" else Pod.from_manifest(obj, memo)
        except FieldError as e:
            raise ManifestError(f"{source}: {label}: {e.field}: {e.problem}") from None
        # after decoding: the decoders' messages say more (a v1beta1 field under v1, ...)
        checker.check(obj, kind, label)
        api.check(obj, kind, label)  # the API server's value rules (schedsim.api.validation)
        out._add(value, source)
    if not found:  # an empty file, only comments or '---', or empty Lists: likely a slip
        out.warnings.append(f"no objects found in {source}")
    out.warnings.extend(checker.warnings() + api.finish())
    return out


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ManifestError(f"{path}: no such file or directory") from None
    except UnicodeDecodeError:
        raise ManifestError(f"{path}: not a UTF-8 text file") from None
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
        data: str | bytes = getattr(stream, "buffer", stream).read()
        return data.decode("utf-8-sig") if isinstance(data, bytes) else data
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
    ``workload_scale``), claims' default StorageClass, pod defaults, warnings."""
    if expand:
        scale_workloads(m, workload_scale)
        controllers.expand_workloads(m)
    else:
        m.warnings.extend(controllers.unexpanded_warning(m))
    m.persistent_volume_claims[:], pvc_warnings = storage_admission.admit_claims(
        m.persistent_volume_claims, m.storage_classes, m.persistent_volumes, m.source_of
    )
    # admission's priority and DefaultTolerationSeconds' tolerations, in one copy per pod
    admitted, refused = priority.priority_changes(m.pods, m.priority_classes)
    pods = []
    for pod, changes in admitted:
        more = defaults.default_pod_changes(pod)
        if more:
            changes = {**changes, **more}
        pods.append(evolve(pod, **changes) if changes else pod)
    m.pods[:] = pods
    m.warnings.extend(refused + pvc_warnings)
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
    `schedsim.api.kss`) is read wherever it appears, recognised by its shape.

    After reading every input, workload controllers are expanded into the pods they would
    create (`schedsim.api.controllers.expand_workloads`) and the API server's pod defaults
    are applied (`schedsim.api.defaults.default_pod`); objects given with only
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
            it (`schedsim.api.workload_scale`; 1: as read).

    Returns:
        all objects, in input order.

    Raises:
        ManifestError: a path is missing or unreadable, a file is not YAML/JSON, an object is
            malformed, or two inputs define the same object.
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
            source = m._seen[_key(sl)]
            out.append(
                f"{source}: ResourceSlice {sl.name}: spec.nodeName: node {sl.node_name!r} is not "
                "among the nodes; ignored for scheduling"
            )
    for csi in m.csi_nodes:
        if csi.name not in nodes:
            source = m._seen[_key(csi)]
            out.append(
                f"{source}: CSINode {csi.name}: metadata.name: node {csi.name!r} is not among "
                "the nodes; ignored for scheduling"
            )
    return out
