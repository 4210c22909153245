"""The replay's Job controller (fresh-user report: a Job with completions 5, parallelism 2
stopped after its first 2 pods).

Upstream Job controller (``pkg/controller/job``, ``syncJob`` / ``manageJob``; documented in
"Jobs": "Parallel Jobs with a fixed completion count"): it keeps ``min(parallelism,
completions - succeeded)`` pods active and creates new ones as pods succeed, until
``completions`` pods have succeeded; Indexed, each index 0..completions-1 completes once;
a work queue (no ``completions``) creates no more pods once one has succeeded.
"""

from __future__ import annotations

from schedsim.engine import Cluster
from schedsim.replay import Replay, manifest_trace
from schedsim.replay.loop import job_pod_failure_backoff

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
"""


def _job(spec: str, status: str = "") -> str:
    return (
        NODE
        + f"""\
apiVersion: batch/v1
kind: Job
metadata: {{name: pi, namespace: default}}
spec:
{spec}
  template:
    metadata: {{annotations: {{schedsim.io/duration: 2m}}}}
    spec:
      restartPolicy: Never
      containers: [{{name: pi, image: perl, resources: {{requests: {{cpu: "1"}}}}}}]
{status}"""
    )


def _replay(text: str) -> Replay:
    return Replay(manifest_trace(Cluster.from_text(text, "job.yaml")))


def _running(r: Replay) -> list[int]:
    return [s.running for s in r.metrics().samples]


def test_non_indexed_job_runs_until_completions() -> None:
    """The tester's repro (job-replay.yaml): 5 completions, 2 at a time, 2 minutes each:
    waves of 2, 2 and 1 pods at t = 0, 120, 240; the replay ends at 360 with 5 completed
    pods, never more than 2 running."""
    r = _replay(_job("  completions: 5\n  parallelism: 2"))
    m = r.run()
    assert m.completed == 5 and m.arrivals == 5
    assert m.end == 360.0
    assert max(_running(r)) == 2
    assert len(r._pods) == 5  # five distinct pods


def test_indexed_job_completes_each_index_once() -> None:
    """Indexed, 3 completions, parallelism 2: indexes 0 and 1 at t = 0, index 2 at 120."""
    r = _replay(_job("  completions: 3\n  parallelism: 2\n  completionMode: Indexed"))
    m = r.run()
    assert m.completed == 3 and m.end == 240.0
    indexes = sorted(
        tp.pod.annotations["batch.kubernetes.io/job-completion-index"] for tp in r._pods.values()
    )
    assert indexes == ["0", "1", "2"]


def test_status_succeeded_counts_toward_completions() -> None:
    """status.succeeded 2 of 5: 3 more pods, 2 then 1 (ends at 240)."""
    r = _replay(_job("  completions: 5\n  parallelism: 2", "status: {succeeded: 2}\n"))
    m = r.run()
    assert m.completed == 3 and m.end == 240.0


def test_work_queue_job_makes_no_pod_after_one_succeeds() -> None:
    """No completions (a work queue): the parallelism's 2 pods run once; none follows."""
    r = _replay(_job("  parallelism: 2"))
    m = r.run()
    assert m.completed == 2 and m.end == 120.0


def test_preempted_job_pod_is_replaced() -> None:
    """A Job pod that DefaultPreemption deletes is a failed pod; the controller creates a
    replacement (the Job still wants one active pod). pi-... (2 CPUs, 10m) runs from 0 on the
    2-CPU node; high (priority 1000) arrives at 60, preempts it, runs 1m; the replacement
    binds at 120 and completes at 720."""
    text = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: anchor, creationTimestamp: "2025-01-01T00:00:00Z",
  annotations: {schedsim.io/duration: 1s}}
