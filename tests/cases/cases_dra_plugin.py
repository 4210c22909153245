"""Runner for the ``dra-plugin-*`` cases: kube-scheduler's DynamicResources plugin
(``dynamicresources_test.go`` TestPlugin) through its extension points.

Extension points run in scheduler order: PreEnqueue, PreFilter, Filter per node (a Filter
``Error`` ends the cycle, as it does in kube-scheduler and in upstream's harness), PostFilter
only when no node passed, Reserve and PreBind on the first node that passed. Like upstream's
harness, a non-success status matches when its message *contains* the expected message.
``unreserveBeforePreBind: true`` calls Unreserve right after Reserve (another PreBind plugin
failed) and stops; ``unreserveAfterPreBind: true`` calls it after PreBind (Bind failed).
Claims are compared after the step the case names (``claimsAfterPreBind``, ...) as the
snapshot holds them; ``claimsAfterPostFilter`` and ``claimsAfterUnreserve`` list every claim
left in the snapshot.
"""

from __future__ import annotations

from typing import Any

import attrs

from schedsim.api.core import Pod
from schedsim.api.loading.loader import Manifests, decode_objects
from schedsim.api.resource import ResourceClaim
from schedsim.framework import CycleState, FeatureGates, Framework, Handle, Profile, Status
from schedsim.framework.status import Code
from schedsim.snapshot import PredicateSnapshot
from schedsim.snapshot.dra import DraSnapshot
from schedsim_plugins.dynamicresources import STATE_KEY

