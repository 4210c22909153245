"""Runner for the ``queue-*`` cases: scenarios of kube-scheduler's scheduling queue
(pkg/scheduler/backend/queue/scheduling_queue_test.go) replayed on `SchedulingQueue`
(tests/cases/upstream/README.md, "Scheduling-queue cases").

A case declares upstream's ``QueueingHintMapPerProfile`` for the default profile as data
(``check.queueingHints``: which plugin registered which event, and a hint that always answers
``Queue``, ``QueueSkip`` or fails), optionally PreEnqueue plugins that admit pods by label
(``check.preEnqueue``, upstream's ``preEnqueuePlugin{allowlists}``), and a sequence of
``check.steps``; each step does one queue operation on a fake clock, and ``expect`` steps
compare where every pod is:

```yaml
check:
  component: SchedulingQueueScenario
  queueingHints:
  - {plugin: foo, event: {resource: Node, action: Add}, hint: Queue}   # Queue|QueueSkip|Error|None
  preEnqueue: {foo: [foo]}          # plugin -> labels a pod needs one of to pass (optional)
  preEnqueueDeny: {deny: [deny]}    # plugin -> labels that make it reject a pod (optional;
                                    # upstream's denyingPreEnqueuePlugin)
  steps:
  - add: ns1/pod1                   # Add (PreEnqueue runs)
  - pop: ns1/pod1                   # Pop must return this pod (null: nothing ready)
    plugins: {unschedulablePlugins: [foo], pendingPlugins: []}   # optional: kept by Pop
  - failed: {pod: ns1/pod1, unschedulablePlugins: [foo], pendingPlugins: []}
                                    # AddUnschedulableIfNotPresent + Done
  - step: 2                         # the fake clock advances (seconds)
  - event: {resource: Node, action: Add, oldObject: ..., newObject: ...}
                                    # MoveAllToActiveOrBackoffQueue
  - assignedPodAdded: <Pod manifest>                                # AssignedPodAdded
  - assignedPodUpdated: {event: {...}, oldObject: ..., newObject: ...} # AssignedPodUpdated
  - update: {oldObject: ns1/pod1, newObject: <Pod manifest>}     # Update (old: a pod
                                    # key of the objects, or a manifest)
  - activate: [ns1/pod1]            # Activate
  - delete: ns1/pod1                # Delete
  - flushBackoff: true              # flushBackoffQCompleted
  - flushUnschedulable: true        # flushUnschedulablePodsLeftover
  - expect: {activeQ: [ns1/pod1], backoffQ: [], unschedulablePods: [], inFlight: []}
                                    # activeQ in pop order, the others sorted by name;
                                    # only the lists given are compared; hintCalls:
                                    # how many times the hints ran so far;
                                    # annotations: {pod: {...}} of the queued pods
                                    # (the updated pod is the one queued)
```

Steps name pods ``namespace/name`` of the case's ``objects``. A pod ``failed`` with no
plugins failed with an Error (upstream's ``newQueuedPodInfoForLookup(pod)``).

Further fields (for the rows that need them):

```yaml
check:
  popFromBackoffQ: false            # SchedulerPopFromBackoffQ off (on by default in 1.34)
  podMaxInUnschedulablePodsDuration: 30   # seconds (default 300)
  queueingHintMap: none             # no hint map for the profile at all (upstream's
                                    # NewTestQueue without WithQueueingHintMapPerProfile)
  schedulingGates: true             # the SchedulingGates PreEnqueue plugin runs first
  steps:
  - setPreEnqueue: {preEnqueuePlugin: [foo]}   # the PreEnqueue allowlists change
                                    # (upstream's updatePluginToGateAllPods)
  - failed: {pod: ns/p, asPod: <Pod manifest>}  # put back as this (latest) version of the
                                    # pod, as handleSchedulingFailure reads it from the lister
  - event: {resource: '*', action: All, preCheck: {priorityAtLeast: 2, priorityBelow: 0,
            priorityEven: true, notCalled: true}}   # upstream's PreEnqueueCheck
  - pop: ns/p
    attempts: 2                     # optional: the popped pod's Attempts
    initialAttemptTimestamp: 0      # optional: its InitialAttemptTimestamp (clock seconds)
  - expect: {backoffSeconds: {ns/p: 2},    # backoff expiry - the pod's timestamp
             summary: 'activeQ:1; backoffQ:0; unschedulablePods:2',
             tolerations: {ns/p: [{key: foo, effect: NoSchedule}]}}   # of the queued pod
```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cases_qhint import event_of, object_of

from schedsim.api.core import Pod
from schedsim.api.loading.loader import decode_objects
from schedsim.framework import Framework, Handle, default_profile
from schedsim.framework.events import ClusterEventWithHint, QueueingHint
from schedsim.framework.status import Code, Status
from schedsim.scheduler.clock import LogicalClock
from schedsim.scheduler.queue import SchedulingQueue


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass)."""
    del case
    return None


