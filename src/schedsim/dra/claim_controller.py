"""Claims from templates, as Kubernetes' resource-claim controller creates them.

Mirrors ``pkg/controller/resourceclaim`` (``handleClaim``): for each entry of a pod's
``spec.resourceClaims`` that names a ResourceClaimTemplate and has no
``status.resourceClaimStatuses`` entry yet, the controller creates a claim from the template,
owned by the pod, and records its name in the pod's status. Plain manifests (a Deployment's
pods written by hand, ``kubectl get pods`` of pods still pending) then schedule as in a real
cluster.

Differences from the controller: the name suffix is derived from the pod's UID and the claim
entry instead of being random, so every run gives the same names; a missing template is
reported as a warning (the controller emits an event and retries).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Sequence

import attrs

from schedsim.api.core import OwnerReference, Pod
from schedsim.api.resource import ResourceClaim, ResourceClaimTemplate

__all__ = [
    "POD_CLAIM_NAME_ANNOTATION",
    "PodClaims",
    "create_template_claims",
    "generated_name",
    "name_suffix",
]

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
"""Annotation on a generated claim naming the pod's ``spec.resourceClaims`` entry."""

# The alphabet and length of apimachinery's SimpleNameGenerator suffix (no vowels, no 0/1/3).
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_SUFFIX_LEN = 5
_MAX_BASE_LEN = 57  # 63 - hyphen - 5 characters, as the controller leaves room for


def generated_name(pod: Pod, pod_claim_name: str) -> str:
    """The claim name for ``pod``'s entry ``pod_claim_name``: ``<pod>-<entry>-<5 chars>``.

    Long names are shortened as the controller does, both parts in proportion to their
    length, so the base is at most 57 characters. The 5 characters come from a hash of the
    pod's UID and the entry name (deterministic; upstream draws them at random).
    """
    base = f"{pod.name}-{pod_claim_name}-"
    if len(base) > _MAX_BASE_LEN:
        n = len(base)
        base = (
            pod.name[: len(pod.name) * _MAX_BASE_LEN // n]
            + "-"
            + pod_claim_name[: len(pod_claim_name) * _MAX_BASE_LEN // n]
        )
    return base + name_suffix(f"{pod.uid}/{pod_claim_name}")


def name_suffix(seed: str) -> str:
    """5 characters of apimachinery's generateName alphabet, derived from ``seed`` (upstream
    draws them at random; a derived suffix makes every run name objects the same way)."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:_SUFFIX_LEN])


@attrs.frozen
class PodClaims:
    """What the controller did.

    Attributes:
        pods: the pods, in input order; a pod that got claims is a copy with
            ``status.resourceClaimStatuses`` filled in, the others are the input objects.
        claims: the claims created, in pod order.
        warnings: one line per template that does not exist (``<ns>/<pod>: ...``).
    """

    pods: list[Pod]
    claims: list[ResourceClaim]
    warnings: list[str]


def create_template_claims(
    pods: Sequence[Pod],
    templates: Iterable[ResourceClaimTemplate],
    claims: Iterable[ResourceClaim] = (),
) -> PodClaims:
    """Create the claims pending pods need from their ResourceClaimTemplates.

    Only pods without ``spec.nodeName`` are handled (a bound pod's claims exist already). An
    existing claim that the pod controls and whose ``resource.kubernetes.io/pod-claim-name``
    annotation names the entry is reused, as the controller does after a restart.

    Args:
        pods: all pods; none is modified.
        templates: the cluster's ResourceClaimTemplates.
        claims: the claims that exist already.

    Returns:
        the pods (with claim statuses) and the new claims: each owned by its pod
        (``ownerReferences`` controller, ``v1``/``Pod``), labelled and annotated from the
        template, with the template's spec, unallocated.
    """
    by_template = {(t.namespace, t.name): t for t in templates}
    existing: dict[tuple[str, str, str], ResourceClaim] = {}
    for c in claims:
        entry = c.annotations.get(POD_CLAIM_NAME_ANNOTATION)
        if entry is None:
            continue
        for owner in c.owner_references:
            if owner.controller and owner.kind == "Pod":
                existing[(c.namespace, owner.uid, entry)] = c
    out_pods: list[Pod] = []
    created: list[ResourceClaim] = []
    warnings: list[str] = []
    for pod in pods:
        if pod.node_name:
            out_pods.append(pod)
            continue
        statuses = dict(pod.resource_claim_statuses)
        for ref in pod.resource_claims:
            template_name = ref.resource_claim_template_name
            if template_name is None or ref.name in statuses:
                continue
            reuse = existing.get((pod.namespace, pod.uid, ref.name))
            if reuse is not None:
                statuses[ref.name] = reuse.name
                continue
            template = by_template.get((pod.namespace, template_name))
            if template is None:
                warnings.append(
                    f"{pod.key}: ResourceClaimTemplate {pod.namespace}/{template_name} "
                    f"(spec.resourceClaims {ref.name!r}) not found; no claim created"
                )
                continue
            name = generated_name(pod, ref.name)
            created.append(
                ResourceClaim(
                    name=name,
                    namespace=pod.namespace,
                    uid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"schedsim:claim:{pod.uid}/{ref.name}")),
                    generate_name=name[:-_SUFFIX_LEN],
                    labels=dict(template.claim_labels),
                    annotations={
                        **template.claim_annotations,
                        POD_CLAIM_NAME_ANNOTATION: ref.name,
                    },
                    owner_references=(
                        OwnerReference(
                            api_version="v1",
                            kind="Pod",
                            name=pod.name,
                            uid=pod.uid,
                            controller=True,
                        ),
                    ),
                    spec=template.spec,
                )
            )
            statuses[ref.name] = name
        if statuses != dict(pod.resource_claim_statuses):
            pod = attrs.evolve(pod, resource_claim_statuses=statuses)
        out_pods.append(pod)
    return PodClaims(out_pods, created, warnings)
