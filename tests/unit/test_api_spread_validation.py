"""Pod topology spread constraints and pod affinity terms the API server would reject are
refused at load time (``FILE: KIND NS/NAME: FIELD: problem``, exit 2 in the CLI), and
matchLabelKeys/mismatchLabelKeys are merged into the selectors as the API server does.

Rules mirrored: k8s.io/kubernetes ``pkg/apis/core/validation`` (validateTopologySpreadConstraints:
maxSkew and minDomains > 0, topologyKey required, minDomains only with DoNotSchedule, unique
(topologyKey, whenUnsatisfiable); validatePodAffinityTerm: topologyKey "can not be empty";
preferred weight 1-100), apimachinery ``ValidateLabelSelector`` (values required for In/NotIn,
forbidden for Exists/DoesNotExist; valid label keys), and the pod strategy's
``applyMatchLabelKeysAndMismatchLabelKeys`` (MatchLabelKeysInPodAffinity, GA in 1.33).
"""

from __future__ import annotations

import pytest
import yaml

from schedsim.api.errors import ManifestError
from schedsim.api.labels import LabelSelectorRequirement
from schedsim.api.loading.loader import Manifests, decode_objects

P = "f.yaml: Pod default/p: "


def _pod(spec: str, labels: str = "{app: web, rev: r1}") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p, labels: {labels}}}\n"
        f"spec:\n  containers: [{{name: c}}]\n{spec}"
    )


def _decode(text: str) -> Manifests:
    return decode_objects(list(yaml.safe_load_all(text)), "f.yaml")


def _error(text: str) -> str:
    with pytest.raises(ManifestError) as info:
        _decode(text)
    return str(info.value)


def _spread(fields: str) -> str:
    return _pod(f"  topologySpreadConstraints:\n  - {fields}\n")


def test_max_skew_must_be_positive() -> None:
    """maxSkew 0 is refused (ValidatePositiveField: "must be greater than zero")."""
    err = _error(_spread("{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}"))
    assert err == P + "spec.topologySpreadConstraints[0].maxSkew: 0: must be greater than zero"


def test_empty_topology_key() -> None:
    """An empty topologyKey is refused (field.Required "can not be empty")."""
    err = _error(_spread("{maxSkew: 1, topologyKey: '', whenUnsatisfiable: DoNotSchedule}"))
    assert err == P + "spec.topologySpreadConstraints[0].topologyKey: can not be empty"


def test_min_domains_with_schedule_anyway() -> None:
    """minDomains with whenUnsatisfiable ScheduleAnyway is refused."""
    err = _error(
        _spread("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}")
    )
    assert err == (
        P + "spec.topologySpreadConstraints[0].minDomains: 2: can only use minDomains if "
        "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"
    )


def test_min_domains_must_be_positive() -> None:
    """minDomains 0 is refused."""
    err = _error(
        _spread("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, minDomains: 0}")
    )
    assert err.endswith("minDomains: 0: must be greater than zero")


def test_unknown_when_unsatisfiable() -> None:
    """whenUnsatisfiable must be DoNotSchedule or ScheduleAnyway."""
    err = _error(_spread("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Maybe}"))
    assert "whenUnsatisfiable: unsupported value 'Maybe'" in err


def test_duplicate_constraint() -> None:
    """Two constraints with the same {topologyKey, whenUnsatisfiable} are refused."""
    c = "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}"
    err = _error(_pod(f"  topologySpreadConstraints:\n  - {c}\n  - {c}\n"))
    assert "spec.topologySpreadConstraints[1]" in err and "Duplicate value" in err


def test_invalid_label_selector_in_without_values() -> None:
    """An In requirement without values is an invalid label selector."""
    err = _error(
        _spread(
            "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: "
            "{matchExpressions: [{key: app, operator: In}]}}"
        )
    )
    assert err == (
        P + "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].values: "
        "required: must be specified when `operator` is 'In' or 'NotIn'"
    )


def test_invalid_label_selector_exists_with_values() -> None:
    """An Exists requirement with values is an invalid label selector."""
    err = _error(
        _pod(
            "  affinity:\n    podAntiAffinity:\n"
            "      requiredDuringSchedulingIgnoredDuringExecution:"
            "\n      - {topologyKey: zone, labelSelector: {matchExpressions: "
            "[{key: app, operator: Exists, values: [x]}]}}\n"
        )
    )
    assert err.endswith(
        "labelSelector.matchExpressions[0].values: forbidden: may not be specified when "
        "`operator` is 'Exists' or 'DoesNotExist'"
    )


def test_invalid_label_key() -> None:
    """A matchLabels key that is not a qualified name is refused."""
    err = _error(
        _spread(
            "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: "
            "{matchLabels: {'bad key': x}}}"
        )
    )
    assert "labelSelector.matchLabels: invalid label key 'bad key'" in err


def test_affinity_term_empty_topology_key() -> None:
    """A pod affinity term with an empty topologyKey is refused ("can not be empty")."""
    err = _error(
        _pod(
            "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:"
            "\n      - {topologyKey: '', labelSelector: {matchLabels: {app: web}}}\n"
        )
    )
    assert err == (
        P + "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        ".topologyKey: can not be empty"
    )


def test_preferred_weight_range() -> None:
    """A preferred pod affinity term's weight must be in 1-100."""
    err = _error(
        _pod(
            "  affinity:\n    podAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:"
            "\n      - {weight: 0, podAffinityTerm: {topologyKey: zone}}\n"
        )
    )
    assert err.endswith("weight: 0: must be in the range 1-100")


def test_match_label_keys_merged_into_affinity_selector() -> None:
    """matchLabelKeys add ``key In [pod's value]``, mismatchLabelKeys ``key NotIn [...]``, for
    keys the pod has (the API server's merge at creation)."""
    m = _decode(
        _pod(
            "  affinity:\n    podAntiAffinity:\n"
            "      requiredDuringSchedulingIgnoredDuringExecution:"
            "\n      - {topologyKey: zone, labelSelector: {matchLabels: {app: web}}, "
            "matchLabelKeys: [rev, missing], mismatchLabelKeys: [app2]}\n"
        )
    )
    aff = m.pods[0].affinity
    assert aff is not None
    sel = aff.pod_anti_affinity_required[0].label_selector
    assert sel is not None
    assert sel.match_expressions == (LabelSelectorRequirement("rev", "In", frozenset({"r1"})),)
    assert sel.matches({"app": "web", "rev": "r1"})
    assert not sel.matches({"app": "web", "rev": "r2"})


def test_match_label_keys_need_label_selector() -> None:
    """matchLabelKeys without a labelSelector are refused."""
    err = _error(
        _spread(
            "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, "
            "matchLabelKeys: [rev]}"
        )
    )
    assert err.endswith("matchLabelKeys: must not be specified when labelSelector is not set")


def test_valid_constraints_decoded() -> None:
    """A valid constraint keeps its fields; unset minDomains and policies stay None."""
    m = _decode(
        _spread(
            "{maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, "
            "labelSelector: {matchLabels: {app: web}}, nodeTaintsPolicy: Honor}"
        )
    )
    (c,) = m.pods[0].topology_spread_constraints
    assert (c.max_skew, c.topology_key, c.min_domains, c.node_affinity_policy) == (
        2,
        "zone",
        None,
        None,
    )
    assert c.node_taints_policy == "Honor"
    assert m.pods[0].hard_topology_spread_constraints == 1
