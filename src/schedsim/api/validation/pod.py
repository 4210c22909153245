"""Pod validation as the API server does it, for the fields the scheduler reads.

Mirrors ``ValidatePodCreate`` / ``ValidatePodSpec`` of ``pkg/apis/core/validation``
(Kubernetes 1.34): ``validateContainers`` / ``validateInitContainers`` (names, ports,
resources, init ``restartPolicy``), ``ValidateVolumes``, ``ValidateTolerations``,
``validateAffinity`` (node affinity; the pod affinity rules live in the decoder,
`schedsim.api.core`), ``validateSchedulingGates``, the node selector's labels and the API
types' int32 widths. Pod templates of workload controllers use the same rules
(``ValidatePodTemplateSpec``) under their own path.

Rules the decoders already enforce (topology spread constraints, pod affinity terms, pod
resource claims, more than one volume type) are not repeated here.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Mapping
from typing import Any, Final

from schedsim.api.loading.decode import key_path
from schedsim.api.quantity import QuantityError, format_quantity, parse_quantity
from schedsim.api.validation.common import (
    INT32_MAX,
    MAPPING,
    Problems,
    dns1123_label_problem,
    dns1123_subdomain_problem,
    duplicate,
    forbidden,
    invalid,
    is_overcommit_allowed,
    key_problem,
    label_value_problem,
    not_supported,
    validate_container_resource_name,
    validate_labels,
    validate_object_meta,
    validate_qualified_name,
    validate_resource_quantity,
)

__all__ = [
    "VOLUME_TYPES",
    "validate_pod",
    "validate_pod_spec",
    "validate_pod_template",
    "validate_runtime_class",
]

VOLUME_TYPES: Final = (
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
)
"""core/v1 VolumeSource's members: a pod volume sets exactly one."""

_VOLUME_TYPE_SET: Final = frozenset(VOLUME_TYPES)
_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
_PORT_RANGE: Final = "must be between 1 and 65535, inclusive"


def validate_pod(obj: Mapping[str, Any], out: Problems) -> None:
    """Validate a Pod: its ObjectMeta (a DNS subdomain name) and its spec (a missing or
    null spec is an empty one, refused as the API server refuses it: the ``spec.containers:
    Required value`` of ValidatePodSpec, as for ``spec: {}``)."""
    validate_object_meta(obj, True, "subdomain", out)
    spec = obj.get("spec")
    if spec is None:  # no spec, or spec: null: an empty one, whose containers are required
        spec = {}
    if isinstance(spec, MAPPING):
        validate_pod_spec(spec, "spec", out)


def validate_pod_template(obj: Mapping[str, Any], path: str, out: Problems) -> None:
    """Validate a workload's pod template at ``path`` (``spec.template``): its labels and
    its pod spec (``ValidatePodTemplateSpec``)."""
    template = obj.get("spec", {}).get("template") if isinstance(obj.get("spec"), MAPPING) else None
    if not isinstance(template, MAPPING):
        return
    meta = template.get("metadata")
    if isinstance(meta, MAPPING) and meta.get("labels"):
        validate_labels(meta["labels"], f"{path}.metadata.labels", out)
    spec = template.get("spec")
    if isinstance(spec, MAPPING):
        validate_pod_spec(spec, f"{path}.spec", out)


def validate_pod_spec(spec: Mapping[str, Any], path: str, out: Problems) -> None:
    """``ValidatePodSpec`` for the fields the scheduler reads.

    Args:
        spec: the pod spec as read (the decoders have accepted it).
        path: its field path (``spec``, ``spec.template.spec``).
        out: receives the problems.
    """
    host_network = spec.get("hostNetwork") is True
    names: set[str] = set()
    containers = spec.get("containers")
    if not containers:
        out.error(f"{path}.containers", "required")
    else:
        _containers(containers, f"{path}.containers", names, host_network, False, out)
    init = spec.get("initContainers")
    if init:
        _containers(init, f"{path}.initContainers", names, host_network, True, out)
    if spec.get("volumes"):
        _volumes(spec["volumes"], f"{path}.volumes", out)
    if spec.get("tolerations"):
        _tolerations(spec["tolerations"], f"{path}.tolerations", out)
    if spec.get("nodeSelector"):
        validate_labels(spec["nodeSelector"], f"{path}.nodeSelector", out)
    affinity = spec.get("affinity")
    if isinstance(affinity, MAPPING) and isinstance(affinity.get("nodeAffinity"), MAPPING):
        _node_affinity(affinity["nodeAffinity"], f"{path}.affinity.nodeAffinity", out)
    if spec.get("schedulingGates"):
        _scheduling_gates(spec["schedulingGates"], f"{path}.schedulingGates", out)
    priority = spec.get("priority")
    if isinstance(priority, int) and not -(2**31) <= priority <= INT32_MAX:
        out.error(f"{path}.priority", invalid(priority, "out of range for a 32-bit integer"))
    if spec.get("overhead"):
        _resource_names(spec["overhead"], f"{path}.overhead", out)
    # ValidatePriorityClassName (a non-empty one) and ValidateRuntimeClassName (a set one):
    # NameIsDNSSubdomain
    for key, value in (
        ("priorityClassName", spec.get("priorityClassName") or None),
        ("runtimeClassName", spec.get("runtimeClassName")),
    ):
        if isinstance(value, str):
            problem = dns1123_subdomain_problem(value)
            if problem is not None:
                out.error(f"{path}.{key}", invalid(value, problem))


