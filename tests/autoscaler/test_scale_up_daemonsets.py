"""Scale-up counts the cluster's DaemonSet pods on template nodes, as the Cluster
Autoscaler does (``TemplateNodeInfoFromNodeGroupTemplate`` adds ``GetDaemonSetPodsForNode``'s
pods for every DaemonSet the template's pods do not already run)."""

from __future__ import annotations

from sim_loaded import loaded

from schedsim.api.loading.loader import load_text
from schedsim.autoscaler.nodegroups import NodeGroup, NodeTemplate
from schedsim.autoscaler.sanitize import template_node_info
from schedsim.autoscaler.scaleup import scale_up
from schedsim.framework import Framework, Handle, default_profile

CLUSTER = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: 600m}}}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: gpu-only, namespace: kube-system}
spec:
  selector: {matchLabels: {app: gpu}}
  template:
    metadata: {labels: {app: gpu}}
    spec:
      nodeSelector: {gpu: "true"}
      containers: [{name: c, resources: {requests: {cpu: 100m}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 3
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: 300m}}}]
"""

TEMPLATE = load_text(
    "apiVersion: v1\nkind: Node\nmetadata: {name: tmpl, labels: {group: g}}\n"
    'status: {allocatable: {cpu: "1", memory: 1Gi, pods: "110"}}\n',
    "template",
).nodes[0]


def _group() -> NodeGroup:
    return NodeGroup("g", 0, 10, NodeTemplate(TEMPLATE), node_selector={"group": "g"})


def test_template_node_runs_the_daemonsets_that_target_it() -> None:
    """Only DaemonSets whose selector/affinity/taints admit the template node add a pod,
    bound to the template node and controlled by its DaemonSet."""
    m = load_text(CLUSTER, "c.yaml")
    info = template_node_info(_group().template, daemon_sets=m.daemon_sets)
    pods = [p.pod for p in info.pods]
    assert [(p.owner_references[0].name, p.node_name) for p in pods] == [("agent", "tmpl")]


def test_daemonset_pods_take_room_on_every_new_node() -> None:
    """Three 300m pods fit one empty 1-CPU template node, but with the 600m DaemonSet pod
    on each new node only one fits per node: three nodes (CA binpacking on template node
    infos that include DaemonSet pods)."""
    m = load_text(CLUSTER, "c.yaml")
    fw = Framework(default_profile(), Handle())
    without = scale_up(*loaded([], m.pods, fw), [_group()])
    assert [o.node_count for o in without.options] == [1]
    with_ds = scale_up(*loaded([], m.pods, fw), [_group()], daemon_sets=m.daemon_sets)
    assert [o.node_count for o in with_ds.options] == [3]
