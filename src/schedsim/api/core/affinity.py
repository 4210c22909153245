"""A pod's ``spec.affinity``: node affinity (selector terms and requirements) and pod
(anti-)affinity terms, with ``matchLabelKeys``/``mismatchLabelKeys`` merged into their
selectors from the pod's labels. Decoders raise `FieldError` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from schedsim.api.core.spread import label_key_requirements
from schedsim.api.errors import FieldError
from schedsim.api.labels import LabelSelector, check_label_key
from schedsim.api.loading import decode as d

__all__ = [
    "NODE_SELECTOR_OPERATORS",
    "Affinity",
    "NodeAffinity",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "PodAffinityTerm",
    "PreferredSchedulingTerm",
    "WeightedPodAffinityTerm",
]

NODE_SELECTOR_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})


# --------------------------------------------------------------------------- node affinity


@attrs.frozen
class NodeSelectorRequirement:
    """One ``matchExpressions``/``matchFields`` entry of a NodeSelectorTerm."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> NodeSelectorRequirement:
        """Decode one requirement (operators In, NotIn, Exists, DoesNotExist, Gt, Lt);
        raises FieldError. A Gt/Lt value is not parsed here: the API server accepts any
        string and kube-scheduler matches no node when it is not an integer
        (`schedsim.api.core.nodeaffinity`); the value counts are checked by
        `schedsim.api.validation.pod`."""
        key = d.get_str(raw, "key", path)
        operator = d.get_str(raw, "operator", path)
        if operator not in NODE_SELECTOR_OPERATORS:
            raise FieldError(
                f"{path}.operator",
                f"unsupported value {operator!r}: want one of {sorted(NODE_SELECTOR_OPERATORS)}",
            )
        values = d.get_str_list(raw, "values", path)
        return cls(key=key, operator=operator, values=values)


@attrs.frozen
class NodeSelectorTerm:
    """One term of ``requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms``.

    Requirements within a term are ANDed; terms are ORed.
    """

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> NodeSelectorTerm:
        """Decode one term; raises FieldError."""

        def reqs(key: str) -> tuple[NodeSelectorRequirement, ...]:
            items = d.get_list(raw, key, path)
            p = d.join(path, key)
            return tuple(
                NodeSelectorRequirement.from_manifest(d.get_mapping_item(items, i, p), f"{p}[{i}]")
                for i in range(len(items))
            )

        return cls(match_expressions=reqs("matchExpressions"), match_fields=reqs("matchFields"))


@attrs.frozen
class PreferredSchedulingTerm:
    """``preferredDuringSchedulingIgnoredDuringExecution[i]`` of a node affinity."""

    weight: int
    preference: NodeSelectorTerm


@attrs.frozen
class NodeAffinity:
    """spec.affinity.nodeAffinity. ``required`` None means no required terms were given."""

    required: tuple[NodeSelectorTerm, ...] | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@attrs.frozen
class PodAffinityTerm:
    """A pod (anti-)affinity term: pods matching ``label_selector`` in ``namespaces`` (or
    namespaces matching ``namespace_selector``) within the same ``topology_key`` domain.

    ``match_label_keys`` / ``mismatch_label_keys`` are kept as given; when the pod is decoded
    their ``key In/NotIn [pod's value]`` requirements are already merged into
    ``label_selector``, as the API server does at pod creation (MatchLabelKeysInPodAffinity,
    GA and locked on in 1.34; merging a stored pod again selects the same pods)."""

    label_selector: LabelSelector | None
    topology_key: str
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@attrs.frozen
class WeightedPodAffinityTerm:
    """A preferred pod (anti-)affinity term with its weight (1-100)."""

    weight: int
    term: PodAffinityTerm