# --------------------------------------------------------------------------- containers


def _containers(
    items: object,
    path: str,
    names: set[str],
    host_network: bool,
    init: bool,
    out: Problems,
) -> None:
    """validateContainers / validateInitContainers: names (required, DNS labels, unique
    across all containers), restartPolicy, ports, resources."""
    if not isinstance(items, list):
        return
    for i, c in enumerate(items):
        if not isinstance(c, MAPPING):
            continue
        cp = f"{path}[{i}]"
        _unique_label_name(c.get("name"), f"{cp}.name", names, out)
        policy = c.get("restartPolicy")
        if policy is not None:
            if not init:
                out.error(
                    f"{cp}.restartPolicy", forbidden("may not be set for non-init containers")
                )
            elif policy != "Always":
                out.error(f"{cp}.restartPolicy", not_supported(policy, ("Always",)))
        if c.get("ports"):
            _ports(c["ports"], f"{cp}.ports", host_network, out)
        resources = c.get("resources")
        if isinstance(resources, MAPPING) and (
            resources.get("requests") or resources.get("limits")
        ):
            _requirements(resources, f"{cp}.resources", out)


def _unique_label_name(name: object, field: str, seen: set[str], out: Problems) -> None:
    """A container's or volume's name: required, a DNS label, not in ``seen`` (added)."""
    if not name:
        out.error(field, "required")
    elif isinstance(name, str):
        problem = dns1123_label_problem(name)
        if problem is not None:
            out.error(field, invalid(name, problem))
        if name in seen:
            out.error(field, duplicate(name))
        seen.add(name)


def _ports(items: object, path: str, host_network: bool, out: Problems) -> None:
    """validateContainerPorts (+ validateHostNetwork): containerPort required and in range,
    hostPort in range (and equal to containerPort with hostNetwork), a known protocol,
    unique valid names. A hostIP that is not an IP address is warned about (the API server
    does not check it; NodePorts compares it as a string)."""
    if not isinstance(items, list):
        return
    seen: set[str] = set()
    for i, p in enumerate(items):
        if not isinstance(p, MAPPING):
            continue
        pp = f"{path}[{i}]"
        container_port = p.get("containerPort")
        if not container_port:
            out.error(f"{pp}.containerPort", "required")
        elif isinstance(container_port, int) and not 1 <= container_port <= 65535:
            out.error(f"{pp}.containerPort", invalid(container_port, _PORT_RANGE))
        host_port = p.get("hostPort")
        if isinstance(host_port, int) and host_port != 0:
            if not 1 <= host_port <= 65535:
                out.error(f"{pp}.hostPort", invalid(host_port, _PORT_RANGE))
            elif host_network and host_port != container_port:
                out.error(
                    f"{pp}.hostPort",
                    invalid(host_port, "must match `containerPort` when `hostNetwork` is true"),
                )
        protocol = p.get("protocol")
        if protocol and protocol not in _PROTOCOLS:
            out.error(f"{pp}.protocol", not_supported(protocol, _PROTOCOLS))
        name = p.get("name")
        if isinstance(name, str) and name:
            if name in seen:
                out.error(f"{pp}.name", duplicate(name))
            seen.add(name)
        host_ip = p.get("hostIP")
        if isinstance(host_ip, str) and host_ip:
            try:
                ipaddress.ip_address(host_ip)
            except ValueError:
                out.warn(
                    f"{pp}.hostIP",
                    invalid(host_ip, "not an IP address; NodePorts compares it as written"),
                )