class _HintError(RuntimeError):
    """What a hint declared ``Error`` raises (upstream's hint returning an error)."""


def _hint(
    answer: str | None, calls: list[int]
) -> Callable[[Pod, object, object], QueueingHint] | None:
    """A constant hint (upstream's queueHintReturnQueue / ...Skip / ...Err) counting its calls
    in ``calls[0]`` (upstream's expectedExecutionCount)."""
    if answer is None or answer == "None":
        return None

    def hint(pod: Pod, old: object, new: object) -> QueueingHint:
        calls[0] += 1
        if answer == "Error":
            raise _HintError(f"hint error for {pod.key}")
        return QueueingHint[answer]

    return hint


def _hints(
    raw: Sequence[Mapping[str, Any]], calls: list[int]
) -> dict[str, list[ClusterEventWithHint]]:
    out: dict[str, list[ClusterEventWithHint]] = {}
    for entry in raw:
        registered = ClusterEventWithHint(event_of(entry["event"]), _hint(entry.get("hint"), calls))
        out.setdefault(entry["plugin"], []).append(registered)
    return out


def _pre_enqueue(
    raw: Mapping[str, Sequence[str]], deny: Mapping[str, Sequence[str]], gates: bool = False
) -> Callable[[Pod], Status] | None:
    """Upstream's test ``preEnqueuePlugin``: a pod passes when it has one of the labels;
    ``denyingPreEnqueuePlugin``: a pod passes when it has none of them. ``raw`` is read at
    each call (``setPreEnqueue`` steps change it). ``gates``: the SchedulingGates plugin
    runs first (a pod with scheduling gates is rejected)."""
    if not raw and not deny and not gates:
        return None

    def run(pod: Pod) -> Status:
        if gates and pod.scheduling_gates:
            return Status(Code.UnschedulableAndUnresolvable, ("gated",), "SchedulingGates")
        for plugin, labels in raw.items():
            if not any(label in pod.labels for label in labels):
                return Status(Code.UnschedulableAndUnresolvable, ("not allowed",), plugin)
        for plugin, labels in deny.items():
            if any(label in pod.labels for label in labels):
                return Status(Code.UnschedulableAndUnresolvable, ("denied",), plugin)
        return Status(Code.Success)

    return run


def _where(queue: SchedulingQueue) -> dict[str, list[str]]:
    unschedulable = {q.key for q in queue.unschedulable_pods()}
    pending = queue.pending_pods()
    active_n = queue.active_len
    active = [q.key for q in pending[:active_n]]
    backoff = sorted(q.key for q in pending[active_n:] if q.key not in unschedulable)
    return {
        "activeQ": active,
        "backoffQ": backoff,
        "unschedulablePods": sorted(unschedulable),
        "inFlight": sorted(queue.in_flight()),
    }


def _pre_check(raw: Mapping[str, Any] | None) -> Callable[[Pod], bool] | None:
    """Upstream's PreEnqueueCheck rows: priority bounds and evenness; ``notCalled``: the
    check must not run (upstream's panicking check)."""
    if raw is None:
        return None

    def check(pod: Pod) -> bool:
        assert not raw.get("notCalled"), f"preCheck called for {pod.key}"
        prio = pod.priority
        if "priorityAtLeast" in raw and not prio >= raw["priorityAtLeast"]:
            return False
        if "priorityBelow" in raw and not prio < raw["priorityBelow"]:
            return False
        return not (raw.get("priorityEven") and prio % 2 != 0)

    return check


def _tolerations(pod: Pod) -> list[dict[str, str]]:
    return [
        {
            k: v
            for k, v in (
                ("key", t.key),
                ("operator", t.operator),
                ("value", t.value),
                ("effect", t.effect),
            )
            if v
        }
        for t in pod.tolerations
    ]


