"""A pod's containers (requests, limits, host ports, image), volumes and resource claim
references (core/v1 ``Container``, ``Volume``, ``PodResourceClaim``).

Equal containers of a template are one shared object (`schedsim.api.interning`). Decoders
raise `FieldError` naming the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from schedsim.api.core.volumes import (
    IN_TREE_SOURCES,
    CSIVolumeSource,
    InTreeVolumeSource,
    decode_in_tree_source,
    decode_inline_csi_source,
)
from schedsim.api.errors import FieldError
from schedsim.api.interning import shared, shared_map
from schedsim.api.loading import decode as d
from schedsim.api.meta import ResourceList, default_requests

__all__ = ["Container", "ContainerPort", "HostPort", "PodResourceClaim", "Volume", "host_ports"]

HostPort = tuple[str, str, int]
"""``(host_ip, protocol, host_port)`` of one container port that claims a node port."""


def host_ports(
    init_containers: Iterable[Container], containers: Iterable[Container]
) -> tuple[HostPort, ...]:
    """The ports of a pod that occupy node ports (``util.GetHostPorts``, pkg/scheduler/util).

    Ports with ``hostPort > 0`` of restartable init containers (sidecars, which run for the
    pod's whole life) first, then of regular containers; ordinary init containers are ignored.
    Used by the NodePorts plugin and its queueing hint.
    """
    out: list[HostPort] = []
    for c in init_containers:
        if c.is_restartable_init and c.ports:
            out.extend((p.host_ip, p.protocol, p.host_port) for p in c.ports if p.host_port > 0)
    for c in containers:
        if c.ports:  # most containers have none: no generator then
            out.extend((p.host_ip, p.protocol, p.host_port) for p in c.ports if p.host_port > 0)
    return tuple(out)


# --------------------------------------------------------------------------- containers


@attrs.frozen
class ContainerPort:
    """ports[i] of a container; only entries with ``host_port > 0`` occupy node ports."""

    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


@attrs.frozen
class Container:
    """A container or init container: its image, resource requests and host ports.

    ``restart_policy == "Always"`` on an init container makes it a sidecar (restartable init
    container).
    """

    name: str
    requests: ResourceList = attrs.field(factory=dict)
    limits: ResourceList = attrs.field(factory=dict)
    ports: tuple[ContainerPort, ...] = ()
    restart_policy: str | None = None
    image: str = ""

    @property
    def is_restartable_init(self) -> bool:
        """True for a sidecar (init container with ``restartPolicy: Always``)."""
        return self.restart_policy == "Always"

    @classmethod
    def from_manifest(
        cls, raw: Mapping[str, Any], path: str, host_network: bool = False
    ) -> Container:
        """Decode one container; raises FieldError. With ``host_network`` an unset hostPort
        defaults to the containerPort, as the API server's defaulting does."""
        res = d.get_map(raw, "resources", path)
        rp = d.join(path, "resources")
        ports_raw = d.get_list(raw, "ports", path)
        pp = d.join(path, "ports")
        ports = []
        for i in range(len(ports_raw)):
            p = d.get_mapping_item(ports_raw, i, pp)
            ip = f"{pp}[{i}]"
            container_port = d.get_int(p, "containerPort", ip)
            host_port = d.get_int(p, "hostPort", ip)
            ports.append(
                ContainerPort(
                    container_port=container_port,
                    host_port=host_port or (container_port if host_network else 0),
                    protocol=d.get_str(p, "protocol", ip, "TCP") or "TCP",
                    host_ip=d.get_str(p, "hostIP", ip),
                )
            )
        policy = raw.get("restartPolicy")
        raw_limits = d.get_resource_list(res, "limits", rp)
        requests = shared_map(
            default_requests(d.get_resource_list(res, "requests", rp), raw_limits)
        )
        limits = shared_map(raw_limits)
        name = d.get_str(raw, "name", path)
        restart_policy = None if policy is None else d.get_str(raw, "restartPolicy", path)
        image = d.get_str(raw, "image", path)
        # equal containers (a template's) are one object; the shared maps are keyed by
        # identity, which is safe: the stored container holds them, so no other object can
        # reuse their ids while the entry exists
        key = ("Container", name, id(requests), id(limits), tuple(ports), restart_policy, image)
        return shared(
            key,
            cls(
                name=name,
                requests=requests,
                limits=limits,
                ports=key[4],
                restart_policy=restart_policy,
                image=image,
            ),
        )


_VOLUME_TYPES = (
    "persistentVolumeClaim",
    "ephemeral",
    "csi",
    *IN_TREE_SOURCES,
    "configMap",
    "secret",
    "emptyDir",
    "hostPath",
    "projected",
    "downwardAPI",
    "nfs",
    "iscsi",
    "azureFile",
    "portworxVolume",
)


@attrs.frozen
class Volume:
    """spec.volumes[i].

    The sources the scheduler's volume plugins read are decoded: ``persistentVolumeClaim``
    (the claim name), ``ephemeral`` (a generic ephemeral volume: its PVC is named
    ``<pod>-<volume>``), an inline ``csi`` volume, and the in-tree block sources that migrate to
    CSI (``awsElasticBlockStore``, ``gcePersistentDisk``, ``azureDisk``, ``cinder``,
    ``vsphereVolume``). ``source`` keeps the raw volume (without ``name``) for everything else
    (``configMap``, ``secret``, ``emptyDir``, ...).

    Attributes:
        name: the volume name.
        persistent_volume_claim: ``persistentVolumeClaim.claimName``, or None.
        ephemeral: whether this is a generic ephemeral volume.
        csi: the inline CSI source, or None.
        in_tree: the migratable in-tree source, or None.
        source: the raw volume without ``name``.
    """

    name: str
    persistent_volume_claim: str | None = None
    ephemeral: bool = False
    source: Mapping[str, Any] = attrs.field(factory=dict)
    csi: CSIVolumeSource | None = None
    in_tree: InTreeVolumeSource | None = None

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> Volume:
        """Decode one volume.

        Raises:
            FieldError: a required field of a decoded source is missing (``claimName``, an
                inline CSI ``driver``, an in-tree disk identifier), or more than one volume
                type is set (the API server's ``may not specify more than 1 volume type``).
        """
        types = [k for k in _VOLUME_TYPES if raw.get(k) is not None]
        if len(types) > 1:
            raise FieldError(d.join(path, types[1]), "may not specify more than 1 volume type")
        pvc = d.get_map(raw, "persistentVolumeClaim", path)
        claim = None
        if raw.get("persistentVolumeClaim") is not None:
            claim = d.get_str(pvc, "claimName", d.join(path, "persistentVolumeClaim"))
            if not claim:
                raise FieldError(f"{path}.persistentVolumeClaim.claimName", "required")
        ephemeral = raw.get("ephemeral") is not None
        if ephemeral:
            d.get_map(raw, "ephemeral", path)  # must be a mapping
        return cls(
            name=d.get_str(raw, "name", path),
            persistent_volume_claim=claim,
            ephemeral=ephemeral,
            source={k: v for k, v in raw.items() if k != "name"},
            csi=decode_inline_csi_source(raw, path),
            in_tree=decode_in_tree_source(raw, path),
        )


@attrs.frozen
class PodResourceClaim:
    """spec.resourceClaims[i]: a named reference to a ResourceClaim or a template."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None
