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
