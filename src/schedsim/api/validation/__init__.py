"""The API server's value validation at load: one call per decoded object.

The decoders (`schedsim.api.core` and the other kinds' ``from_manifest``) refuse what they
cannot read; `schedsim.api.loading.strict` refuses unknown fields. This module adds the rest of what
the Kubernetes 1.34 API server refuses for the fields the scheduler reads: names, namespaces,
labels and annotations, owner references, pod specs (containers, ports, resources, volumes,
tolerations, node affinity, scheduling gates, int32 widths), node taints and resources,
PersistentVolume sources, DRA driver names and capacities, the apps/v1 controllers' spec
rules. The rules, one module per concept:
`schedsim.api.validation.common` (apimachinery), `schedsim.api.validation.apps`,
`schedsim.api.validation.scheduling`,
`schedsim.api.validation.pod`,
`schedsim.api.validation.node`, `schedsim.api.validation.storage`,
`schedsim.api.validation.resource`.

Every problem of every object of a file is reported, one line each in the form
``FILE: KIND NS/NAME: FIELD: problem`` (at most `MAX_REPORTED` lines, then a count), in one
`ManifestError` raised when the file has been read; the CLI exits 2. Warnings (what the API
server accepts but schedsim reads in a way worth saying) become warning lines.

Under ``--validate=ignore`` these rules are skipped (only the decoders' own checks remain):
the API server would still refuse such objects, but inputs such as kubernetes/api's
placeholder test data can then be read for what they contain.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from schedsim.api.core.limitrange import limit_range_problems
from schedsim.api.errors import ManifestError
from schedsim.api.loading.spec_memo import SpecMemo
from schedsim.api.validation.apps import (
    validate_daemon_set,
    validate_deployment,
    validate_replica_set,
    validate_stateful_set,
)
from schedsim.api.validation.batch import validate_cron_job
from schedsim.api.validation.common import Problems, validate_object_meta
from schedsim.api.validation.node import validate_node
from schedsim.api.validation.pod import (
    validate_pod,
    validate_pod_spec,
    validate_pod_template,
    validate_runtime_class,
)
from schedsim.api.validation.resource import validate_resource_slice
from schedsim.api.validation.scheduling import validate_priority_class
from schedsim.api.validation.storage import validate_csi_node, validate_pv

__all__ = ["MAX_REPORTED", "ApiValidator", "validate_object"]

MAX_REPORTED: Final = 50
"""At most this many problem lines per file in the error, then one line counting the rest."""

_Rule = Callable[[Mapping[str, Any], Problems], None]


def _meta(namespaced: bool, name_rule: str = "subdomain") -> _Rule:
    def rule(obj: Mapping[str, Any], out: Problems) -> None:
        validate_object_meta(obj, namespaced, name_rule, out)

    return rule


def _then(first: _Rule, second: _Rule) -> _Rule:
    def rule(obj: Mapping[str, Any], out: Problems) -> None:
        first(obj, out)
        second(obj, out)

    return rule


def _template(obj: Mapping[str, Any], out: Problems) -> None:
    validate_pod_template(obj, "spec.template", out)


def _limit_range(obj: Mapping[str, Any], out: Problems) -> None:
    """``ValidateLimitRange``'s spec rules (`schedsim.api.core.limitrange`), every problem."""
    for field, problem in limit_range_problems(obj):
        out.error(field, problem)


_WORKLOAD: Final = _then(_meta(True), _template)