@attrs.frozen
class Affinity:
    """spec.affinity: node affinity and pod (anti-)affinity."""

    node_affinity: NodeAffinity | None = None
    pod_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    pod_anti_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_anti_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()

    @property
    def has_pod_affinity_or_anti_affinity(self) -> bool:
        """Whether any pod affinity or anti-affinity term is set (NodeInfo.pods_with_affinity)."""
        return bool(
            self.pod_affinity_required
            or self.pod_affinity_preferred
            or self.pod_anti_affinity_required
            or self.pod_anti_affinity_preferred
        )

    @classmethod
    def from_manifest(
        cls, raw: Mapping[str, Any], path: str, pod_labels: Mapping[str, str] | None = None
    ) -> Affinity:
        """Decode spec.affinity; raises FieldError. With ``pod_labels`` the pod (anti-)affinity
        terms' matchLabelKeys/mismatchLabelKeys are merged into their label selectors."""
        labels = pod_labels or {}
        na_raw = d.get_map(raw, "nodeAffinity", path)
        node_affinity = None
        if na_raw:
            na_path = d.join(path, "nodeAffinity")
            req_raw = na_raw.get("requiredDuringSchedulingIgnoredDuringExecution")
            required = None
            if req_raw is not None:
                rp = d.join(na_path, "requiredDuringSchedulingIgnoredDuringExecution")
                if not isinstance(req_raw, Mapping):
                    raise FieldError(rp, "expected a mapping")
                terms = d.get_list(req_raw, "nodeSelectorTerms", rp)
                tp = d.join(rp, "nodeSelectorTerms")
                required = tuple(
                    NodeSelectorTerm.from_manifest(d.get_mapping_item(terms, i, tp), f"{tp}[{i}]")
                    for i in range(len(terms))
                )
            pref = d.get_list(na_raw, "preferredDuringSchedulingIgnoredDuringExecution", na_path)
            pp = d.join(na_path, "preferredDuringSchedulingIgnoredDuringExecution")
            preferred = []
            for i in range(len(pref)):
                item = d.get_mapping_item(pref, i, pp)
                ip = f"{pp}[{i}]"
                preferred.append(
                    PreferredSchedulingTerm(
                        weight=d.get_int(item, "weight", ip),
                        preference=NodeSelectorTerm.from_manifest(
                            d.get_map(item, "preference", ip), d.join(ip, "preference")
                        ),
                    )
                )
            node_affinity = NodeAffinity(required=required, preferred=tuple(preferred))

        def pod_terms(
            kind: str,
        ) -> tuple[tuple[PodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]:
            sect = d.get_map(raw, kind, path)
            sp = d.join(path, kind)
            req = d.get_list(sect, "requiredDuringSchedulingIgnoredDuringExecution", sp)
            rp = d.join(sp, "requiredDuringSchedulingIgnoredDuringExecution")
            required = tuple(
                _pod_affinity_term(d.get_mapping_item(req, i, rp), f"{rp}[{i}]", labels)
                for i in range(len(req))
            )
            pref = d.get_list(sect, "preferredDuringSchedulingIgnoredDuringExecution", sp)
            pp = d.join(sp, "preferredDuringSchedulingIgnoredDuringExecution")
            preferred = []
            for i in range(len(pref)):
                item = d.get_mapping_item(pref, i, pp)
                ip = f"{pp}[{i}]"
                weight = d.get_int(item, "weight", ip)
                if not 1 <= weight <= 100:
                    raise FieldError(d.join(ip, "weight"), f"{weight}: must be in the range 1-100")
                preferred.append(
                    WeightedPodAffinityTerm(
                        weight=weight,
                        term=_pod_affinity_term(
                            d.get_map(item, "podAffinityTerm", ip),
                            d.join(ip, "podAffinityTerm"),
                            labels,
                        ),
                    )
                )
            return required, tuple(preferred)

        aff_req, aff_pref = pod_terms("podAffinity")
        anti_req, anti_pref = pod_terms("podAntiAffinity")
        return cls(
            node_affinity=node_affinity,
            pod_affinity_required=aff_req,
            pod_affinity_preferred=aff_pref,
            pod_anti_affinity_required=anti_req,
            pod_anti_affinity_preferred=anti_pref,
        )


def _pod_affinity_term(
    raw: Mapping[str, Any], path: str, pod_labels: Mapping[str, str]
) -> PodAffinityTerm:
    """Decode and validate one pod affinity term (``validatePodAffinityTerm``: a non-empty
    qualified topologyKey, namespaces that are DNS labels, valid selectors, valid and disjoint
    matchLabelKeys/mismatchLabelKeys that need a labelSelector), merging the label keys."""
    sel = raw.get("labelSelector")
    ns_sel = raw.get("namespaceSelector")
    selector = (
        None
        if sel is None
        else LabelSelector.from_manifest(
            d.get_map(raw, "labelSelector", path), path + ".labelSelector"
        )
    )
    topology_key = d.get_str(raw, "topologyKey", path)
    if not topology_key:
        raise FieldError(d.join(path, "topologyKey"), "can not be empty")
    check_label_key(topology_key, d.join(path, "topologyKey"))
    namespaces = d.get_str_list(raw, "namespaces", path)
    for i, ns in enumerate(namespaces):
        d.check_dns1123_label(ns, f"{d.join(path, 'namespaces')}[{i}]")
    match_keys = d.get_str_list(raw, "matchLabelKeys", path)
    mismatch_keys = d.get_str_list(raw, "mismatchLabelKeys", path)
    for field, keys in (("matchLabelKeys", match_keys), ("mismatchLabelKeys", mismatch_keys)):
        fp = d.join(path, field)
        if keys and selector is None:
            raise FieldError(fp, "must not be specified when labelSelector is not set")
        for i, key in enumerate(keys):
            check_label_key(key, f"{fp}[{i}]")
            if selector is not None and key in selector.match_labels:
                raise FieldError(f"{fp}[{i}]", f"{key!r}: exists in both {field} and labelSelector")
    both = set(match_keys) & set(mismatch_keys)
    if both:
        key = sorted(both)[0]
        raise FieldError(
            d.join(path, "matchLabelKeys"),
            f"{key!r}: exists in both matchLabelKeys and mismatchLabelKeys",
        )
    if selector is not None and (match_keys or mismatch_keys):
        selector = selector.with_requirements(
            label_key_requirements(match_keys, pod_labels, "In")
            + label_key_requirements(mismatch_keys, pod_labels, "NotIn")
        )
    return PodAffinityTerm(
        label_selector=selector,
        topology_key=topology_key,
        namespaces=namespaces,
        namespace_selector=None
        if ns_sel is None
        else LabelSelector.from_manifest(
            d.get_map(raw, "namespaceSelector", path), path + ".namespaceSelector"
        ),
        match_label_keys=match_keys,
        mismatch_label_keys=mismatch_keys,
    )
