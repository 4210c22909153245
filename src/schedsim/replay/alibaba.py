"""The Alibaba GPU cluster trace (``alibaba/clusterdata``, ``cluster-trace-gpu-v2023``) as a
`Trace`.

Two CSV files, read with their header rows:

* the node list (``openb_node_list*.csv``): ``sn,cpu_milli,memory_mib,gpu,model``; each row
  a node named ``sn`` with ``cpu_milli`` milli-CPU, ``memory_mib`` MiB of memory, ``gpu``
  GPUs of ``model`` (empty or ``nan`` without GPUs), labelled `GPU_MODEL_LABEL`;
* the pod list (``openb_pod_list*.csv``): ``name,cpu_milli,memory_mib,num_gpu,gpu_milli,
  gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time`` (times in seconds).
  Each row is a pod in namespace ``default`` that arrives at ``creation_time`` (t = 0 is the
  earliest creation time of the file) and runs, once bound, for ``deletion_time -
  scheduled_time`` seconds (``deletion_time - creation_time`` when it was never scheduled;
  until the end without a ``deletion_time``). ``gpu_spec`` (models separated by ``|``)
  becomes a required node affinity on `GPU_MODEL_LABEL`. ``qos`` and ``pod_phase`` are
  read and checked, not used: every pod of the trace is replayed. Only the first five
  columns are required (`POD_REQUIRED_COLUMNS`; the ``multigpu*`` lists have just those):
  a missing optional column defaults as the trace's own converter
  (``data/pod_csv_to_yaml.py`` of the FGD artifact) reads it: no ``gpu_spec`` is no model
  constraint, no ``creation_time`` is every pod arriving at t = 0 in file order, no
  ``deletion_time`` is a pod that never completes.

GPUs (``--gpu-as``, `GPU_MODES`):

* ``extended-resource`` (the default): the extended resource ``nvidia.com/gpu``, ``gpu`` on
  the node and ``num_gpu`` on the pod;
* ``dra``: Dynamic Resource Allocation. Each GPU node publishes one ResourceSlice (driver
  `GPU_DRIVER`, pool and slice named after the node, ``spec.nodeName`` the node) with ``gpu``
  devices ``gpu-0``, ``gpu-1``... carrying the string attribute ``model``; one DeviceClass
  `GPU_DEVICE_CLASS` selects the driver's devices (CEL ``device.driver == ...``); a pod with
  ``num_gpu`` N references the ResourceClaimTemplate ``gpu-N`` (one ExactCount request of N
  devices of the class), so the replay's claim controller creates one ResourceClaim per pod
  when it arrives, and DynamicResources allocates N devices on one node.

A GPU-sharing pod (``num_gpu`` 1 with ``gpu_milli`` < 1000) takes a whole GPU, and a warning
counts them: an extended resource cannot be shared, and sharing a DRA device needs
DRAConsumableCapacity (alpha, off by default in 1.34). With ``gpu_share`` (the CLI sets it for
``dra`` when that gate is on) the devices allow multiple allocations and publish a
`GPU_CAPACITY` capacity of 1000; a sharing pod references ``gpu-share-M``, one device with a
capacity request of its M milli-GPU, and whole-GPU requests consume a device's whole capacity.

Bad input is refused with ``FILE:LINE: column: problem`` (`TraceError`, a `ManifestError`): a
missing or unknown column, a node or pod name that is not a Kubernetes name (a DNS subdomain;
a node's name is also its ``kubernetes.io/hostname`` label value, at most 63 characters), a
``model`` that is not a label value, a value that is not a non-negative number, a deletion
before the creation or the scheduling, a scheduling before the creation, a duplicate name, a
``gpu_spec`` whose models no node of the node list has (the pod list's only reference to the
node list: it has no node column), a pod that asks for more GPUs than
``gpu_milli`` allows.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

import attrs

from schedsim.api.core import Node, Pod
from schedsim.api.core.resources import pod_requests
from schedsim.api.errors import ManifestError
from schedsim.api.loading import loader
from schedsim.api.loading.loader import decode_objects
from schedsim.api.resource import MAX_DEVICES_PER_SLICE
from schedsim.api.validation.common import dns1123_subdomain_problem, label_value_problem
from schedsim.engine import Cluster
from schedsim.framework.resource import Resource
from schedsim.replay.fragmentation import PodDemand
from schedsim.replay.trace import Trace, TracePod

__all__ = [
    "GPU_CAPACITY",
    "GPU_DEVICE_CLASS",
    "GPU_DRIVER",
    "GPU_MODEL_LABEL",
    "GPU_MODES",
    "NODE_COLUMNS",
    "POD_COLUMNS",
    "POD_REQUIRED_COLUMNS",
    "TraceError",
    "alibaba_trace",
    "pod_demand",
    "read_nodes",
    "read_pods",
]

NODE_COLUMNS: Final = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS: Final = (
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)
POD_REQUIRED_COLUMNS: Final = POD_COLUMNS[:5]
"""The pod list's columns that must be present (the ``multigpu*`` lists have only these)."""
GPU_MODES: Final = ("extended-resource", "dra")
"""How GPUs are modelled (``--gpu-as``; see the module docstring)."""

