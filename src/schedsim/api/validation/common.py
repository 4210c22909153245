"""The API server's validation building blocks: a problem list with the API server's wording,
apimachinery's name, label and annotation rules, ObjectMeta, owner references, resource names
and quantities.

Mirrors ``k8s.io/apimachinery/pkg/util/validation`` (``IsDNS1123Subdomain``,
``IsDNS1123Label``, ``IsQualifiedName``, ``IsValidLabelValue``, ``IsValidPortNum``),
``k8s.io/apimachinery/pkg/api/validation`` (``ValidateObjectMeta``,
``ValidateOwnerReferences``, ``ValidateAnnotations``) and the resource helpers of
``pkg/apis/core/validation`` and ``pkg/apis/core/helper`` (``validateResourceName``,
``validateContainerResourceName``, ``ValidateResourceQuantityValue``,
``IsExtendedResourceName``, ``IsOvercommitAllowed``).

Messages follow the project's form of ``field.ErrorList`` entries: ``invalid value 'X':
detail`` (field.Invalid; the value is shown with Python's escapes, so a name holding a
newline or a terminal escape sequence is never printed raw), ``required`` (field.Required),
``duplicate value 'X'`` (field.Duplicate), ``unsupported value 'X': supported values: ...``
(field.NotSupported) and ``forbidden: detail`` (field.Forbidden).

The validators read the objects as decoded from YAML/JSON after the decoders have accepted
them, so the fields the decoders read have the right types; other fields are checked for
their type before use.

Cost: loading is the hot path, so the string rules are memoized per distinct string (label
keys, values and quantities repeat across thousands of objects) and a clean object allocates
nothing but its path strings where a list is walked; see docs/performance.md.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any, Final

from schedsim.api.labels import label_value_problems, qualified_name_problem
from schedsim.api.loading import decode as _decode
from schedsim.api.quantity import QuantityError, parse_quantity

__all__ = [
    "INT32_MAX",
    "MAPPING",
    "Problems",
    "dns1123_label_problem",
    "dns1123_subdomain_problem",
    "duplicate",
    "forbidden",
    "invalid",
    "is_extended_resource_name",
    "is_overcommit_allowed",
    "key_problem",
    "label_value_problem",
    "not_supported",
    "validate_labels",
    "validate_object_meta",
    "validate_owner_references",
    "validate_qualified_name",
    "validate_resource_quantity",
]

INT32_MAX: Final = 2**31 - 1
"""The largest value of the API's int32 fields (priority, ports, weights)."""

MAPPING: Final = (dict, Mapping)
"""For ``isinstance``: decoded objects are dicts, checked first (an ABC check is slow)."""

_TOTAL_ANNOTATION_SIZE_LIMIT: Final = 256 * 1024


class Problems:
    """The problems found in one object: errors (the API server refuses the object) and
    warnings (it accepts the object and warns, or schedsim notes something it reads
    differently), each a ``(field path, problem)`` pair in the order found."""

    __slots__ = ("errors", "warnings")

    def __init__(self) -> None:
        self.errors: list[tuple[str, str]] = []
        self.warnings: list[tuple[str, str]] = []

    def error(self, field: str, problem: str) -> None:
        """Record one error at ``field``."""
        self.errors.append((field, problem))

    def warn(self, field: str, problem: str) -> None:
        """Record one warning at ``field``."""
        self.warnings.append((field, problem))


def invalid(value: object, detail: str) -> str:
    """field.Invalid's wording: ``invalid value 'X': detail``."""
    return f"invalid value {value!r}: {detail}"


def duplicate(value: object) -> str:
    """field.Duplicate's wording."""
    return f"duplicate value {value!r}"


def not_supported(value: object, supported: Iterable[str]) -> str:
    """field.NotSupported's wording, the supported values sorted as upstream lists them."""
    return f"unsupported value {value!r}: supported values: " + ", ".join(
        f'"{s}"' for s in supported
    )