def run(case: dict[str, Any], source: str) -> None:
    """Replay the case's steps on a `SchedulingQueue` and check every ``expect`` step."""
    check = case["check"]
    m = decode_objects(case["objects"], source, api_rules=False)
    pods = {p.key: p for p in m.pods}
    clock = LogicalClock()
    less = Framework(default_profile(), Handle()).queue_sort_less()
    calls = [0]
    hints = _hints(check.get("queueingHints") or [], calls)
    allow = dict(check.get("preEnqueue") or {})
    queue = SchedulingQueue(
        less,
        clock=clock,
        queueing_hints=(
            {}
            if check.get("queueingHintMap") == "none"
            else {p.scheduler_name: hints for p in pods.values()}
        ),
        pre_enqueue=_pre_enqueue(
            allow, check.get("preEnqueueDeny") or {}, bool(check.get("schedulingGates"))
        ),
        pop_from_backoff_q=bool(check.get("popFromBackoffQ", True)),
        **{
            k: float(check[f])
            for k, f in (
                ("pod_initial_backoff_seconds", "podInitialBackoffSeconds"),
                ("pod_max_backoff_seconds", "podMaxBackoffSeconds"),
                ("pod_max_in_unschedulable_pods_duration", "podMaxInUnschedulablePodsDuration"),
            )
            if f in check
        },
    )
    popped = {}
    for i, step in enumerate(check["steps"]):
        where = f"step {i} {step}"
        if "add" in step:
            queue.add(pods[step["add"]])
        elif "pop" in step:
            qpi = queue.pop()
            got = None if qpi is None else qpi.key
            assert got == step["pop"], f"{where}: popped {got}"
            if qpi is not None:
                popped[qpi.key] = qpi
            for field, got_value in (
                ("attempts", None if qpi is None else qpi.attempts),
                ("initialAttemptTimestamp", None if qpi is None else qpi.initial_attempt_timestamp),
            ):
                if field in step:
                    assert got_value == step[field], f"{where}: {field} {got_value}"
            want_plugins = step.get("plugins")
            if want_plugins is not None:
                assert qpi is not None
                got_plugins = {
                    "unschedulablePlugins": sorted(qpi.unschedulable_plugins),
                    "pendingPlugins": sorted(qpi.pending_plugins),
                }
                assert got_plugins == want_plugins, f"{where}: plugins {got_plugins}"
        elif "failed" in step:
            f = step["failed"]
            qpi = popped.pop(f["pod"])
            if "asPod" in f:
                latest = object_of(f["asPod"], source)
                assert isinstance(latest, Pod), where
                qpi.pod = latest
            queue.add_unschedulable_if_not_present(
                qpi, f.get("unschedulablePlugins") or (), f.get("pendingPlugins") or ()
            )
            queue.done(qpi.pod)
        elif "step" in step:
            clock.step(float(step["step"]))
        elif "event" in step:
            e = step["event"]
            queue.move_all_to_active_or_backoff(
                event_of(e),
                object_of(e.get("oldObject"), source),
                object_of(e.get("newObject"), source),
                _pre_check(e.get("preCheck")),
            )
        elif "assignedPodAdded" in step:
            added = object_of(step["assignedPodAdded"], source)
            assert isinstance(added, Pod), f"{where}: not a pod"
            queue.assigned_pod_added(added)
        elif "assignedPodUpdated" in step:
            u = step["assignedPodUpdated"]
            old, new = object_of(u.get("oldObject"), source), object_of(u["newObject"], source)
            assert isinstance(new, Pod) and (old is None or isinstance(old, Pod)), where
            queue.assigned_pod_updated(old or new, new, event_of(u["event"]))
        elif "update" in step:
            u = step["update"]
            raw_old = u.get("oldObject")
            old_pod = pods[raw_old] if isinstance(raw_old, str) else object_of(raw_old, source)
            new_pod = object_of(u["newObject"], source)
            if isinstance(u["newObject"], str):
                new_pod = pods[u["newObject"]]
            assert isinstance(new_pod, Pod) and (old_pod is None or isinstance(old_pod, Pod))
            queue.update(old_pod, new_pod)
        elif "activate" in step:
            queue.activate([pods[k] for k in step["activate"]])
        elif "delete" in step:
            queue.delete(pods[step["delete"]])
        elif "flushBackoff" in step:
            queue.flush_backoff_completed()
        elif "flushUnschedulable" in step:
            queue.flush_unschedulable_pods_left_over()
        elif "setPreEnqueue" in step:
            allow.clear()
            allow.update(step["setPreEnqueue"])
        elif "expect" in step:
            got_where: dict[str, Any] = {**_where(queue), "hintCalls": calls[0]}
            got_where["annotations"] = {
                q.key: dict(q.pod.annotations) for q in queue.pending_pods()
            }
            got_where["summary"] = queue.summary()
            got_where["backoffSeconds"] = {
                q.key: q.backoff_expiration - q.timestamp
                for q in queue.pending_pods()
                if q.key in (step["expect"].get("backoffSeconds") or {})
            }
            got_where["tolerations"] = {
                q.key: _tolerations(q.pod)
                for q in queue.pending_pods()
                if q.key in (step["expect"].get("tolerations") or {})
            }
            for q, want in step["expect"].items():
                assert got_where[q] == want, f"{where}: {q} {got_where[q]}, want {want}"
        else:
            raise AssertionError(f"{where}: unknown step")
