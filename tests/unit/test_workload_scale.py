"""`schedsim.api.apps.workload_scale`: every controller's size times a factor before expansion,
as ``kubectl scale`` of each would (replicas; a Job's parallelism and completions)."""

from __future__ import annotations

import pytest

from schedsim.api.loading.loader import load_text

TEXT = """\
apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: default}
spec:
  parallelism: 2
  completions: 5
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: i}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: lone, namespace: default}
spec: {containers: [{name: c, image: i}]}
"""


@pytest.mark.parametrize(
    ("factor", "job_pods", "db_pods"),
    # 2 x 1.5 = 3 active of 5 x 1.5 -> 8 completions; 3 x 1.5 = 4.5 -> 5 (half up)
    [(1.0, 2, 3), (1.5, 3, 5), (0.5, 1, 2), (0.0, 0, 0)],
)
def test_controllers_scaled_before_expansion(factor: float, job_pods: int, db_pods: int) -> None:
    m = load_text(TEXT, "w.yaml", workload_scale=factor)
    names = [p.name for p in m.pods]
    assert sum(n.startswith("batch-") for n in names) == job_pods
    assert sum(n.startswith("db-") for n in names) == db_pods
    assert "lone" in names  # pods the input lists itself are not scaled
    assert m.jobs[0].completions == {1.0: 5, 1.5: 8, 0.5: 3, 0.0: 0}[factor]


def test_bad_factor() -> None:
    with pytest.raises(ValueError, match="finite number >= 0"):
        load_text(TEXT, "w.yaml", workload_scale=-1)