def forbidden(detail: str) -> str:
    """field.Forbidden's wording."""
    return f"forbidden: {detail}"


dns1123_label_problem = functools.lru_cache(maxsize=8192)(_decode.dns1123_label_problem)
"""``IsDNS1123Label``'s first message for a string, or None (memoized)."""

dns1123_subdomain_problem = functools.lru_cache(maxsize=8192)(_decode.dns1123_subdomain_problem)
"""``IsDNS1123Subdomain``'s first message for a string, or None (memoized)."""


@functools.lru_cache(maxsize=8192)
def label_value_problem(value: str) -> str | None:
    """``IsValidLabelValue``'s first message for ``value``, or None when it is valid."""
    problems = label_value_problems(value)
    return problems[0] if problems else None


key_problem = functools.lru_cache(maxsize=8192)(qualified_name_problem)
"""`schedsim.api.labels.qualified_name_problem`, memoized (``IsQualifiedName``)."""


def validate_qualified_name(value: str, field: str, out: Problems) -> None:
    """``ValidateQualifiedName`` / ``ValidateLabelName``: ``[prefix/]name``."""
    problem = key_problem(value)
    if problem is not None:
        out.error(field, invalid(value, problem))


def validate_labels(labels: object, field: str, out: Problems) -> None:
    """``ValidateLabels``: every key a qualified name, every value a label value (both
    reported at the map's path, as upstream does)."""
    if not isinstance(labels, MAPPING):
        return
    for k, v in labels.items():
        if not isinstance(k, str) or not isinstance(v, str):
            continue  # the decoders refuse non-strings
        problem = key_problem(k)
        if problem is not None:
            out.error(field, invalid(k, problem))
        problem = label_value_problem(v)
        if problem is not None:
            out.error(field, invalid(v, problem))


def _validate_annotations(annotations: object, field: str, out: Problems) -> None:
    """``ValidateAnnotations``: keys are qualified names (compared lower-cased), the keys and
    values together at most 256 KiB."""
    if not isinstance(annotations, MAPPING):
        return
    size = 0
    for k, v in annotations.items():
        if not isinstance(k, str):
            continue
        problem = key_problem(k.lower())
        if problem is not None:
            out.error(field, invalid(k, problem))
        size += len(k) + (len(v) if isinstance(v, str) else 0)
    if size > _TOTAL_ANNOTATION_SIZE_LIMIT:
        out.error(field, f"too long: must have at most {_TOTAL_ANNOTATION_SIZE_LIMIT} bytes")


def validate_owner_references(refs: object, out: Problems) -> None:
    """``ValidateOwnerReferences``: apiVersion, kind, name and uid set on every reference, at
    most one with ``controller: true``."""
    if not isinstance(refs, list):
        return
    controllers = []
    for i, ref in enumerate(refs):
        if not isinstance(ref, MAPPING):
            continue
        path = f"metadata.ownerReferences[{i}]"
        version = str(ref.get("apiVersion") or "").rsplit("/", 1)[-1]
        for key, what, value in (
            ("apiVersion", "version", version),
            ("kind", "kind", ref.get("kind")),
            ("name", "name", ref.get("name")),
            ("uid", "uid", ref.get("uid")),
        ):
            if not value:
                out.error(f"{path}.{key}", invalid(ref.get(key) or "", f"{what} must not be empty"))
        if ref.get("controller") is True:
            controllers.append(f"{ref.get('kind')}/{ref.get('name')}")
    if len(controllers) > 1:
        out.error(
            "metadata.ownerReferences",
            'Only one reference can have Controller set to true. Found "true" in references '
            f"for {' and '.join(controllers)}",
        )


