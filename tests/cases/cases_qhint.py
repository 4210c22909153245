"""Runner for the ``qhint-*`` cases: a plugin's queueing hint for one cluster event, through
kube-scheduler's scheduling queue (tests/cases/upstream/README.md, "Queueing-hint cases").

Upstream's ``isSchedulableAfter...`` tests call a plugin's hint function with the pending pod
and the changed object before and after. Here the same inputs go the way a real event goes:
the pod is added to a `SchedulingQueue` built with the default profile's registered events
(`Framework.events_to_register`, upstream's buildQueueingHintMap), popped, and parked as
rejected by ``check.plugin``; then ``check.event`` happens with ``oldObject`` /
``newObject`` (`move_all_to_active_or_backoff`). ``expect.hint: Queue`` means the pod left
the unschedulable pods, ``QueueSkip`` that it stayed. So a case checks the event
registration (the event must match one the plugin registered) and the hint together.

``oldObject`` / ``newObject``: a manifest of any kind the loader reads (decoded as it decodes
it: a Node, Pod, PersistentVolumeClaim, StorageClass, ...), null (the
missing side of an Add or Delete) or a plain string, passed as it is, for upstream's rows
that hand the hint an object of the wrong type (``"not-a-node"``).

The case's ``objects`` are the cluster the hint reads through the plugin's listers (upstream's
fake listers): Nodes and the pods bound to them in the snapshot, PVs, PVCs, StorageClasses,
VolumeAttachments, CSINodes and the DRA objects in the snapshot's listers, which are bound to
the framework's handle while the event is replayed.
"""

from __future__ import annotations

from typing import Any

import attrs

from schedsim.api.loading.loader import decode_objects
from schedsim.api.loading.manifests import KINDS
from schedsim.framework import Framework, Handle, StorageListers, default_profile
from schedsim.framework.events import ActionType, ClusterEvent, EventResource
from schedsim.scheduler.clock import LogicalClock
from schedsim.scheduler.queue import SchedulingQueue
from schedsim.snapshot import PredicateSnapshot
from schedsim.snapshot.csi import CsiSnapshot
from schedsim.snapshot.dra import DraSnapshot


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass)."""
    del case
    return None


def event_of(raw: dict[str, Any]) -> ClusterEvent:
    """The ``{resource, action}`` of a case as a `ClusterEvent` (action: a name or a list)."""
    actions = raw["action"] if isinstance(raw["action"], list) else [raw["action"]]
    action = ActionType(0)
    for a in actions:
        action |= ActionType[a]
    return ClusterEvent(EventResource(raw["resource"]), action)


def object_of(raw: Any, source: str) -> object:
    """An ``oldObject`` / ``newObject`` of a case, decoded (see the module docstring)."""
    if raw is None or isinstance(raw, str):
        return raw
    m = decode_objects([raw], source, api_rules=False)
    found = [obj for _, attr, _ in KINDS.values() for obj in getattr(m, attr)]
    assert len(found) == 1, f"{source}: one object expected, got {found}"
    return found[0]


def run(case: dict[str, Any], source: str) -> None:
    """Park the case's pod as rejected by its plugin, replay the event, compare the hint."""
    check, expect = case["check"], case["expect"]
    m = decode_objects(case["objects"], source, api_rules=False)
    ns, name = check["pod"].split("/")
    pod = next(p for p in m.pods if p.namespace == ns and p.name == name)
    # the plugin's args (upstream's NodeAffinityArgs rows), on top of the default profile
    args = {check["plugin"]: check["pluginArgs"]} if "pluginArgs" in check else {}
    profile = attrs.evolve(default_profile(), plugin_args=args) if args else default_profile()
    framework = Framework(profile, Handle())
    # the case's objects feed the listers the hints read (upstream's fake listers)
    snapshot = PredicateSnapshot(framework)
    snapshot.set_cluster_state(
        m.nodes,
        [p for p in m.pods if p.node_name and p is not pod],
        DraSnapshot.from_objects(m.resource_claims, m.resource_slices, m.device_classes),
        csi_snapshot=CsiSnapshot(m.csi_nodes),
        storage_listers=StorageListers.from_objects(
            m.persistent_volumes,
            m.persistent_volume_claims,
            m.storage_classes,
            m.volume_attachments,
        ),
    )
    hints = framework.events_to_register()
    assert check["plugin"] in hints, f"{check['plugin']} registers no events in the profile"
    clock = LogicalClock()
    queue = SchedulingQueue(
        framework.queue_sort_less(), clock=clock, queueing_hints={pod.scheduler_name: hints}
    )
    queue.add(pod)
    qpi = queue.pop()
    assert qpi is not None and qpi.pod is pod
    queue.add_unschedulable_if_not_present(qpi, (check["plugin"],))
    queue.done(pod)
    assert queue.unschedulable_len == 1
    with snapshot.bound():
        moved = queue.move_all_to_active_or_backoff(
            event_of(check["event"]),
            object_of(check.get("oldObject"), source),
            object_of(check.get("newObject"), source),
        )
    got = "Queue" if moved else "QueueSkip"
    assert got == expect["hint"], f"hint: got {got}, want {expect['hint']}"
