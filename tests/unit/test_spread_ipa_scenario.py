"""The issue's scenario through the library entry point (`schedsim.engine`): zone spread and
hostname anti-affinity are enforced as kube-scheduler 1.34 enforces them (PodTopologySpread
Filter: skew = matching pods in the zone + 1 - global minimum must stay <= maxSkew;
InterPodAffinity Filter: "node(s) didn't match pod anti-affinity rules")."""

from __future__ import annotations

from collections import Counter

from schedsim.engine import Cluster, Engine

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _node(name: str, zone: str, extra: str = "") -> str:
    return f"""
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{{ZONE}: {zone}, {HOST}: {name}{extra}}}
status:
  allocatable: {{cpu: "8", memory: 16Gi, pods: "110"}}
---"""


def _pod(name: str, app: str, spec: str) -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {{app: {app}}}}}
spec:
  containers: [{{name: c, resources: {{requests: {{cpu: 100m}}}}}}]
{spec}
---"""


SPREAD = f"""  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: {ZONE}
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {{matchLabels: {{app: web}}}}"""

ANTI = f"""  nodeSelector: {{pool: db}}
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: {HOST}
        labelSelector: {{matchLabels: {{app: db}}}}"""


def test_zone_spread_and_hostname_anti_affinity() -> None:
    """Zone a has four nodes, b and c one each: six web pods (zone spread, maxSkew 1) go two
    per zone; three db pods with hostname anti-affinity, allowed on two nodes: two are placed,
    the third is pending with the anti-affinity reason."""
    nodes = [_node(f"a{i}", "a", ", pool: db" if i < 2 else "") for i in range(4)]
    nodes += [_node("b0", "b"), _node("c0", "c")]
    pods = [_pod(f"web-{i}", "web", SPREAD) for i in range(6)]
    pods += [_pod(f"db-{i}", "db", ANTI) for i in range(3)]
    cluster = Cluster.from_text("".join(nodes + pods))
    result = Engine().simulate(cluster)
    placed = {o.pod.name: o.node_name for o in result.outcomes}
    zones = Counter((placed[f"web-{i}"] or "?")[0] for i in range(6))
    assert zones == {"a": 2, "b": 2, "c": 2}
    db = [o for o in result.outcomes if o.pod.name.startswith("db-")]
    assert sorted(o.node_name or "" for o in db) == ["", "a0", "a1"]
    pending = next(o for o in db if o.node_name is None)
    assert "node(s) didn't match pod anti-affinity rules" in pending.reasons
    assert "InterPodAffinity" not in result.unchecked
    assert "PodTopologySpread" not in result.unchecked
