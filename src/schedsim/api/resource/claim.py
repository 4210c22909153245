"""The ResourceClaim and ResourceClaimTemplate objects: metadata around a claim spec (and a
claim's status).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

from schedsim.api.core import (
    OwnerReference,
)
from schedsim.api.loading import decode as d
from schedsim.api.resource.claim_spec import ResourceClaimSpec
from schedsim.api.resource.claim_status import ResourceClaimStatus
from schedsim.api.resource.fields import (
    decode_meta,
    is_v1beta1,
)


@attrs.frozen
class ResourceClaim:
    """A namespaced ResourceClaim.

    Attributes:
        namespace: defaults to ``"default"`` as the API server does.
        uid: metadata.uid; when absent a stable UUID derived from namespace/name.
        owner_references: a pod-owned claim (from a template) has the pod as controller.
        deletion_timestamp: set while the claim is being deleted.
        spec: the requested devices (immutable in the API).
        status: allocation, reservations and device status.
    """

    name: str
    namespace: str = "default"
    uid: str = ""
    generate_name: str = ""
    labels: Mapping[str, str] = attrs.field(factory=dict)
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    finalizers: tuple[str, ...] = ()
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    spec: ResourceClaimSpec = attrs.field(factory=ResourceClaimSpec)
    status: ResourceClaimStatus = attrs.field(factory=ResourceClaimStatus)

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> ResourceClaim:
        """Decode a ResourceClaim (v1, v1beta2 or v1beta1); raises FieldError."""
        v1beta1 = is_v1beta1(raw, "ResourceClaim")
        meta = decode_meta(raw, "ResourceClaim", namespaced=True)
        spec = ResourceClaimSpec.from_manifest(d.get_map(raw, "spec", ""), "spec", v1beta1)
        status = ResourceClaimStatus.from_manifest(
            d.get_map(raw, "status", ""), "status", spec.request_names()
        )
        return cls(
            name=meta.name,
            namespace=meta.namespace,
            uid=meta.uid,
            generate_name=meta.generate_name,
            labels=meta.labels,
            annotations=meta.annotations,
            owner_references=meta.owner_references,
            finalizers=meta.finalizers,
            creation_timestamp=meta.creation_timestamp,
            deletion_timestamp=meta.deletion_timestamp,
            spec=spec,
            status=status,
        )


@attrs.frozen
class ResourceClaimTemplate:
    """A namespaced ResourceClaimTemplate: the claim controller creates one claim per pod
    from it.

    Attributes:
        claim_labels: ``spec.metadata.labels``, copied to the created claims.
        claim_annotations: ``spec.metadata.annotations``, copied to the created claims.
        spec: ``spec.spec``, the created claims' spec.
    """

    name: str
    namespace: str = "default"
    uid: str = ""
    labels: Mapping[str, str] = attrs.field(factory=dict)
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    claim_labels: Mapping[str, str] = attrs.field(factory=dict)
    claim_annotations: Mapping[str, str] = attrs.field(factory=dict)
    spec: ResourceClaimSpec = attrs.field(factory=ResourceClaimSpec)

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> ResourceClaimTemplate:
        """Decode a ResourceClaimTemplate (v1, v1beta2 or v1beta1); raises FieldError."""
        v1beta1 = is_v1beta1(raw, "ResourceClaimTemplate")
        meta = decode_meta(raw, "ResourceClaimTemplate", namespaced=True)
        spec = d.get_map(raw, "spec", "")
        claim_meta = d.get_map(spec, "metadata", "spec")
        return cls(
            name=meta.name,
            namespace=meta.namespace,
            uid=meta.uid,
            labels=meta.labels,
            annotations=meta.annotations,
            claim_labels=d.get_str_map(claim_meta, "labels", "spec.metadata"),
            claim_annotations=d.get_str_map(claim_meta, "annotations", "spec.metadata"),
            spec=ResourceClaimSpec.from_manifest(
                d.get_map(spec, "spec", "spec"), "spec.spec", v1beta1
            ),
        )
