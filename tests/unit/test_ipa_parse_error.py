"""A stored pod whose affinity selector holds a value that is not a valid label value loads
(the API server keeps serving selectors stored before that validation,
AllowInvalidLabelValueInSelector), and InterPodAffinity fails for it as kube-scheduler 1.34
does: ``framework.NewPodInfo`` returns the ``labels.NewRequirement`` validation error, which
PreFilter turns into UnschedulableAndUnresolvable ``parsing pod: %+v`` (filtering.go) and
PreScore into Error ``failed to parse pod: %w`` (scoring.go). Messages as upstream's
TestRequiredAffinitySingleNode "PodAffinity fails PreFilter with an invalid affinity label
syntax" asserts them; TestPreferredAffinity "invalid Affinity fails PreScore" asserts Error
and ``Invalid value: "{{.bad-value.}}"``."""

from __future__ import annotations

from typing import Any

from schedsim.api.core import Node, Pod
from schedsim.framework import Code, CycleState, Framework, Handle, Profile
from schedsim.snapshot import PredicateSnapshot
from schedsim.testing import StoreFactory
from schedsim_plugins.interpodaffinity import InterPodAffinity, pod_parse_error

BAD = "{{.bad-value.}}"
WHY = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def _term(values: list[str]) -> dict[str, Any]:
    return {
        "topologyKey": "region",
        "labelSelector": {
            "matchExpressions": [{"key": "service", "operator": "In", "values": values}]
        },
    }


def _pod(affinity: dict[str, Any]) -> Pod:
    return Pod.from_manifest(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c"}], "affinity": affinity},
        }
    )


def _plugin(store: StoreFactory) -> tuple[InterPodAffinity, PredicateSnapshot]:
    fw = Framework(Profile(plugins={"preScore": ("InterPodAffinity",), "reserve": ()}), Handle())
    snap = PredicateSnapshot(fw, store())
    node = Node.from_manifest(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"region": "r"}}}
    )
    snap.set_cluster_state([node], [])
    ipa = fw.plugins["InterPodAffinity"]
    assert isinstance(ipa, InterPodAffinity)
    return ipa, snap


def test_invalid_selector_value_loads_and_names_its_index() -> None:
    pod = _pod(
        {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    _term(["foo"]),
                    _term(["ok", BAD]),
                ]
            }
        }
    )
    assert pod.affinity is not None
    assert pod_parse_error(pod) == (
        f'requiredAffinityTerms: values[1][service]: Invalid value: "{BAD}": {WHY}'
    )
    assert pod_parse_error(_pod({"podAffinity": {}})) is None


def test_pre_filter_fails_parsing_pod(store: StoreFactory) -> None:
    ipa, snap = _plugin(store)
    pod = _pod({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term([BAD])]}})
    with snap.bound():
        status = ipa.schedsim_pre_filter(CycleState(), pod, snap.list_node_infos())
    assert status is not None
    assert status.code == Code.UnschedulableAndUnresolvable
    assert status.reasons == (
        f'parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{BAD}": {WHY}',
    )


def test_pre_score_fails_parsing_pod(store: StoreFactory) -> None:
    ipa, snap = _plugin(store)
    pod = _pod(
        {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "podAffinityTerm": _term([BAD])}
                ]
            }
        }
    )
    with snap.bound():
        status = ipa.schedsim_pre_score(CycleState(), pod, snap.list_node_infos())
    assert status is not None
    assert status.code == Code.Error
    assert status.reasons == (
        "failed to parse pod: preferredAntiAffinityTerms: values[0][service]: Invalid value: "
        f'"{BAD}": {WHY}',
    )
