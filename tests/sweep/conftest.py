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


NODES = CLUSTER.split("---\napiVersion: v1\nkind: Pod")[0]
"""The two 4-core ``general`` nodes of `CLUSTER`, without its pods."""


def trace(pods: list[tuple[str, int, int, str]]) -> str:
    """A manifest trace: (name, cpu cores, seconds after the first arrival, duration)."""
    return "".join(
        f"""---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default
  creationTimestamp: "2025-01-01T00:{at // 60:02d}:{at % 60:02d}Z"
  annotations: {{schedsim.io/duration: {duration}}}
spec:
  containers:
  - {{name: c, image: busybox, resources: {{requests: {{cpu: "{cpu}", memory: 1Gi}}}}}}
"""
        for name, cpu, at, duration in pods
    )


BURST = trace([(f"burst-{i}", 3, 0, "20m") for i in range(6)])
"""Six 3-core pods at t=0 for 20 minutes: two fit the nodes, four need new ones."""

STEADY = trace([("steady-1", 1, 0, "20m"), ("steady-2", 1, 30, "20m")])
"""Two 1-core pods: the nodes take them, no scale-up."""

REPLAY_SPEC = """
kind: Sweep
cluster: [nodes.yaml]
commands: [simulate, replay]
axes:
  traces: {burst: burst.yaml, steady: steady.yaml}
  nodeGroups: {capped: capped.yaml, roomy: roomy.yaml, large: large.yaml}
options: {until: 1h}
"""
"""12 scenarios: 2 traces x 3 node-group variants x simulate and replay."""


def priced(text: str, price: float) -> str:
    """A node-groups file with a price per node-hour."""
    return text.replace("  maxSize:", f"  price: {price}\n  maxSize:")


@pytest.fixture
def replay_dir(sweep_dir: Path) -> Path:
    """`sweep_dir` plus ``replay.yaml`` (`REPLAY_SPEC`), its nodes and traces; node groups
    priced 1 per node-hour (4-core nodes), 2 (8-core)."""
    (sweep_dir / "nodes.yaml").write_text(NODES)
    (sweep_dir / "burst.yaml").write_text(BURST)
    (sweep_dir / "steady.yaml").write_text(STEADY)
    (sweep_dir / "capped.yaml").write_text(priced(groups(3, 4), 1.0))
    (sweep_dir / "roomy.yaml").write_text(priced(groups(10, 4), 1.0))
    (sweep_dir / "large.yaml").write_text(priced(groups(10, 8), 2.0))
    (sweep_dir / "replay.yaml").write_text(REPLAY_SPEC)
    return sweep_dir
