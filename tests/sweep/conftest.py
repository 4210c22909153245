"""A 12-scenario sweep: 3 node-group variants x 2 scoring strategies x 2 commands, written
to a temporary directory (shared by the sweep tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {pool: general}}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {pool: general}}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
""" + "".join(
    f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  priority: {priority}
  containers:
  - name: c
    image: busybox
    resources: {{requests: {{cpu: "{cpu}", memory: 1Gi}}}}
"""
    for name, priority, cpu in [
        ("small-1", 100, 2),
        ("small-2", 100, 2),
        ("whole-node", 50, 4),
        ("extra-1", 10, 3),
        ("extra-2", 10, 3),
        ("extra-3", 10, 3),
    ]
)


def groups(max_size: int, cpu: int) -> str:
    """A node-groups file: the two general nodes, new nodes of ``cpu`` cores, up to
    ``max_size`` nodes."""
    return f"""
nodeGroups:
- name: general
  minSize: 0
  maxSize: {max_size}
  nodeSelector: {{pool: general}}
  template:
    node:
      metadata: {{name: general-template, labels: {{pool: general}}}}
      status: {{allocatable: {{cpu: "{cpu}", memory: 16Gi, pods: "110"}}}}
"""


MOST_ALLOCATED = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
"""

SPEC = """
kind: Sweep
cluster: [cluster.yaml]
commands: [simulate, scale-up]
axes:
  nodeGroups: {capped: capped.yaml, roomy: roomy.yaml, large: large.yaml}
  schedulerConfig: {spread: null, packed: packed.yaml}
"""


@pytest.fixture
def sweep_dir(tmp_path: Path) -> Path:
    """The spec (``sweep.yaml``) and its files."""
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "capped.yaml").write_text(groups(3, 4))
    (tmp_path / "roomy.yaml").write_text(groups(10, 4))
    (tmp_path / "large.yaml").write_text(groups(10, 8))
    (tmp_path / "packed.yaml").write_text(MOST_ALLOCATED)
    (tmp_path / "sweep.yaml").write_text(SPEC)
    return tmp_path