def _requirements(resources: Mapping[str, Any], path: str, out: Problems) -> None:
    """ValidateResourceRequirements for a container: resource names, quantities (integers
    for extended resources), request <= limit, and request == limit (limit set) for
    resources that cannot be overcommitted (extended resources, hugepages)."""
    limits = resources.get("limits")
    limits = limits if isinstance(limits, MAPPING) else {}
    requests = resources.get("requests")
    requests = requests if isinstance(requests, MAPPING) else {}
    lp, rp = f"{path}.limits", f"{path}.requests"
    for name, raw in limits.items():
        field = key_path(lp, str(name))
        if validate_container_resource_name(str(name), field, out):
            validate_resource_quantity(str(name), raw, field, out)
    for name, raw in requests.items():
        name = str(name)
        field = key_path(rp, name)
        if not validate_container_resource_name(name, field, out):
            continue
        validate_resource_quantity(name, raw, field, out)
        limit = limits.get(name)
        if limit is not None:
            if limit == raw:
                continue
            order = _compare(raw, limit)
            if order != 0 and not is_overcommit_allowed(name):
                detail = f"must be equal to {name} limit of {_q(limit)}"
                out.error(rp, invalid(_q(raw), detail))
            elif order > 0:
                detail = f"must be less than or equal to {name} limit of {_q(limit)}"
                out.error(rp, invalid(_q(raw), detail))
        elif not is_overcommit_allowed(name):
            out.error(lp, "required: Limit must be set for non overcommitable resources")


@functools.lru_cache(maxsize=4096)
def _compare(request: str | int | float, limit: str | int | float) -> int:
    """-1, 0 or 1 as the request is below, equal to or above the limit (0 when either
    does not parse: the decoders report it)."""
    try:
        req, lim = parse_quantity(request), parse_quantity(limit)
    except (QuantityError, TypeError):
        return 0
    return (req > lim) - (req < lim)


def _q(raw: object) -> str:
    try:
        return format_quantity(parse_quantity(raw))  # type: ignore[arg-type]
    except (QuantityError, TypeError):
        return str(raw)


def _resource_names(items: object, path: str, out: Problems) -> None:
    """validateOverhead: each resource name valid."""
    if isinstance(items, MAPPING):
        for name in items:
            validate_container_resource_name(str(name), key_path(path, str(name)), out)


# --------------------------------------------------------------------------- volumes


def _volumes(items: object, path: str, out: Problems) -> None:
    """ValidateVolumes: a name (required, a DNS label, unique) and exactly one volume type
    (more than one is the decoder's error)."""
    if not isinstance(items, list):
        return
    seen: set[str] = set()
    for i, v in enumerate(items):
        if not isinstance(v, MAPPING):
            continue
        vp = f"{path}[{i}]"
        if not any(v[t] is not None for t in _VOLUME_TYPE_SET.intersection(v.keys())):
            out.error(vp, "required: must specify a volume type")
        _unique_label_name(v.get("name"), f"{vp}.name", seen, out)


# --------------------------------------------------------------------------- scheduling


def _tolerations(items: object, path: str, out: Problems) -> None:
    """ValidateTolerations: a valid key; an empty key only with Exists; tolerationSeconds
    only with NoExecute; Equal's value a label value; Exists without a value."""
    if not isinstance(items, list):
        return
    for i, t in enumerate(items):
        if not isinstance(t, MAPPING):
            continue
        tp = f"{path}[{i}]"
        key = t.get("key") or ""
        operator = t.get("operator") or "Equal"
        value = t.get("value") or ""
        if key:
            validate_qualified_name(key, f"{tp}.key", out)
        elif operator != "Exists":
            out.error(
                f"{tp}.operator",
                invalid(
                    operator,
                    'operator must be Exists when `key` is empty, which means "match all '
                    'values and all keys"',
                ),
            )
        if t.get("tolerationSeconds") is not None and t.get("effect") != "NoExecute":
            out.error(
                f"{tp}.effect",
                invalid(
                    t.get("effect") or "",
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                ),
            )
        if operator == "Equal":
            problem = label_value_problem(value)
            if problem is not None:
                out.error(f"{tp}.operator", invalid(value, problem))
        elif operator == "Exists" and value:
            out.error(
                f"{tp}.operator", invalid(value, "value must be empty when `operator` is 'Exists'")
            )


def _node_affinity(na: Mapping[str, Any], path: str, out: Problems) -> None:
    """validateNodeAffinity: required terms (at least one; values of matchExpressions valid
    label values, ``AllowInvalidLabelValueInRequiredNodeAffinity`` off for new pods) and
    preferred terms (weight 1-100)."""
    required = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, MAPPING):
        rp = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        terms = required.get("nodeSelectorTerms")
        if not terms:
            out.error(rp, "required: must have at least one node selector term")
        elif isinstance(terms, list):
            for i, term in enumerate(terms):
                if isinstance(term, MAPPING):
                    validate_node_selector_term(term, f"{rp}[{i}]", True, out)
    preferred = na.get("preferredDuringSchedulingIgnoredDuringExecution")
    if isinstance(preferred, list):
        pp = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
        for i, item in enumerate(preferred):
            if not isinstance(item, MAPPING):
                continue
            weight = item.get("weight")
            if isinstance(weight, int) and not 1 <= weight <= 100:
                out.error(f"{pp}[{i}].weight", invalid(weight, "must be in the range 1-100"))
            pref = item.get("preference")
            if isinstance(pref, MAPPING):
                validate_node_selector_term(pref, f"{pp}[{i}].preference", False, out)