GPU_DRIVER: Final = "gpu.alibaba.com"
"""``--gpu-as dra``: the DRA driver of the nodes' GPU devices."""
GPU_DEVICE_CLASS: Final = "gpu.alibaba.com"
"""``--gpu-as dra``: the DeviceClass the pods' claims request."""
GPU_CAPACITY: Final = "gpu-milli"
"""``--gpu-as dra`` with DRAConsumableCapacity: each device's consumable capacity (1000)."""

GPU_MODEL_LABEL: Final = "alibaba.com/gpu-model"
"""The node label carrying the node list's ``model`` (what ``gpu_spec`` selects)."""

GPU_RESOURCE: Final = "nvidia.com/gpu"
_PHASES: Final = frozenset({"Pending", "Running", "Succeeded", "Failed", "Unknown", ""})


class TraceError(ManifestError):
    """A trace file that cannot be read: ``FILE:LINE: problem``."""


MAX_LINE_CHARS: Final = 1 << 20
"""Longest line of a trace CSV file (1 Mi characters; a row of the trace is about 100): a
file without line ends (``/dev/zero``, a binary file) is refused there instead of being
read whole into one line."""


def _lines(f: Any, path: str) -> Iterator[str]:
    """The lines of the open CSV file ``f`` for `csv.reader`, checked as they are read: no
    NUL character (Python's csv takes one in a cell; ``/dev/zero`` is nothing else), none
    longer than `MAX_LINE_CHARS`, at most `loader.MAX_INPUT_BYTES` characters in all (an
    endless stream), as manifests are read.

    Raises:
        TraceError: ``FILE:LINE: problem``.
    """
    total = 0
    number = 0
    while line := f.readline(MAX_LINE_CHARS + 1):
        number += 1
        if "\0" in line:
            raise TraceError(
                f"{path}:{number}: a NUL character: not a text file (give the trace's CSV file)"
            )
        if len(line) > MAX_LINE_CHARS:
            raise TraceError(
                f"{path}:{number}: a line longer than {MAX_LINE_CHARS:,} characters: not a "
                "trace CSV file (give the trace's CSV file)"
            )
        total += len(line)
        if total > loader.MAX_INPUT_BYTES:
            raise TraceError(
                f"{path}: larger than {loader.MAX_INPUT_BYTES:,} bytes, more than schedsim "
                "reads (is it an endless stream?)"
            )
        yield line


def _rows(
    path: str, columns: Sequence[str], required: Sequence[str] | None = None
) -> list[tuple[int, dict[str, str]]]:
    """The rows as column -> stripped text; a column of ``columns`` outside ``required``
    (default: all required) that the header lacks reads as ""."""
    try:
        f = open(path, newline="", encoding="utf-8-sig")  # a spreadsheet's BOM is not a name
    except OSError as e:
        raise TraceError(f"{path}: cannot read: {e.strerror or e}") from None
    with f:
        reader = csv.reader(_lines(f, path))
        try:
            header = next(reader)
        except StopIteration:
            raise TraceError(f"{path}:1: empty file (expected a header row)") from None
        except csv.Error as e:
            raise TraceError(f"{path}:1: {e}") from None
        except UnicodeDecodeError:
            raise TraceError(f"{path}:1: not UTF-8 text") from None
        header = [h.strip() for h in header]
        unknown = [h for h in header if h not in columns]
        if unknown:
            raise TraceError(
                f"{path}:1: unknown column(s) {', '.join(unknown)} (expected {','.join(columns)})"
            )
        missing = [c for c in (columns if required is None else required) if c not in header]
        if missing:
            raise TraceError(f"{path}:1: missing column(s) {', '.join(missing)}")
        absent = dict.fromkeys((c for c in columns if c not in header), "")
        out = []
        try:
            for row in reader:
                line = reader.line_num
                if not row or all(not c.strip() for c in row):
                    continue
                if len(row) != len(header):
                    raise TraceError(
                        f"{path}:{line}: {len(row)} fields, the header has {len(header)}"
                    )
                values = {h: v.strip() for h, v in zip(header, row, strict=True)}
                out.append((line, values | absent if absent else values))
        except csv.Error as e:
            raise TraceError(f"{path}:{reader.line_num}: {e}") from None
        except UnicodeDecodeError:
            raise TraceError(f"{path}:{reader.line_num + 1}: not UTF-8 text") from None
    return out


