"""StorageClass (``storage.k8s.io/v1``) and its allowed topologies."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

from schedsim.api.core import parse_timestamp
from schedsim.api.errors import FieldError
from schedsim.api.loading import decode as d
from schedsim.api.storage.fields import (
    BETA_IS_DEFAULT_CLASS_ANNOTATION,
    IS_DEFAULT_CLASS_ANNOTATION,
    STORAGE_V1,
    VOLUME_BINDING_MODES,
    metadata_name,
    required_str,
)

# --------------------------------------------------------------------------- StorageClass


@attrs.frozen
class TopologySelectorTerm:
    """One ``allowedTopologies`` entry of a StorageClass: its label requirements ANDed.

    Attributes:
        match_label_expressions: ``(key, values)`` pairs: the node label ``key`` must have one
            of ``values`` (``TopologySelectorLabelRequirement``).
    """

    match_label_expressions: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether node ``labels`` satisfy every requirement; an empty term selects nothing
        (``MatchTopologySelectorTerms``)."""
        if not self.match_label_expressions:
            return False
        for key, values in self.match_label_expressions:
            if labels.get(key) not in values:
                return False
        return True

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> TopologySelectorTerm:
        """Decode one term.

        Raises:
            FieldError: a requirement without a key or without values, or a key given twice
                (``ValidateTopologySelectorTerm``).
        """
        items = d.get_list(raw, "matchLabelExpressions", path)
        p = d.join(path, "matchLabelExpressions")
        exprs: list[tuple[str, tuple[str, ...]]] = []
        seen: set[str] = set()
        for i in range(len(items)):
            item = d.get_mapping_item(items, i, p)
            ip = f"{p}[{i}]"
            key = required_str(item, "key", ip)
            values = d.get_str_list(item, "values", ip)
            if not values:
                raise FieldError(f"{ip}.values", "Required value: must specify as least one value")
            if key in seen:
                raise FieldError(f"{ip}.key", f"Duplicate value: {key!r}")
            seen.add(key)
            exprs.append((key, values))
        return cls(tuple(exprs))


@attrs.frozen
class StorageClass:
    """A ``storage.k8s.io/v1`` StorageClass.

    Attributes:
        name: the class name.
        provisioner: the provisioner (a CSI driver name or an in-tree plugin name;
            `NOT_SUPPORTED_PROVISIONER` for classes without dynamic provisioning).
        volume_binding_mode: ``Immediate`` (the default) or ``WaitForFirstConsumer``.
        parameters: provisioner parameters.
        allowed_topologies: ``allowedTopologies`` (ORed); empty: any node can provision.
        is_default: annotated as the cluster's default class
            (``storageclass.kubernetes.io/is-default-class: "true"`` or its beta form:
            ``IsDefaultAnnotation``); the only annotation read, so none is kept (but see
            ``not_default_values``).
        creation_timestamp: ``metadata.creationTimestamp`` (None when the input has none);
            orders several default classes (`schedsim.api.storage.admission`).
        not_default_values: for a class that is not the default, ``(annotation, value)`` for
            each default-class annotation whose value is not ``"false"`` or empty (``"True"``,
            ``"yes"``, ``"1"``): upstream's ``IsDefaultAnnotation`` accepts exactly ``"true"``,
            so such a class is not the default, which the loader warns about.
    """

    name: str
    provisioner: str
    volume_binding_mode: str = "Immediate"
    parameters: Mapping[str, str] = attrs.field(factory=dict)
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()
    is_default: bool = False
    creation_timestamp: datetime | None = None
    not_default_values: tuple[tuple[str, str], ...] = ()

    def allows_topology(self, labels: Mapping[str, str]) -> bool:
        """Whether a node with ``labels`` satisfies ``allowedTopologies``
        (``v1helper.MatchTopologySelectorTerms``): True without terms, else some term
        matches."""
        if not self.allowed_topologies:
            return True
        return any(t.matches(labels) for t in self.allowed_topologies)

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> StorageClass:
        """Decode a StorageClass.

        Raises:
            FieldError: no ``provisioner``, an unknown ``volumeBindingMode``, an invalid
                ``allowedTopologies`` term, or a ``metadata.creationTimestamp`` that is not
                RFC 3339.
        """
        d.check_api_version(raw, "StorageClass", STORAGE_V1)
        meta = d.get_map(raw, "metadata", "")
        mode = d.get_str(raw, "volumeBindingMode", "", "Immediate") or "Immediate"
        if mode not in VOLUME_BINDING_MODES:
            raise FieldError(
                "volumeBindingMode",
                f"unsupported value {mode!r}: want one of {sorted(VOLUME_BINDING_MODES)}",
            )
        terms = d.get_list(raw, "allowedTopologies", "")
        annotations = d.get_str_map(meta, "annotations", "metadata")
        keys = (IS_DEFAULT_CLASS_ANNOTATION, BETA_IS_DEFAULT_CLASS_ANNOTATION)
        is_default = any(annotations.get(key) == "true" for key in keys)
        return cls(
            name=metadata_name(meta),
            provisioner=required_str(raw, "provisioner", ""),
            volume_binding_mode=mode,
            parameters=d.get_str_map(raw, "parameters", ""),
            allowed_topologies=tuple(
                TopologySelectorTerm.from_manifest(
                    d.get_mapping_item(terms, i, "allowedTopologies"), f"allowedTopologies[{i}]"
                )
                for i in range(len(terms))
            ),
            is_default=is_default,
            creation_timestamp=parse_timestamp(
                meta.get("creationTimestamp"), "metadata.creationTimestamp"
            ),
            not_default_values=()
            if is_default
            else tuple(
                (key, annotations[key])
                for key in keys
                if annotations.get(key, "") not in ("", "false")
            ),
        )