# kind -> its rules (ValidateObjectMeta's name rule per kind: NameIsDNSSubdomain, except
# Namespace and Service, whose names are DNS labels)
_RULES: Final[Mapping[str, _Rule]] = {
    "Pod": validate_pod,
    "Node": validate_node,
    "Namespace": _meta(False, "label"),
    "Service": _meta(True, "label"),
    "PersistentVolume": _then(_meta(False), validate_pv),
    "PersistentVolumeClaim": _meta(True),
    "StorageClass": _meta(False),
    "CSINode": _then(_meta(False), validate_csi_node),
    "CSIDriver": _meta(False),
    "VolumeAttachment": _meta(False),
    "CSIStorageCapacity": _meta(True),
    "PriorityClass": _then(_meta(False), validate_priority_class),
    "PodDisruptionBudget": _meta(True),
    "LimitRange": _then(_meta(True), _limit_range),
    "RuntimeClass": _then(_meta(False), validate_runtime_class),
    "DeviceClass": _meta(False),
    "ResourceClaim": _meta(True),
    "ResourceClaimTemplate": _meta(True),
    "ResourceSlice": _then(_meta(False), validate_resource_slice),
    "Deployment": _then(_WORKLOAD, validate_deployment),
    "ReplicaSet": _then(_WORKLOAD, validate_replica_set),
    "ReplicationController": _WORKLOAD,
    # ValidateStatefulSetName: NameIsDNSLabel
    "StatefulSet": _then(_then(_meta(True, "label"), _template), validate_stateful_set),
    "DaemonSet": _then(_WORKLOAD, validate_daemon_set),
    "Job": _WORKLOAD,
    # read and set aside (not run), but what the API server refuses is still refused
    "CronJob": _then(_meta(True), validate_cron_job),
}


def validate_object(obj: Mapping[str, Any], kind: str) -> Problems:
    """Validate one decoded object of a modelled kind as the API server would.

    Args:
        obj: the object as read (its decoder has accepted it).
        kind: its kind; a kind without rules gives no problems.

    Returns:
        the errors and warnings found, as ``(field, problem)`` pairs.
    """
    out = Problems()
    rule = _RULES.get(kind)
    if rule is not None:
        rule(obj, out)
    return out


class ApiValidator:
    """Applies the API server's rules to the objects of one file (the loader's side).

    Args:
        source: the file name used in messages.
        validate: ``strict``/``warn`` (the rules apply) or ``ignore`` (they are skipped).
        memo: for objects parsed from text (the loader's): a pod spec's problems are found
            once per distinct spec (`schedsim.api.loading.spec_memo`).
    """

    def __init__(self, source: str, validate: str, memo: SpecMemo | None = None) -> None:
        self.source = source
        self.enabled = validate != "ignore"
        self._memo = memo
        self._out = Problems()
        self._errors: list[str] = []
        self._warnings: list[str] = []

    def check(self, obj: Mapping[str, Any], kind: str, label: str) -> None:
        """Check one decoded object; ``label`` names it (``Pod shop/web``)."""
        if not self.enabled:
            return
        rule = _RULES.get(kind)
        if rule is None:
            return
        out = self._out
        if kind == "Pod" and self._memo is not None:
            self._check_pod(obj, out, self._memo)
        else:
            rule(obj, out)
        if out.errors:
            self._errors.extend(f"{self.source}: {label}: {f}: {p}" for f, p in out.errors)
            out.errors.clear()
        if out.warnings:
            self._warnings.extend(f"{self.source}: {label}: {f}: {p}" for f, p in out.warnings)
            out.warnings.clear()

    def add_error(self, line: str) -> None:
        """Record a problem found outside the rules (a decoder's ``FILE: KIND NS/NAME:
        FIELD: problem`` line), so that `finish` reports it with the others, in order."""
        self._errors.append(line)

    @staticmethod
    def _check_pod(obj: Mapping[str, Any], out: Problems, memo: SpecMemo) -> None:
        """`validate_pod`, with the spec's problems found once per distinct spec."""
        validate_object_meta(obj, True, "subdomain", out)
        spec = obj.get("spec")
        if spec is None:  # as validate_pod: no spec is an empty one (containers required)
            spec = {}
        if isinstance(spec, Mapping):

            def problems() -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
                found = Problems()
                validate_pod_spec(spec, "spec", found)
                return tuple(found.errors), tuple(found.warnings)

            errors, warnings = memo.get(("validate_pod_spec", memo.text(spec)), problems)
            out.errors.extend(errors)
            out.warnings.extend(warnings)

    def finish(self) -> list[str]:
        """The warning lines, once every object has been checked.

        Raises:
            ManifestError: one line per problem found (at most `MAX_REPORTED`, then
                ``FILE: N more problem(s) not shown``).
        """
        errors = self._errors
        if errors:
            shown = errors[:MAX_REPORTED]
            if len(errors) > MAX_REPORTED:
                shown.append(
                    f"{self.source}: {len(errors) - MAX_REPORTED} more problem(s) not shown"
                )
            raise ManifestError("\n".join(shown))
        return self._warnings
