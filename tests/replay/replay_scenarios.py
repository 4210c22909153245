"""Small traces the replay tests write themselves (no file from elsewhere)."""

from __future__ import annotations

BASE_NODE = """\
apiVersion: v1
kind: Node
metadata: {name: base-1, labels: {pool: base}}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: steady
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: web, controller: true}]
spec:
  nodeName: base-1
  containers: [{name: c, image: x, resources: {requests: {cpu: "1", memory: 1Gi}}}]
"""

BURST_POD = """\
---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  creationTimestamp: "{created}"
  annotations: {{schedsim.io/duration: {duration}}}
  ownerReferences: [{{apiVersion: batch/v1, kind: Job, name: burst, uid: burst, controller: true}}]
spec:
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}", memory: 1Gi}}}}}}]
"""

NODE_GROUPS = """\
nodeGroups:
- name: base
  minSize: 1
  maxSize: 1
  nodeSelector: {pool: base}
  price: 0.2
  template:
    node:
      metadata: {name: base-template, labels: {pool: base}}
      status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
- name: burst
  maxSize: 5
  price: 0.5
  template:
    node:
      metadata: {name: burst, labels: {pool: burst}}
      status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
"""


def burst_trace(
    pods: int = 6, at: str = "2025-01-01T00:01:00Z", duration: str = "5m", cpu: str = "2"
) -> str:
    """One 4-CPU base node running a 1-CPU pod, and ``pods`` pods of ``cpu`` CPUs arriving at
    ``at`` (a minute after t = 0, which an earlier small pod marks) for ``duration``."""
    first = BURST_POD.format(
        name="first", created="2025-01-01T00:00:00Z", duration="30s", cpu="100m"
    )
    burst = "".join(
        BURST_POD.format(name=f"burst-{i}", created=at, duration=duration, cpu=cpu)
        for i in range(pods)
    )
    return BASE_NODE + first + burst


TAIL_POD = """\
---
apiVersion: v1
kind: Pod
metadata:
  name: tail
  creationTimestamp: "{created}"
  ownerReferences:
  - {{apiVersion: apps/v1, kind: ReplicaSet, name: tail, uid: tail, controller: true}}
spec:
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: 500m, memory: 256Mi}}}}}}]
"""