def _named_rows(
    path: str,
    columns: Sequence[str],
    key: str,
    what: str,
    required: Sequence[str] | None = None,
) -> Iterator[tuple[int, str, str, dict[str, str]]]:
    """``(line, "FILE:LINE", name, row)`` per row, the name in column ``key`` required and
    unique."""
    seen: dict[str, int] = {}
    for line, r in _rows(path, columns, required):
        where = f"{path}:{line}"
        name = r[key]
        if not name:
            raise TraceError(f"{where}: {key}: required")
        if name in seen:
            raise TraceError(
                f"{where}: {key}: duplicate {what} {name!r} (first on line {seen[name]})"
            )
        seen[name] = line
        yield line, where, name, r


def _empty(v: str) -> bool:
    return v == "" or v.lower() == "nan"


def _number(where: str, column: str, v: str, *, required: bool = True) -> float | None:
    """A numeric column: an empty cell is a missing value (refused when ``required``); any
    other text must be a finite number >= 0 (``nan``, ``NaN``, ``inf`` are refused, in every
    numeric column alike)."""
    if v == "":
        if required:
            raise TraceError(f"{where}: {column}: required")
        return None
    try:
        x = float(v)
    except ValueError:
        raise TraceError(f"{where}: {column}: expected a number, got {v!r}") from None
    if not math.isfinite(x) or x < 0:
        raise TraceError(f"{where}: {column}: must be a number >= 0, got {v!r}")
    return x


MAX_TIME: Final = 9223372036.854775807
"""The latest time a trace row may give, in seconds: Go's longest time.Duration (2^63 - 1 ns,
about 292 years), the most a replay's times and durations can be (``1e300`` was taken, and
the replay ran for 1e300 virtual seconds)."""


def _time(where: str, column: str, v: str, *, required: bool = True) -> float | None:
    """A time column: a number of seconds in [0, `MAX_TIME`]."""
    x = _number(where, column, v, required=required)
    if x is not None and x > MAX_TIME:
        raise TraceError(
            f"{where}: {column}: out of range, got {v!r} (at most 9223372036.854775807 seconds,"
            " Go's longest duration, about 292 years: give the times in seconds)"
        )
    return x


def _int(where: str, column: str, v: str) -> int:
    x = _number(where, column, v)
    assert x is not None
    if x != int(x):
        raise TraceError(f"{where}: {column}: expected a whole number, got {v!r}")
    return int(x)


def _has_column(path: str, column: str) -> bool:
    """Whether the CSV file's header row (already read without error) has ``column``."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        return column in (h.strip() for h in next(csv.reader(f)))


def read_nodes(path: str, *, gpu_as: str = "extended-resource") -> list[Node]:
    """The nodes of a node list (see the module docstring), in file order; with ``gpu_as``
    ``dra`` their GPUs are not an extended resource (see `gpu_objects` for the devices).

    Raises:
        TraceError: ``FILE:LINE: problem``.
    """
    return [node for node, _ in _read_nodes(path, gpu_as)]


def _read_nodes(path: str, gpu_as: str) -> list[tuple[Node, int]]:
    """`read_nodes`, with each node's GPU count."""
    nodes = []
    for _, where, name, r in _named_rows(path, NODE_COLUMNS, "sn", "node"):
        _check_names(where, name, r["model"])
        cpu = _int(where, "cpu_milli", r["cpu_milli"])
        mem = _int(where, "memory_mib", r["memory_mib"])
        gpus = _int(where, "gpu", r["gpu"])
        model = "" if _empty(r["model"]) else r["model"]
        if gpus and not model:
            raise TraceError(f"{where}: model: required for a node with GPUs")
        status: dict[str, Any] = {"cpu": f"{cpu}m", "memory": f"{mem}Mi", "pods": "110"}
        if gpus and gpu_as != "dra":
            status[GPU_RESOURCE] = str(gpus)
        labels = {"kubernetes.io/hostname": name}
        if model:
            labels[GPU_MODEL_LABEL] = model
        node = Node.from_manifest(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": labels},
                "status": {"capacity": status, "allocatable": status},
            }
        )
        nodes.append((node, gpus))
    return nodes