def validate_node_selector_term(
    term: Mapping[str, Any], path: str, check_values: bool, out: Problems
) -> None:
    """``ValidateNodeSelectorTerm``: matchExpressions (a valid key; values given for
    In/NotIn, none for Exists/DoesNotExist, exactly one for Gt/Lt, which the API server does
    not parse: kube-scheduler matches no node when it is not an integer) and matchFields
    (``metadata.name`` only, In/NotIn with exactly one value that is a node name).

    Args:
        term: one NodeSelectorTerm as read.
        path: its field path.
        check_values: check matchExpressions values as label values (required node
            affinity of a pod).
        out: receives the problems.
    """
    exprs = term.get("matchExpressions")
    if isinstance(exprs, list):
        for j, req in enumerate(exprs):
            if isinstance(req, MAPPING):
                _requirement(req, f"{path}.matchExpressions[{j}]", check_values, out)
    fields = term.get("matchFields")
    if isinstance(fields, list):
        for j, req in enumerate(fields):
            if isinstance(req, MAPPING):
                _field_requirement(req, f"{path}.matchFields[{j}]", out)


def _requirement(req: Mapping[str, Any], path: str, check_values: bool, out: Problems) -> None:
    op = req.get("operator")
    values = req.get("values") or []
    if op in ("In", "NotIn"):
        if not values:
            out.error(
                f"{path}.values", "required: must be specified when `operator` is 'In' or 'NotIn'"
            )
    elif op in ("Exists", "DoesNotExist"):
        if values:
            out.error(
                f"{path}.values",
                forbidden("may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
            )
    elif op in ("Gt", "Lt") and len(values) != 1:
        out.error(
            f"{path}.values",
            "required: must be specified single value when `operator` is 'Lt' or 'Gt'",
        )
    key = req.get("key")
    if isinstance(key, str):
        validate_qualified_name(key, f"{path}.key", out)
    if check_values and isinstance(values, list):
        for k, v in enumerate(values):
            if isinstance(v, str):
                problem = label_value_problem(v)
                if problem is not None:
                    out.error(f"{path}.values[{k}]", invalid(v, problem))


def _field_requirement(req: Mapping[str, Any], path: str, out: Problems) -> None:
    op = req.get("operator")
    values = req.get("values") or []
    if op in ("In", "NotIn"):
        if len(values) != 1:
            out.error(
                f"{path}.values",
                "required: must be only one value when `operator` is 'In' or 'NotIn' for node "
                "field selector",
            )
    else:
        out.error(f"{path}.operator", invalid(op, "not a valid selector operator"))
    key = req.get("key")
    if key != "metadata.name":
        out.error(f"{path}.key", invalid(key, "not a valid field selector key"))
    elif isinstance(values, list):
        for k, v in enumerate(values):
            if isinstance(v, str):
                problem = dns1123_subdomain_problem(v)
                if problem is not None:
                    out.error(f"{path}.values[{k}]", invalid(v, problem))


def _scheduling_gates(items: object, path: str, out: Problems) -> None:
    """validateSchedulingGates: each name a qualified name, no name twice."""
    if not isinstance(items, list):
        return
    seen: set[str] = set()
    for i, g in enumerate(items):
        if not isinstance(g, MAPPING):
            continue
        name = g.get("name") or ""
        if not isinstance(name, str):
            continue
        problem = key_problem(name)
        if problem is not None:
            out.error(f"{path}[{i}]", invalid(name, problem))
        if name in seen:
            out.error(f"{path}[{i}]", duplicate(name))
        seen.add(name)


# --------------------------------------------------------------------------- RuntimeClass


def validate_runtime_class(obj: Mapping[str, Any], out: Problems) -> None:
    """``ValidateRuntimeClass`` (pkg/apis/node/validation) beyond the name and the handler
    (the decoder's): ``overhead.podFixed`` resource names (``validateOverhead``), and
    ``scheduling``'s node selector labels and tolerations (``validateScheduling``)."""
    overhead = obj.get("overhead")
    if isinstance(overhead, MAPPING) and overhead.get("podFixed"):
        _resource_names(overhead["podFixed"], "overhead.podFixed", out)
    scheduling = obj.get("scheduling")
    if isinstance(scheduling, MAPPING):
        if scheduling.get("nodeSelector"):
            validate_labels(scheduling["nodeSelector"], "scheduling.nodeSelector", out)
        if scheduling.get("tolerations"):
            _tolerations(scheduling["tolerations"], "scheduling.tolerations", out)