def validate_object_meta(
    obj: Mapping[str, Any], namespaced: bool, name_rule: str, out: Problems
) -> None:
    """``ValidateObjectMeta``: the name by the kind's rule, the namespace of a namespaced
    kind (a DNS label), labels, annotations and owner references.

    Args:
        obj: the object as read.
        namespaced: whether the kind is namespaced (a cluster-scoped kind's namespace is
            ignored, as the API server clears it).
        name_rule: ``subdomain`` (``NameIsDNSSubdomain``, most kinds) or ``label``
            (``NameIsDNSLabel``).
        out: receives the problems.
    """
    meta = obj.get("metadata")
    if not isinstance(meta, MAPPING):
        return
    name = meta.get("name")
    if isinstance(name, str) and name:
        check = dns1123_label_problem if name_rule == "label" else dns1123_subdomain_problem
        problem = check(name)
        if problem is not None:
            out.error("metadata.name", invalid(name, problem))
    ns = meta.get("namespace")
    if namespaced and isinstance(ns, str) and ns:
        problem = dns1123_label_problem(ns)
        if problem is not None:
            out.error("metadata.namespace", invalid(ns, problem))
    if meta.get("labels"):
        validate_labels(meta["labels"], "metadata.labels", out)
    if meta.get("annotations"):
        _validate_annotations(meta["annotations"], "metadata.annotations", out)
    if meta.get("ownerReferences"):
        validate_owner_references(meta["ownerReferences"], out)


# --------------------------------------------------------------------------- resources

# helper.IsStandardContainerResourceName (hugepages-* handled apart)
_CONTAINER_RESOURCES: Final = frozenset({"cpu", "memory", "ephemeral-storage"})
# core integerResources: quota object counts; extended resources are integers too
_INTEGER_RESOURCES: Final = frozenset(
    {
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)


def _is_native(name: str) -> bool:
    """``IsNativeResource``: no domain, or the kubernetes.io domain."""
    return "/" not in name or "kubernetes.io/" in name


@functools.lru_cache(maxsize=1024)
def is_extended_resource_name(name: str) -> bool:
    """``IsExtendedResourceName``: a non-native, fully qualified name that is not a quota
    ``requests.`` name and that stays a qualified name with ``requests.`` in front."""
    if _is_native(name) or name.startswith("requests."):
        return False
    return qualified_name_problem("requests." + name) is None


def is_overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: native resources other than hugepages may have a request
    below their limit; extended resources and hugepages need request == limit."""
    return _is_native(name) and not name.startswith("hugepages-")


def validate_container_resource_name(name: str, field: str, out: Problems) -> bool:
    """``validateContainerResourceName``; False when the name was refused."""
    problem = _container_resource_problem(name)
    if problem is not None:
        out.error(field, invalid(name, problem))
        return False
    return True


@functools.lru_cache(maxsize=1024)
def _container_resource_problem(name: str) -> str | None:
    problem = qualified_name_problem(name)
    if problem is not None:
        return problem
    if "/" not in name:
        if name not in _CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            return "must be a standard resource for containers"
    elif not _is_native(name) and not is_extended_resource_name(name):
        return "doesn't follow extended resource name standard"
    return None


def validate_resource_quantity(name: str, raw: object, field: str, out: Problems) -> None:
    """``ValidateResourceQuantityValue``: not negative (the decoders check), an integer for
    extended and integer resources. A binary quantity beyond int64 (``9999999999999999999Ei``)
    is not refused: apimachinery's ParseQuantity caps it at 2**63 - 1, and so does
    `parse_quantity`."""
    if "/" in name or name in _INTEGER_RESOURCES:
        if (name in _INTEGER_RESOURCES or is_extended_resource_name(name)) and not _is_integer(raw):
            out.error(field, invalid(raw, "must be an integer"))


def _is_integer(raw: object) -> bool:
    if isinstance(raw, int):
        return True
    try:
        return bool(parse_quantity(raw).denominator == 1)  # type: ignore[arg-type]
    except (QuantityError, TypeError):
        return True  # the decoders report it