def _check_names(where: str, name: str, model: str) -> None:
    """The node's name and labels as the API server checks them (``ValidateNodeName``: a DNS
    subdomain; the ``kubernetes.io/hostname`` and `GPU_MODEL_LABEL` values: label values)."""
    problem = dns1123_subdomain_problem(name)
    if problem is None and (problem := label_value_problem(name)) is not None:
        problem = f"as the kubernetes.io/hostname label value: {problem}"
    if problem is not None:
        raise TraceError(f"{where}: sn: invalid node name {name!r}: {problem}")
    if not _empty(model) and (problem := label_value_problem(model)) is not None:
        raise TraceError(
            f"{where}: model: invalid value {model!r} for the label {GPU_MODEL_LABEL}: {problem}"
        )


def _template_name(gpus: int, share: float | None) -> str:
    """The ResourceClaimTemplate of a pod asking for ``gpus`` GPUs, or for ``share``
    milli-GPU of one (``--gpu-as dra`` with DRAConsumableCapacity)."""
    return f"gpu-share-{share:g}" if share is not None else f"gpu-{gpus}"


def _pod(
    name: str, cpu: int, mem: int, gpus: int, spec: Sequence[str], dra: bool, share: float | None
) -> Pod:
    requests: dict[str, str] = {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}
    resources: dict[str, Any] = {"requests": requests}
    pod_spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "trace", "resources": resources}]
    }
    if gpus and dra:
        resources["claims"] = [{"name": "gpu"}]
        template = _template_name(gpus, share)
        pod_spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    elif gpus:
        requests[GPU_RESOURCE] = str(gpus)
    if spec:
        pod_spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": GPU_MODEL_LABEL, "operator": "In", "values": list(spec)}
                            ]
                        }
                    ]
                }
            }
        }
    return Pod.from_manifest(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": pod_spec}
    )