POINTS = ("preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind")


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass)."""
    del case
    return None


def _check(point: str, got: Status | None, want: dict[str, Any]) -> None:
    code = "Success" if got is None else got.code.value
    assert code == want["code"], f"{point}: code {code} ({got}), want {want}"
    if "message" in want:
        assert got is not None
        assert want["message"] in got.message, f"{point}: message {got.message!r}, want {want}"


def _claim_view(claim: ResourceClaim) -> ResourceClaim:
    """The fields the cases compare (the rest is bookkeeping the API server adds)."""
    return attrs.evolve(claim, creation_timestamp=None)


def _generated(expected: dict[str, Any], got: list[ResourceClaim]) -> dict[str, Any]:
    """A claim whose name the API server generates (``<generated: prefix-XXXXX>``) is
    matched by its ``generateName``: the one claim created with it."""
    meta = expected["metadata"]
    if not str(meta.get("name", "")).startswith("<generated"):
        return expected
    prefix = meta["generateName"]
    (claim,) = [c for c in got if c.generate_name == prefix and c.name.startswith(prefix)]
    return {**expected, "metadata": {**meta, "name": claim.name}}


def _check_claims(
    step: str, snap: PredicateSnapshot, expected: list[dict[str, Any]], complete: bool = False
) -> None:
    claims = list(snap.list_resource_claims())
    want = decode_objects(
        [_generated(e, claims) for e in expected], f"expect.{step}", api_rules=False
    ).resource_claims
    got = {c.key: c for c in claims}
    if complete:
        assert sorted(got) == sorted(c.key for c in want), f"{step}: claims {sorted(got)}"
    for claim in want:
        assert claim.key in got, f"{step}: claim {claim.key} missing"
        g, w = _claim_view(got[claim.key]), _claim_view(claim)
        assert g.finalizers == w.finalizers, f"{step}: {claim.key} finalizers {g.finalizers}"
        assert g.status == w.status, f"{step}: {claim.key} status\n got {g.status}\nwant {w.status}"


def run(case: dict[str, Any], source: str) -> None:
    """Run one DynamicResources case and compare every status and claim it expects."""
    check, expect = case["check"], case["expect"]
    plugin_name = check["plugin"]
    manifests = decode_objects(case["objects"], source, api_rules=False)
    gates = FeatureGates().with_overrides(check.get("featureGates") or {})
    profile = Profile(
        plugins={p: (plugin_name,) for p in POINTS},
        plugin_args={plugin_name: check.get("pluginArgs") or {}},
        explicit=frozenset({plugin_name}),
    )
    framework = Framework(profile, Handle(feature_gates=gates))
    plugin = framework.plugins[plugin_name]
    snap = PredicateSnapshot(framework)
    dra = DraSnapshot.from_objects(
        manifests.resource_claims, manifests.resource_slices, manifests.device_classes
    )
    ns, name = check["pod"].split("/")
    pod = next(p for p in manifests.pods if p.namespace == ns and p.name == name)
    bound = [p for p in manifests.pods if p.node_name and p is not pod]
    assert snap.set_cluster_state(manifests.nodes, bound, dra) == []
    with snap.bound():  # the plugin reads and writes the snapshot through the handle
        _run_points(plugin, pod, snap, manifests, check, expect)


def _run_points(
    plugin: Any,
    pod: Pod,
    snap: PredicateSnapshot,
    manifests: Manifests,
    check: dict[str, Any],
    expect: dict[str, Any],
) -> None:
    if "preEnqueue" in expect:
        st = plugin.schedsim_pre_enqueue(pod)
        _check("preEnqueue", st, expect["preEnqueue"])
        if st is not None and not st.is_success:
            return
    state = CycleState()
    st = plugin.schedsim_pre_filter(state, pod, snap.list_node_infos())
    if "preFilter" in expect:
        _check("preFilter", st, expect["preFilter"])
    passed: list[str] = []
    statuses: dict[str, Status] = {}
    if st is None or st.is_success:
        for node_name in check.get("nodes") or [check["node"]]:
            fst = plugin.schedsim_filter(state, pod, snap.get_node_info(node_name))
            want = (expect.get("filter") or {}).get(node_name)
            if want is not None:
                _check(f"filter.{node_name}", fst, want)
            if fst is None or fst.is_success:
                passed.append(node_name)
            elif fst.code is Code.Error:
                return  # an error ends the scheduling cycle
            else:
                statuses[node_name] = fst
    if not passed:
        pst = plugin.schedsim_post_filter(state, pod, statuses)
        if "postFilter" in expect:
            _check("postFilter", pst, expect["postFilter"])
        if "claimsAfterPostFilter" in expect:
            _check_claims(
                "claimsAfterPostFilter", snap, expect["claimsAfterPostFilter"], complete=True
            )
        if "preBindPreFlight" in expect:  # upstream asks it even for a skipped pod
            first = (check.get("nodes") or [check.get("node")])[0]
            flight = plugin.schedsim_pre_bind_pre_flight(state, pod, first)
            _check("preBindPreFlight", flight, expect["preBindPreFlight"])
        return
    node_name = passed[0]
    rst = plugin.schedsim_reserve(state, pod, node_name)
    if "reserve" in expect:
        _check("reserve", rst, expect["reserve"])
    if rst is not None and not rst.is_success:
        return
    if expect.get("unreserveBeforePreBind"):
        plugin.schedsim_unreserve(state, pod, node_name)
        _check_claims("claimsAfterUnreserve", snap, expect["claimsAfterUnreserve"], complete=True)
        return
    flight = plugin.schedsim_pre_bind_pre_flight(state, pod, node_name)
    if "preBindPreFlight" in expect:
        _check("preBindPreFlight", flight, expect["preBindPreFlight"])
    if flight is None or flight.is_success:
        bst = plugin.schedsim_pre_bind(state, pod, node_name)
        if "preBind" in expect:
            _check("preBind", bst, expect["preBind"])
    if "claimsAfterPreBind" in expect:
        if not expect["claimsAfterPreBind"]:  # nothing may have been created
            assert list(snap.list_resource_claims()) == list(manifests.resource_claims)
        _check_claims("claimsAfterPreBind", snap, expect["claimsAfterPreBind"])
    if expect.get("unreserveAfterPreBind"):
        plugin.schedsim_unreserve(state, pod, node_name)
        _check_claims("claimsAfterUnreserve", snap, expect["claimsAfterUnreserve"], complete=True)
    if "podStatusAfterPreBind" in expect:
        want_status = expect["podStatusAfterPreBind"]["extendedResourceClaimStatus"]
        got_status = state[STATE_KEY].extended_status
        assert got_status is not None
        name, mappings = got_status
        assert name.startswith(f"{pod.name}-extended-resources-")
        assert [
            {"containerName": c, "resourceName": r, "requestName": q} for c, r, q in mappings
        ] == want_status["requestMappings"]
