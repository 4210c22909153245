"""Claims from ResourceClaimTemplates, as Kubernetes' resource-claim controller makes them
(pkg/controller/resourceclaim ``handleClaim``): owned by the pod, annotated with the pod's
claim entry, spec and metadata from the template, name recorded in the pod's
``status.resourceClaimStatuses``."""

from __future__ import annotations

from typing import Any

from schedsim.api.loading.loader import decode_objects
from schedsim.dra.claim_controller import (
    POD_CLAIM_NAME_ANNOTATION,
    create_template_claims,
    generated_name,
)

TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "one-gpu", "namespace": "ml"},
    "spec": {
        "metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
    },
}


def _pod(name: str, node: str | None = None, **status: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c"}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
        "spec": spec,
        "status": status,
    }


def test_claim_is_created_like_the_controller_does() -> None:
    """Owner reference (v1 Pod, controller), pod-claim-name annotation, template labels and
    annotations, template spec, name ``<pod>-<entry>-<5>`` recorded in the pod's status."""
    m = decode_objects([TEMPLATE, _pod("trainer")], "t")
    made = create_template_claims(m.pods, m.resource_claim_templates)
    (claim,) = made.claims
    (pod,) = made.pods
    assert claim.name.startswith("trainer-gpu-") and len(claim.name) == len("trainer-gpu-") + 5
    assert claim.namespace == "ml"
    assert claim.generate_name == "trainer-gpu-"
    (owner,) = claim.owner_references
    assert (owner.api_version, owner.kind, owner.name, owner.uid, owner.controller) == (
        "v1",
        "Pod",
        "trainer",
        "uid-trainer",
        True,
    )
    assert claim.annotations == {"note": "x", POD_CLAIM_NAME_ANNOTATION: "gpu"}
    assert claim.labels == {"team": "a"}
    assert claim.spec == m.resource_claim_templates[0].spec
    assert claim.status.allocation is None
    assert pod.resource_claim_statuses == {"gpu": claim.name}
    assert m.pods[0].resource_claim_statuses == {}  # the input pod is not modified
    assert made.warnings == []


def test_names_are_deterministic_and_distinct_per_pod() -> None:
    """The same input gives the same names on every run; two pods get different claims."""
    m = decode_objects([TEMPLATE, _pod("a"), _pod("b")], "t")
    first = create_template_claims(m.pods, m.resource_claim_templates)
    again = create_template_claims(m.pods, m.resource_claim_templates)
    assert [c.name for c in first.claims] == [c.name for c in again.claims]
    assert len({c.name for c in first.claims}) == 2
    assert len({c.uid for c in first.claims}) == 2


def test_long_names_are_shortened_in_proportion() -> None:
    """The controller shortens pod name and entry name in proportion to their lengths so
    the base stays within 57 characters (63 with the hyphen and 5 characters)."""
    m = decode_objects([_pod("p" * 60)], "t")
    name = generated_name(m.pods[0], "c" * 30)
    assert len(name) <= 63
    base = name[:-5]
    pod_part, _, claim_part = base.partition("-")
    assert pod_part == "p" * (60 * 57 // 92) and claim_part == "c" * (30 * 57 // 92)


def test_existing_status_bound_pods_and_existing_claims_are_left_alone() -> None:
    """Pods with a status entry, and bound pods, get nothing; a claim the pod already owns
    for the entry (pod-claim-name annotation) is reused, not duplicated."""
    owned = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": "c-prev-gpu-abcde",
            "namespace": "ml",
            "annotations": {POD_CLAIM_NAME_ANNOTATION: "gpu"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": "prev",
                    "uid": "uid-prev",
                    "controller": True,
                }
            ],
        },
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
    }
    m = decode_objects(
        [
            TEMPLATE,
            owned,
            _pod("done", resourceClaimStatuses=[{"name": "gpu", "resourceClaimName": "x"}]),
            _pod("bound", node="n1"),
            _pod("prev"),
        ],
        "t",
    )
    made = create_template_claims(m.pods, m.resource_claim_templates, m.resource_claims)
    assert made.claims == []
    done, bound, prev = made.pods
    assert done is m.pods[0] and bound is m.pods[1]
    assert prev.resource_claim_statuses == {"gpu": "c-prev-gpu-abcde"}


def test_missing_template_is_a_warning_and_no_claim() -> None:
    """The controller cannot create a claim without its template (it retries); the pod then
    stays pending with DynamicResources' ``ResourceClaim not created yet``."""
    m = decode_objects([_pod("orphan")], "t")
    made = create_template_claims(m.pods, [])
    assert made.claims == []
    assert made.pods[0].resource_claim_statuses == {}
    assert made.warnings == [
        "ml/orphan: ResourceClaimTemplate ml/one-gpu (spec.resourceClaims 'gpu') not found; "
        "no claim created"
    ]