spec: {containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata: {name: high, creationTimestamp: "2025-01-01T00:01:00Z",
  annotations: {schedsim.io/duration: 1m}}
spec: {priority: 1000, containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  completions: 1
  template:
    metadata: {annotations: {schedsim.io/duration: 10m}}
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: perl, resources: {requests: {cpu: "2"}}}]
"""
    r = _replay(text)
    m = r.run()
    assert m.preempted == 1
    assert m.completed == 3 and m.end == 720.0
    assert sum(1 for k in r._pods if k.startswith("default/pi-")) == 2


def _preempting_trace(
    job_spec: str, job_cpu: str, highs: list[tuple[str, str]], high_cpu: str = "2"
) -> str:
    """A 2-CPU node, a Job of ``job_cpu``-CPU 10m pods, and high-priority 1m pods of
    ``high_cpu`` CPUs arriving at the given offsets (``highs``: name, ``HH:MM:SS``) that
    preempt them."""
    text = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: anchor, creationTimestamp: "2025-01-01T00:00:00Z",
  annotations: {schedsim.io/duration: 1s}}
spec: {containers: [{name: c, image: x}]}
---
"""
    requests = f'{{requests: {{cpu: "{high_cpu}"}}}}'
    for name, at in highs:
        text += f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, creationTimestamp: "2025-01-01T{at}Z",
  annotations: {{schedsim.io/duration: 1m}}}}
spec: {{priority: 1000, containers: [{{name: c, image: x, resources: {requests}}}]}}
---
"""
    return (
        text
        + f"""\
apiVersion: batch/v1
kind: Job
metadata: {{name: pi, namespace: default}}
spec:
{job_spec}
  template:
    metadata: {{annotations: {{schedsim.io/duration: 10m}}}}
    spec:
      restartPolicy: Never
      containers: [{{name: pi, image: perl, resources: {{requests: {{cpu: "{job_cpu}"}}}}}}]