def read_pods(
    path: str,
    models: Mapping[str, int] | None = None,
    *,
    gpu_as: str = "extended-resource",
    gpu_share: bool = False,
) -> tuple[list[TracePod], list[str]]:
    """The pods of a pod list (see the module docstring), by arrival, and warnings.

    Args:
        path: the CSV file.
        models: GPU model -> nodes that have it (from the node list); when given, a
            ``gpu_spec`` naming another model is an error.
        gpu_as: one of `GPU_MODES` (``dra``: pods reference the ResourceClaimTemplates of
            `gpu_objects`).
        gpu_share: with ``dra``, a GPU-sharing pod asks for its ``gpu_milli`` of one device's
            ``gpu-milli`` capacity (DRAConsumableCapacity) instead of a whole device.

    Raises:
        TraceError: ``FILE:LINE: problem``.
    """
    rows = []
    shared = 0
    rows_in = list(_named_rows(path, POD_COLUMNS, "name", "pod", POD_REQUIRED_COLUMNS))
    timed = _has_column(path, "creation_time")
    for line, where, name, r in rows_in:
        if (problem := dns1123_subdomain_problem(name)) is not None:
            raise TraceError(f"{where}: name: invalid pod name {name!r}: {problem}")
        cpu = _int(where, "cpu_milli", r["cpu_milli"])
        mem = _int(where, "memory_mib", r["memory_mib"])
        gpus = _int(where, "num_gpu", r["num_gpu"])
        milli = _number(where, "gpu_milli", r["gpu_milli"], required=False) or 0.0
        if milli > 1000:
            raise TraceError(
                f"{where}: gpu_milli: must be <= 1000 (one GPU), got {r['gpu_milli']!r}"
            )
        if gpus == 0 and milli > 0:
            raise TraceError(f"{where}: gpu_milli: {r['gpu_milli']} with num_gpu 0")
        if gpus > 1 and 0 < milli < 1000:
            raise TraceError(
                f"{where}: gpu_milli: a share of a GPU ({r['gpu_milli']}) is only allowed with "
                f"num_gpu 1, got num_gpu {gpus}"
            )
        share = milli if gpus == 1 and 0 < milli < 1000 else None
        if share is not None and not (gpu_share and gpu_as == "dra"):
            shared += 1
            share = None
        spec = tuple(s for s in r["gpu_spec"].split("|") if not _empty(s)) if r["gpu_spec"] else ()
        if spec and models is not None:
            if not any(s in models for s in spec):
                raise TraceError(
                    f"{where}: gpu_spec: no node of the node list has model(s) {', '.join(spec)}"
                )
        if r["pod_phase"] not in _PHASES:
            raise TraceError(
                f"{where}: pod_phase: expected one of Pending, Running, Succeeded, Failed, "
                f"got {r['pod_phase']!r}"
            )
        created = _time(where, "creation_time", r["creation_time"]) if timed else 0.0
        assert created is not None
        deleted = _time(where, "deletion_time", r["deletion_time"], required=False)
        scheduled = _time(where, "scheduled_time", r["scheduled_time"], required=False)
        if scheduled is not None and scheduled < created:
            raise TraceError(
                f"{where}: scheduled_time {r['scheduled_time']} is before creation_time "
                f"{r['creation_time']}"
            )
        start = scheduled if scheduled is not None else created
        if deleted is not None and deleted < start:
            what = "scheduled_time" if scheduled is not None else "creation_time"
            raise TraceError(
                f"{where}: deletion_time {r['deletion_time']} is before {what} {r[what]} "
                "(a completion before the arrival)"
            )
        duration = None if deleted is None else deleted - start
        pod = _pod(name, cpu, mem, gpus, spec, gpu_as == "dra", share)
        rows.append((created, line, pod, duration, where, gpus if gpu_as == "dra" else None))
    t0 = min((c for c, *_ in rows), default=0.0)
    rows.sort(key=lambda x: (x[0], x[1]))
    pods = [TracePod(pod, c - t0, d, w, g) for c, _, pod, d, w, g in rows]
    warnings = []
    if shared:
        why = (
            f"a {GPU_DRIVER} device is allocated whole (DRAConsumableCapacity is not used)"
            if gpu_as == "dra"
            else f"{GPU_RESOURCE} is an extended resource, which cannot be shared"
        )
        warnings.append(
            f"{path}: {shared} GPU-sharing pod(s) (gpu_milli < 1000) take a whole GPU: {why}"
        )
    return pods, warnings


def pod_demand(pod: Pod) -> PodDemand:
    """What a pod of this trace asks for, as the FGD experiment's measure counts it
    (`schedsim.replay.fragmentation.PodDemand`): its milli-CPU request, its GPUs and milli per
    GPU (from the ResourceClaimTemplate it references, ``gpu-N`` or ``gpu-share-M``, or from
    the ``nvidia.com/gpu`` request; a whole GPU is 1000), and its ``gpu_spec`` models (the
    `GPU_MODEL_LABEL` node affinity)."""
    r = Resource.from_resource_list(pod_requests(pod))
    cpu = r.milli_cpu
    gpus = r.scalar_resources.get(GPU_RESOURCE, 0)
    milli = 1000 if gpus else 0
    for ref in pod.resource_claims:
        template = ref.resource_claim_template_name or ""
        if template.startswith("gpu-share-"):
            gpus, milli = 1, round(float(template.removeprefix("gpu-share-")))
        elif template.startswith("gpu-"):
            gpus, milli = int(template.removeprefix("gpu-")), 1000
    models: tuple[str, ...] = ()
    aff = pod.affinity
    if aff is not None and aff.node_affinity is not None and aff.node_affinity.required:
        for term in aff.node_affinity.required:
            for e in term.match_expressions:
                if e.key == GPU_MODEL_LABEL:
                    models = tuple(e.values)
    return PodDemand(cpu, milli, gpus, models)


def gpu_objects(
    gpus: Mapping[str, tuple[int, str]],
    counts: Sequence[int],
    source: str,
    shares: Sequence[float] = (),
    *,
    gpu_share: bool = False,
) -> Cluster:
    """``--gpu-as dra``'s objects (see the module docstring): a ResourceSlice per GPU node,
    the DeviceClass, a ResourceClaimTemplate ``gpu-N`` per GPU count N the pods ask for
    (and ``gpu-share-M`` per share of M milli-GPU).

    Args:
        gpus: node name -> (GPUs, model), for nodes with GPUs.
        counts: the GPU counts pods ask for.
        source: the file name for messages.
        shares: the milli-GPU shares pods ask for (``gpu_share``).
        gpu_share: devices allow multiple allocations and publish a ``gpu-milli`` capacity
            of 1000 (DRAConsumableCapacity): a whole-GPU request consumes all of it, a share
            its milli-GPU.

    Raises:
        ManifestError: the objects are refused by the API server's rules (a model that is
            not a valid attribute value, for one).
    """
    for node, (n, _) in gpus.items():  # checked before 10^9 device objects are built
        if n > MAX_DEVICES_PER_SLICE:
            raise ManifestError(
                f"{source}: ResourceSlice {node}-gpu: spec.devices: must have at most "
                f"{MAX_DEVICES_PER_SLICE} items, got {n}"
            )
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": GPU_DEVICE_CLASS},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU_DRIVER}"'}}]},
        }
    ]
    docs.extend(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-gpu"},
            "spec": {
                "driver": GPU_DRIVER,
                "nodeName": node,
                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                "devices": [_device(i, model, gpu_share) for i in range(n)],
            },
        }
        for node, (n, model) in gpus.items()
    )
    docs.extend(_claim_template(n, None) for n in sorted(set(counts)))
    docs.extend(_claim_template(1, m) for m in sorted(set(shares)))
    return Cluster.from_manifests(decode_objects(docs, source))


def _claim_template(count: int, share: float | None) -> dict[str, Any]:
    """The ResourceClaimTemplate `_template_name` names: one ExactCount request of ``count``
    devices of `GPU_DEVICE_CLASS`, with a `GPU_CAPACITY` request of ``share`` when given."""
    exactly: dict[str, Any] = {
        "deviceClassName": GPU_DEVICE_CLASS,
        "allocationMode": "ExactCount",
        "count": count,
    }
    if share is not None:
        exactly["capacity"] = {"requests": {GPU_CAPACITY: f"{share:g}"}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": _template_name(count, share), "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}},
    }


def _device(i: int, model: str, gpu_share: bool) -> dict[str, Any]:
    device: dict[str, Any] = {"name": f"gpu-{i}", "attributes": {"model": {"string": model}}}
    if gpu_share:
        device["allowMultipleAllocations"] = True
        device["capacity"] = {GPU_CAPACITY: {"value": "1000"}}
    return device


def alibaba_trace(
    pods_csv: str, nodes_csv: str, *, gpu_as: str = "extended-resource", gpu_share: bool = False
) -> Trace:
    """The trace of an Alibaba pod list and node list (see the module docstring): every
    node of the node list at the start, every pod arriving. ``gpu_share`` (with ``dra``):
    GPU-sharing pods consume their ``gpu_milli`` of a device's `GPU_CAPACITY`
    (DRAConsumableCapacity must be on in the scheduler that replays it).

    Raises:
        TraceError: ``FILE:LINE: problem``.
        ValueError: an unknown ``gpu_as``.
    """
    if gpu_as not in GPU_MODES:
        raise ValueError(f"gpu_as: expected one of {', '.join(GPU_MODES)}, got {gpu_as!r}")
    with_gpus = _read_nodes(nodes_csv, gpu_as)
    nodes = [n for n, _ in with_gpus]
    models: dict[str, int] = {}
    for n in nodes:
        m = n.labels.get(GPU_MODEL_LABEL)
        if m:
            models[m] = models.get(m, 0) + 1
    arrivals, warnings = read_pods(pods_csv, models, gpu_as=gpu_as, gpu_share=gpu_share)
    cluster = Cluster(nodes=nodes)
    if gpu_as == "dra":
        gpus = {n.name: (g, n.labels[GPU_MODEL_LABEL]) for n, g in with_gpus if g}
        counts, shares = [], []
        for tp in arrivals:
            template = tp.pod.resource_claims[0].resource_claim_template_name if tp.gpus else None
            if template is None:
                continue
            if template.startswith("gpu-share-"):
                shares.append(float(template.removeprefix("gpu-share-")))
            else:
                counts.append(int(template.removeprefix("gpu-")))
        dra = gpu_objects(gpus, counts, f"{nodes_csv} (--gpu-as dra)", shares, gpu_share=gpu_share)
        cluster = attrs.evolve(dra, nodes=tuple(nodes), origin=None)
    return Trace(cluster, (), tuple(arrivals), None, tuple(warnings))