"""
    )


def _job_pods(r: Replay) -> list[str]:
    return sorted(k for k in r._pods if k.startswith("default/pi-"))


def test_backoff_limit_fails_the_job_after_one_failure_too_many() -> None:
    """backoffLimit 1 (Kubernetes docs, "Pod backoff failure policy": the Job is marked
    failed once its failed pods exceed it; upstream syncJob: ``jobCtx.failed >
    *job.Spec.BackoffLimit`` -> BackoffLimitExceeded, "Job has reached the specified backoff
    limit"). A pod deleted by preemption is a failed pod (``isPodFailed``: deleted and not
    Succeeded). high-1 at 60 preempts pi's first pod (1 failure, tolerated: a replacement
    binds at 120 when high-1 ends); high-2 at 180 preempts the replacement (2 failures > 1):
    the Job is Failed and makes no third pod; high-3 at 300 finds the node free."""
    text = _preempting_trace(
        "  completions: 1\n  backoffLimit: 1",
        "2",
        [("high-1", "00:01:00"), ("high-2", "00:03:00"), ("high-3", "00:05:00")],
    )
    r = _replay(text)
    m = r.run()
    assert m.preempted == 2
    assert len(_job_pods(r)) == 2
    assert r.job_failures == {
        "default/pi": "BackoffLimitExceeded: Job has reached the specified backoff limit"
    }
    assert any(
        w.startswith("Job default/pi: Failed at 180s: BackoffLimitExceeded") for w in r.warnings
    )
    assert not m.unschedulable
    assert m.completed == 4  # anchor and the three high pods; no Job pod ran its 10m
    # the replay ends with high-3 (the stale completion of the preempted replacement, due
    # at 720, is no instant of the replay)
    assert m.end == 360.0


def test_default_backoff_limit_six_tolerates_two_failures() -> None:
    """Without backoffLimit (defaulted to 6 by the API server, SetDefaults_Job) the same two
    preemptions are tolerated: a third pod binds at 240 and completes at 840. Each
    replacement waits for the pod failure backoff (Kubernetes docs, "Pod backoff failure
    policy": 10s, 20s, 40s ... ; upstream DefaultJobPodFailureBackOff 10s): created at 70
    (failure at 60) and 200 (second failure since the last success, at 180)."""
    text = _preempting_trace(
        "  completions: 1", "2", [("high-1", "00:01:00"), ("high-2", "00:03:00")]
    )
    r = _replay(text)
    m = r.run()
    assert m.preempted == 2 and not r.job_failures
    assert len(_job_pods(r)) == 3
    assert sorted(r._pods[k].arrival for k in _job_pods(r)) == [0.0, 70.0, 200.0]
    assert m.end == 840.0


def test_job_pod_failure_backoff_doubles_up_to_ten_minutes() -> None:
    """getRemainingTime: 10s x 2^(failures - 1), capped at MaxJobPodFailureBackOff (10m)."""
    assert [job_pod_failure_backoff(n) for n in range(9)] == [
        0.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 600.0, 600.0,
    ]  # fmt: skip


def test_status_failed_counts_and_a_failed_job_deletes_its_active_pods() -> None:
    """status.failed 1 with backoffLimit 1: the first preemption is one failure too many.
    Completions 2, parallelism 2, 1-CPU pods: both run from 0; high-1 (1 CPU) at 60 preempts
    one of them; the Job fails at 60 and its controller deletes the other active pod
    (``deleteActivePods``): from 60 only high-1 runs, and no pod of the Job is left running
    or pending."""
    text = _preempting_trace(
        "  completions: 2\n  parallelism: 2\n  backoffLimit: 1",
        "1",
        [("high-1", "00:01:00")],
        high_cpu="1",
    )
    text += "status: {failed: 1}\n"
    r = _replay(text)
    m = r.run()
    assert m.preempted == 1
    assert set(r.job_failures) == {"default/pi"}
    assert any(
        "(2 failed pod(s), backoffLimit 1); its 1 active pod(s) deleted" in w for w in r.warnings
    )
    assert len(_job_pods(r)) == 2
    assert not any(k.startswith("default/pi-") for k in r.bound)
    assert not m.unschedulable
    by_time = {s.time: s for s in m.samples}
    assert by_time[60.0].running == 1 and by_time[60.0].cpu_requested == 1000
    assert m.completed == 2  # anchor and high-1
    assert m.end == 120.0  # not the deleted pods' would-be completions at 600


def test_backoff_limit_per_index_is_named_not_silently_ignored() -> None:
    """backoffLimitPerIndex (Indexed) is not modelled: the replay says so; backoffLimit is
    then defaulted to math.MaxInt32, as SetDefaults_Job does, so the Job never fails on the
    global limit."""
    text = _job("  completions: 2\n  completionMode: Indexed\n  backoffLimitPerIndex: 1")
    cluster = Cluster.from_text(text, "job.yaml")
    assert [j.backoff_limit for j in cluster.jobs] == [2**31 - 1]
    r = Replay(manifest_trace(cluster))
    assert any("spec.backoffLimitPerIndex is not counted" in w for w in r.warnings)


def test_active_deadline_is_named_not_silently_ignored() -> None:
    """spec.activeDeadlineSeconds (the Job controller fails the Job with DeadlineExceeded
    once it has been active that long, job_controller.go pastActiveDeadline) is not
    modelled: the replay says so, naming the Job and the field."""
    cluster = Cluster.from_text(_job("  activeDeadlineSeconds: 600"), "job.yaml")
    r = Replay(manifest_trace(cluster))
    assert any(
        w.startswith("Job default/pi: spec.activeDeadlineSeconds is not applied")
        for w in r.warnings
    )
    plain = Replay(manifest_trace(Cluster.from_text(_job(""), "job.yaml")))
    assert not any("activeDeadlineSeconds" in w for w in plain.warnings)


def test_a_preempted_pods_stale_completion_does_not_extend_the_replay() -> None:
    """A bare pod preempted at 60 (no controller: deleted for good) was due to complete at
    600: the replay ends at 120 with high's completion, and the node's hours stop there."""
    text = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low, creationTimestamp: "2025-01-01T00:00:00Z",
  annotations: {schedsim.io/duration: 10m}}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: high, creationTimestamp: "2025-01-01T00:01:00Z",
  annotations: {schedsim.io/duration: 1m}}
spec: {priority: 1000, containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}
"""
    m = _replay(text).run()
    assert m.preempted == 1 and m.completed == 1
    assert m.end == 120.0
    assert [s.time for s in m.samples][-1] == 120.0
