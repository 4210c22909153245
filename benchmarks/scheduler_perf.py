"""kube-scheduler's scheduler_perf workloads, generated as manifests and run through
``schedsim simulate`` (issue 17 item 6).

Each generator follows a test case of kubernetes ``test/integration/scheduler_perf``
(``misc/``, ``dra/`` and ``affinity/`` performance-config.yaml, and the templates they name),
with the parameters of its ``performance`` workload:

- ``SchedulingBasic/5000Nodes_10000Pods``: node-default (4 cpu, 32Gi, 110 pods), 1,000 init
  pods then 10,000 measured pods of pod-default (100m / 500Mi, one container port 80).
  Upstream threshold 680 pods/s.
- ``SchedulingWithResourceClaimTemplate/5000pods_500nodes``: 500 node-with-dra-test-driver
  nodes, each with the slice createResourceDriver publishes (10 devices,
  ``maxClaimsPerNode``), DeviceClass ``test-class`` (``device.driver ==
  "test-driver.cdi.k8s.io"``), ResourceClaimTemplate ``test-claim-template`` (one request of
  the class) in namespaces ``init`` and ``test``, 2,500 + 2,500 pods of
  pod-with-claim-template. Upstream threshold 40 pods/s ("typically above 51").
- ``SteadyStateClusterResourceClaimTemplatePartitionable/2000pods_100nodes``: 100 nodes
  labelled ``node-with-dra=true``, 2,000 resourceslice-partitionable slices (shared counters,
  six devices each), 2,000 pods of pod-with-claim-template whose template asks for two
  devices with ``matchAttribute: dra.example.com/slice`` (resourceclaimtemplate-for-two-
  devices). Upstream runs it in steady state (pods deleted as they land) with 2,000
  pre-allocated claims (resourceclaim-with-selector); here the claims are not pre-allocated
  and the pods stay, so it measures the first fill. No threshold upstream (not a
  ``performance`` workload).
- ``SteadyStateClusterResourceClaimTemplate/{empty,half,full}_500nodes`` (`STEADY_STATE`,
  run by `steady_state` in ``--measured`` mode only): the claim-template setup at 500 nodes
  with 0, 2,500 or 4,990 of the 5,000 devices held by allocated claims (allocResourceClaims),
  then pods kept ten in flight: each round schedules ten pods and deletes the bound ones with
  their claims (``--rounds``, default 100: 1,000 measured pods; upstream runs 10 s). Upstream
  thresholds 64, 70 and 60 pods/s.
- ``SteadyStateClusterResourceClaimTemplateFirstAvailable`` (prioritized list): as
  SchedulingWithResourceClaimTemplate with resourceclaimtemplate-first-available (subrequest
  ``sub-0`` of a class that does not exist, ``sub-1`` of ``test-class``), 500 nodes and 2,500
  pods. Upstream has only a ``fast`` (integration-test) workload, no threshold. Every pod
  fails here, as upstream's allocator does (``validateDeviceRequest`` refuses a subrequest
  naming a DeviceClass that does not exist: "could not retrieve device class"), so this row
  measures the rejection path.
- ``TopologySpreading``-shaped: 5,000 nodes labelled with three zones, 5,000 pod-default init
  pods, then 5,000 pods of pod-with-topology-spreading (zone constraint, maxSkew 5,
  DoNotSchedule, selector ``color: blue``). Upstream threshold: not looked up here.

- ``SchedulingInTreePVs/5000Nodes_2000Pods``, ``SchedulingMigratedInTreePVs/5000Nodes_5000Pods``,
  ``SchedulingCSIPVs/5000Nodes_5000Pods``: 5,000 nodes, 5,000 init pods and 2,000 / 5,000
  measured pod-default pods, each with its own PVC bound to its own PV (pv-aws.yaml, an
  in-tree AWS EBS volume; pv-csi.yaml, ``ebs.csi.aws.com``); for the migrated and CSI ones
  the nodes allocate 39 ``attachable-volumes-csi-ebs.csi.aws.com`` and each has a CSINode
  with that driver's count 39 (the migrated one annotated with the in-tree plugin). Upstream
  thresholds 90, 35 and 48 pods/s (kubernetes PR 126871, which set them; the stored diff
  names the lines, not the workloads, so the mapping is by their order in the file).

- ``PreemptionBasic/1000Nodes``: 1,000 nodes, 4,000 running pod-low-priority pods (bound),
  1,000 pending pod-high-priority pods that each preempt three (no threshold upstream: a
  ``performance, short`` workload). PreemptionAsync (preemptors created at 5/s while other
  pods are measured) has no equivalent without time.

Pods per second here = all pending pods (init + measured, scheduled in input order) divided
by the whole ``schedsim simulate FILE -o json`` (read, parse, decode, schedule, write; in
process, wall clock), best of ``--repeat``. Upstream measures the measured pods only,
through an API server; the numbers are side by side, not comparable one to one.

Run: ``python benchmarks/scheduler_perf.py [--only NAME] [--repeat N] [--scale F]
[--placement first-fit]`` (``--scale 0.1`` runs a tenth of every workload, for development;
the default placement is kube-scheduler's, as ``simulate``'s). ``--growth A,B`` runs each
workload at scales A and B alternately and prints the CPU-time ratio (issue 17's
partitionable target: ``--only Partitionable/2000pods_100nodes --growth 0.05,0.2``, 100
slices and pods on 5 nodes vs 400 on 20).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

DRIVER = "test-driver.cdi.k8s.io"
PAUSE = "registry.k8s.io/pause:3.10.1"

Obj = dict[str, Any]


def node(name: str, labels: dict[str, str] | None = None) -> Obj:
    """node-default.yaml / node-with-dra-test-driver.yaml (capacity only: the API server
    defaults allocatable to it)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {},
        "status": {
            "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
            "conditions": [{"status": "True", "type": "Ready"}],
            "phase": "Running",
        },
    }


def pod_default(name: str, namespace: str, extra_labels: dict[str, str] | None = None) -> Obj:
    """pod-default.yaml (100m / 500Mi requests and limits, container port 80)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(extra_labels or {})},
        "spec": {
            "containers": [
                {
                    "image": PAUSE,
                    "name": "pause",
                    "ports": [{"containerPort": 80}],
                    "resources": {
                        "limits": {"cpu": "100m", "memory": "500Mi"},
                        "requests": {"cpu": "100m", "memory": "500Mi"},
                    },
                }
            ]
        },
    }


def pod_with_claim_template(name: str, namespace: str) -> Obj:
    """pod-with-claim-template.yaml."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "containers": [
                {"image": PAUSE, "name": "pause", "resources": {"claims": [{"name": "resource"}]}}
            ],
            "resourceClaims": [
                {"name": "resource", "resourceClaimTemplateName": "test-claim-template"}
            ],
        },
    }


def device_class() -> Obj:
    """deviceclass.yaml."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "test-class"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }


def claim_template(namespace: str, devices: Obj) -> Obj:
    """A ResourceClaimTemplate ``test-claim-template`` with ``spec.spec.devices``."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "test-claim-template", "namespace": namespace},
        "spec": {"spec": {"devices": devices}},
    }


ONE_DEVICE = {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "test-class"}}]}
"""resourceclaimtemplate.yaml (numRequests 1, no selectors or constraints)."""

TWO_DEVICES = {
    "requests": [{"name": "req-0", "exactly": {"deviceClassName": "test-class", "count": 2}}],
    "constraints": [{"requests": ["req-0"], "matchAttribute": "dra.example.com/slice"}],
}
"""resourceclaimtemplate-for-two-devices.yaml."""

FIRST_AVAILABLE = {
    "requests": [
        {
            "name": "req-0",
            "firstAvailable": [
                {"name": "sub-0", "deviceClassName": "no-such-class"},
                {"name": "sub-1", "deviceClassName": "test-class"},
            ],
        }
    ]
}
"""resourceclaimtemplate-first-available.yaml."""


def driver_slice(node_name: str, devices: int) -> Obj:
    """The node-local slice createResourceDriver publishes for a node: pool and slice named
    after the node, ``devices`` devices ``instance-<i>``."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"instance-{i}"} for i in range(devices)],
        },
    }


def partitionable_slice(index: int) -> Obj:
    """resourceslice-partitionable.yaml: four shared counters, two devices consuming two of
    them and four consuming one, all attributed with the slice index."""

    def device(name: str, preallocate: bool, value: str, counters: list[str]) -> Obj:
        return {
            "name": name,
            "attributes": {
                "preallocate": {"bool": preallocate},
                "dra.example.com/slice": {"int": index},
            },
            "capacity": {"counters": {"value": value}},
            "consumesCounters": [
                {"counterSet": "counter-set", "counters": {c: {"value": "1"} for c in counters}}
            ],
        }

    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"resourceslice-{index}"},
        "spec": {
            "pool": {"name": f"resourceslice-{index}", "generation": 1, "resourceSliceCount": 1},
            "driver": DRIVER,
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "node-with-dra", "operator": "In", "values": ["true"]}
                        ]
                    }
                ]
            },
            "sharedCounters": [
                {
                    "name": "counter-set",
                    "counters": {f"counter{i}": {"value": "1"} for i in range(1, 5)},
                }
            ],
            "devices": [
                device("device-2-counters-1", True, "2", ["counter1", "counter2"]),
                device("device-2-counters-2", False, "2", ["counter3", "counter4"]),
                *(
                    device(f"device-1-counter-{i}", False, "1", [f"counter{i}"])
                    for i in range(1, 5)
                ),
            ],
        },
    }


def scheduling_basic(scale: float) -> Iterator[Obj]:
    """SchedulingBasic/5000Nodes_10000Pods."""
    for i in range(int(5000 * scale)):
        yield node(f"scheduler-perf-{i}")
    for i in range(int(1000 * scale)):
        yield pod_default(f"init-pod-{i}", "namespace-1")
    for i in range(int(10000 * scale)):
        yield pod_default(f"pod-{i}", "namespace-2")


def claim_template_workload(scale: float, devices: Obj = ONE_DEVICE) -> Iterator[Obj]:
    """SchedulingWithResourceClaimTemplate/5000pods_500nodes (``devices``: the template's
    requests, for the prioritized-list variant)."""
    nodes = int(500 * scale)
    for i in range(nodes):
        yield node(f"scheduler-perf-dra-{i}")
    for i in range(nodes):
        yield driver_slice(f"scheduler-perf-dra-{i}", 10)
    yield device_class()
    for ns in ("init", "test"):
        yield claim_template(ns, devices)
    for ns in ("init", "test"):
        for i in range(int(2500 * scale)):
            yield pod_with_claim_template(f"test-dra-{i}", ns)


def partitionable(scale: float) -> Iterator[Obj]:
    """SteadyStateClusterResourceClaimTemplatePartitionable/2000pods_100nodes (first fill)."""
    for i in range(int(100 * scale)):
        yield node(f"scheduler-perf-dra-{i}", {"node-with-dra": "true"})
    for i in range(int(2000 * scale)):
        yield partitionable_slice(i)
    yield device_class()
    yield claim_template("test", TWO_DEVICES)
    for i in range(int(2000 * scale)):
        yield pod_with_claim_template(f"test-dra-{i}", "test")


def first_available(scale: float) -> Iterator[Obj]:
    """The prioritized-list (firstAvailable) template on the claim-template workload (500
    nodes, 2,500 measured pods, no init pods)."""
    for obj in claim_template_workload(scale, FIRST_AVAILABLE):
        if obj["kind"] == "Pod" and obj["metadata"]["namespace"] == "init":
            continue
        yield obj


def preemption_basic(scale: float) -> Iterator[Obj]:
    """PreemptionBasic/1000Nodes: 1,000 nodes, 4,000 running pod-low-priority pods (900m
    each, four per node: 3.6 of 4 cpu; bound with ``spec.nodeName``, as upstream waits for
    them to be scheduled before creating the measured pods), then 1,000 pending
    pod-high-priority pods (3 cpu, priority 10), each of which must preempt three."""
    nodes = int(1000 * scale)
    for i in range(nodes):
        yield node(f"scheduler-perf-{i}")
    for i in range(4 * nodes):
        p = pod_default(f"low-{i}", "namespace-1")
        p["spec"]["nodeName"] = f"scheduler-perf-{i // 4}"
        p["spec"]["terminationGracePeriodSeconds"] = 0
        res = p["spec"]["containers"][0]["resources"]
        res["limits"]["cpu"] = res["requests"]["cpu"] = "900m"
        yield p
    for i in range(nodes):
        p = pod_default(f"high-{i}", "namespace-2")
        p["spec"]["priority"] = 10
        res = p["spec"]["containers"][0]["resources"]
        res["limits"]["cpu"] = res["requests"]["cpu"] = "3000m"
        yield p


def topology_spreading(scale: float) -> Iterator[Obj]:
    """TopologySpreading-shaped: 5,000 nodes in three zones, 5,000 init pods, 5,000
    spreading pods."""
    zones = ("moon-1", "moon-2", "moon-3")
    for i in range(int(5000 * scale)):
        yield node(f"scheduler-perf-{i}", {"topology.kubernetes.io/zone": zones[i % 3]})
    for i in range(int(5000 * scale)):
        yield pod_default(f"init-pod-{i}", "namespace-1")
    for i in range(int(5000 * scale)):
        p = pod_default(f"spreading-pod-{i}", "namespace-2", {"color": "blue"})
        p["spec"]["topologySpreadConstraints"] = [
            {
                "maxSkew": 5,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"color": "blue"}},
            }
        ]
        yield p


ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
_BOTH = ["sched-1", "sched-0"]


def _with(p: Obj, labels: dict[str, str], affinity: Obj | None = None) -> Obj:
    p["metadata"]["labels"].update(labels)
    if affinity is not None:
        p["spec"]["affinity"] = affinity
    return p


def _term(color: str, key: str) -> Obj:
    return {
        "labelSelector": {"matchLabels": {"color": color}},
        "topologyKey": key,
        "namespaces": list(_BOTH),
    }


def pod_with_pod_anti_affinity(name: str, namespace: str) -> Obj:
    """pod-with-pod-anti-affinity.yaml (color green, required hostname anti-affinity)."""
    return _with(
        pod_default(name, namespace),
        {"color": "green"},
        {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [_term("green", HOST)]
            }
        },
    )


def pod_with_pod_affinity(name: str, namespace: str) -> Obj:
    """pod-with-pod-affinity.yaml (color blue, required zone affinity)."""
    return _with(
        pod_default(name, namespace),
        {"color": "blue"},
        {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("blue", ZONE)]}},
    )


def pod_with_preferred_pod_affinity(name: str, namespace: str) -> Obj:
    """pod-with-preferred-pod-affinity.yaml (color red, weight 1, hostname)."""
    return _with(
        pod_default(name, namespace),
        {"color": "red"},
        {
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"podAffinityTerm": _term("red", HOST), "weight": 1}
                ]
            }
        },
    )


def pod_with_preferred_pod_anti_affinity(name: str, namespace: str) -> Obj:
    """pod-with-preferred-pod-anti-affinity.yaml (color yellow, weight 1, hostname)."""
    return _with(
        pod_default(name, namespace),
        {"color": "yellow"},
        {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"podAffinityTerm": _term("yellow", HOST), "weight": 1}
                ]
            }
        },
    )


def pod_with_node_affinity(name: str, namespace: str) -> Obj:
    """pod-with-node-affinity.yaml (zone In zone1, zone2)."""
    return _with(
        pod_default(name, namespace),
        {},
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": ZONE, "operator": "In", "values": ["zone1", "zone2"]}
                            ]
                        }
                    ]
                }
            }
        },
    )


def _affinity_workload(
    template: Callable[[str, str], Obj],
    nodes: int,
    init: int,
    measured: int,
    zone1: bool = False,
) -> Callable[[float], Iterator[Obj]]:
    """affinity/performance-config.yaml's shape: ``nodes`` node-default nodes (labelled
    ``zone1`` where upstream's labelNodePrepareStrategy does), ``init`` pods of the template
    in sched-0, ``measured`` in sched-1."""

    def generate(scale: float) -> Iterator[Obj]:
        labels = {ZONE: "zone1"} if zone1 else None
        for i in range(int(nodes * scale)):
            yield node(f"scheduler-perf-{i}", labels)
        for i in range(int(init * scale)):
            yield template(f"init-pod-{i}", "sched-0")
        for i in range(int(measured * scale)):
            yield template(f"pod-{i}", "sched-1")

    return generate


def node_affinity(scale: float) -> Iterator[Obj]:
    """SchedulingNodeAffinity/5000Nodes_10000Pods: nodes in zone1, 5,000 init and 10,000
    measured pod-with-node-affinity pods (namespace-1, namespace-2)."""
    for i in range(int(5000 * scale)):
        yield node(f"scheduler-perf-{i}", {ZONE: "zone1"})
    for i in range(int(5000 * scale)):
        yield pod_with_node_affinity(f"init-pod-{i}", "namespace-1")
    for i in range(int(10000 * scale)):
        yield pod_with_node_affinity(f"pod-{i}", "namespace-2")


def mixed_base_pod(scale: float) -> Iterator[Obj]:
    """MixedSchedulingBasePod/5000Nodes_5000Pods: nodes in zone1; 2,000 init pods of each
    of pod-default, pod-with-pod-affinity, -anti-affinity, -preferred-affinity and
    -preferred-anti-affinity in sched-0; 5,000 measured pod-default (namespace-6)."""
    for i in range(int(5000 * scale)):
        yield node(f"scheduler-perf-{i}", {ZONE: "zone1"})
    for k, template in enumerate(
        (
            pod_default,
            pod_with_pod_affinity,
            pod_with_pod_anti_affinity,
            pod_with_preferred_pod_affinity,
            pod_with_preferred_pod_anti_affinity,
        )
    ):
        for i in range(int(2000 * scale)):
            yield template(f"init-{k}-pod-{i}", "sched-0")
    for i in range(int(5000 * scale)):
        yield pod_default(f"pod-{i}", "namespace-6")


def preferred_topology_spreading(scale: float) -> Iterator[Obj]:
    """PreferredTopologySpreading/5000Nodes_5000Pods (as TopologySpreading, with
    ``whenUnsatisfiable: ScheduleAnyway``)."""
    for obj in topology_spreading(scale):
        for c in obj.get("spec", {}).get("topologySpreadConstraints", ()):
            c["whenUnsatisfiable"] = "ScheduleAnyway"
        yield obj


def daemonset(scale: float) -> Iterator[Obj]:
    """SchedulingDaemonset/15000Nodes: node-with-name ``scheduler-perf-node`` (90,000
    pods), 15,000 node-default nodes, 30,000 daemonset-pod pods (required node affinity
    ``metadata.name In [scheduler-perf-node]``, no requests) in namespace-2."""
    big = node("scheduler-perf-node")
    big["status"]["capacity"]["pods"] = "90000"
    yield big
    for i in range(int(15000 * scale)):
        yield node(f"scheduler-perf-{i}")
    for i in range(int(30000 * scale)):
        yield {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"daemonset-{i}", "namespace": "namespace-2"},
            "spec": {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchFields": [
                                        {
                                            "key": "metadata.name",
                                            "operator": "In",
                                            "values": ["scheduler-perf-node"],
                                        }
                                    ]
                                }
                            ]
                        }
                    }
                },
                "containers": [{"image": "registry.k8s.io/pause:3.10", "name": "pause"}],
            },
        }


EBS_DRIVER = "ebs.csi.aws.com"
EBS_LIMIT = 39
"""createNodes' nodeAllocatableStrategy of the migrated and CSI PV workloads: the node's
``attachable-volumes-csi-ebs.csi.aws.com`` allocatable and its CSINode's driver count."""


def node_with_ebs_limit(name: str) -> Obj:
    """node-default.yaml with ``attachable-volumes-csi-ebs.csi.aws.com: 39``."""
    n = node(name)
    n["status"]["capacity"][f"attachable-volumes-csi-{EBS_DRIVER}"] = str(EBS_LIMIT)
    return n


def csi_node(name: str, migrated: bool) -> Obj:
    """The CSINode nodeAllocatableStrategy creates beside the node: driver
    ``ebs.csi.aws.com`` with ``allocatable.count`` 39, and for the migrated workload the
    ``storage.alpha.kubernetes.io/migrated-plugins: kubernetes.io/aws-ebs`` annotation."""
    meta: Obj = {"name": name}
    if migrated:
        meta["annotations"] = {
            "storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"
        }
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": meta,
        "spec": {
            "drivers": [{"name": EBS_DRIVER, "nodeID": name, "allocatable": {"count": EBS_LIMIT}}]
        },
    }


def pods_with_pvs(namespace: str, count: int, csi: bool) -> Iterator[Obj]:
    """createPods with persistentVolumeTemplatePath / persistentVolumeClaimTemplatePath
    (test/utils ``CreatePodWithPersistentVolume``, bindVolume true): per pod ``i`` the PVC
    ``pvc-i`` of pvc.yaml (ReadOnlyMany, 1Gi, ``pv.kubernetes.io/bind-completed``) bound to
    the PV ``<namespace>-vol-i`` (pv-aws.yaml: ``awsElasticBlockStore.volumeID`` ``vol-i``;
    pv-csi.yaml: ``csi.driver`` ebs.csi.aws.com, ``volumeHandle`` the PV's name), both with
    phase Bound and the PV's claimRef set, and the pod-default pod with one volume ``vol``
    naming the claim."""
    for i in range(count):
        pv_name = f"{namespace}-vol-{i}"
        source: Obj = (
            {"csi": {"driver": EBS_DRIVER, "volumeHandle": pv_name}}
            if csi
            else {"awsElasticBlockStore": {"volumeID": f"vol-{i}"}}
        )
        yield {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": pv_name},
            "spec": {
                "accessModes": ["ReadOnlyMany"],
                "capacity": {"storage": "1Gi"},
                "persistentVolumeReclaimPolicy": "Retain",
                "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                             "namespace": namespace, "name": f"pvc-{i}"},
                **source,
            },
            "status": {"phase": "Bound"},
        }  # fmt: skip
        yield {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": f"pvc-{i}",
                "namespace": namespace,
                "annotations": {"pv.kubernetes.io/bind-completed": "true"},
            },
            "spec": {
                "accessModes": ["ReadOnlyMany"],
                "resources": {"requests": {"storage": "1Gi"}},
                "volumeName": pv_name,
            },
            "status": {"phase": "Bound"},
        }
        p = pod_default(f"pod-{i}", namespace)
        p["spec"]["volumes"] = [{"name": "vol", "persistentVolumeClaim": {"claimName": f"pvc-{i}"}}]
        yield p


def _pv_workload(
    limits: bool, migrated: bool, csi: bool, measured: int
) -> Callable[[float], Iterator[Obj]]:
    """config/performance-config.yaml's SchedulingInTreePVs (``limits`` False: node-default
    nodes, in-tree AWS EBS PVs), SchedulingMigratedInTreePVs (EBS limit nodes with CSINodes
    naming the migrated plugin, in-tree PVs) and SchedulingCSIPVs (EBS limit nodes and
    CSINodes, CSI PVs): 5,000 nodes, 5,000 init pods with PVs in namespace-1, then
    ``measured`` pods with PVs in namespace-2."""

    def generate(scale: float) -> Iterator[Obj]:
        for i in range(int(5000 * scale)):
            name = f"scheduler-perf-{i}"
            yield node_with_ebs_limit(name) if limits else node(name)
            if limits:
                yield csi_node(name, migrated)
        yield from pods_with_pvs("namespace-1", int(5000 * scale), csi)
        yield from pods_with_pvs("namespace-2", int(measured * scale), csi)

    return generate


def allocated_claim(index: int, node_name: str, device: str) -> Obj:
    """resourceclaim.yaml (``test-claim-<index>``, one request ``req-0`` of ``test-class``)
    in namespace ``init``, as allocResourceClaims leaves it: allocated to ``device`` of the
    node's driver slice (node selector on the node's name), reserved for no pod."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"test-claim-{index}", "namespace": "init"},
        "spec": {"devices": {"requests": [
            {"name": "req-0", "exactly": {"deviceClassName": "test-class"}}]}},
        "status": {"allocation": {
            "devices": {"results": [{"request": "req-0", "driver": DRIVER,
                                     "pool": node_name, "device": device}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]},
        }},
    }  # fmt: skip


def steady_state_cluster(
    init_claims: int, devices: Obj = ONE_DEVICE
) -> Callable[[float], Iterator[Obj]]:
    """SteadyStateClusterResourceClaimTemplate's setup at 500 nodes (``empty``, ``half``,
    ``full``: ``init_claims`` 0, 2,500, 4,990): 500 node-with-dra-test-driver nodes, each
    with its 10-device driver slice (maxClaimsPerNode 10), DeviceClass ``test-class``,
    ``init_claims`` allocated claims (allocResourceClaims gives each claim the first free
    device on the first node, in the API server's name order, that has one), the
    ResourceClaimTemplate of ``devices`` in ``test``. The pods come from `steady_state_pods`."""

    def generate(scale: float) -> Iterator[Obj]:
        names = [f"scheduler-perf-dra-{i}" for i in range(int(500 * scale))]
        for name in names:
            yield node(name)
        for name in names:
            yield driver_slice(name, 10)
        yield device_class()
        listed = sorted(names)  # the API server lists by name
        for i in range(int(init_claims * scale)):
            yield allocated_claim(i, listed[i // 10], f"instance-{i % 10}")
        yield claim_template("test", devices)

    return generate


STEADY_BATCH = 10
"""createPods ``count: 10, steadyState: true``: ten pods in flight; each one scheduled is
deleted and replaced."""


def steady_state_pods(rounds: int) -> Iterator[list[Obj]]:
    """The steady-state pods, ``STEADY_BATCH`` pod-with-claim-template pods in ``test`` per
    round (distinct names per round)."""
    for r in range(rounds):
        yield [pod_with_claim_template(f"test-dra-{r}-{i}", "test") for i in range(STEADY_BATCH)]


def _list(objects: list[Obj]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})


def steady_state(objects: list[Obj], rounds: int) -> tuple[float, int, int]:
    """Run a steady-state workload through the library on one long-lived snapshot (as
    upstream's scheduler keeps its cache): per round, schedule `STEADY_BATCH` new pods
    (their claims created from the template, as the resource-claim controller does), then
    delete every pod that was bound and the claims it owned, so the cluster stays at the
    setup's utilization. Upstream creates the next pod as each one is scheduled; a batch of
    ten per round keeps the same ten in flight. Returns the CPU seconds of the rounds (the
    setup not counted: upstream's collectMetrics measures the steady state only), the pods
    given and the pods bound."""
    from schedsim.engine import Cluster, Engine, EngineConfig
    from schedsim.scheduler.scheduling import simulate

    engine = Engine(EngineConfig())
    batches = [Cluster.from_text(_list(b), "pods.json") for b in steady_state_pods(rounds)]
    cluster = Cluster.from_text(_list(objects), "cluster.json")
    snapshot, _ = engine.snapshot(cluster, skip_unschedulable_nodes=False, node_tree=True)
    templates = cluster.resource_claim_templates
    dra = snapshot.dra_snapshot
    given = bound = 0
    start = time.process_time()
    for batch in batches:
        result = simulate(snapshot, batch.pods, resource_claim_templates=templates)
        given += len(batch.pods)
        for outcome in result.outcomes:
            if outcome.node_name is None:
                continue
            bound += 1
            pod = outcome.pod  # with the names of the claims made for it
            snapshot.unschedule_pod(pod.namespace, pod.name, outcome.node_name)
            dra.remove_pod_owned_claims(pod)
    return time.process_time() - start, given, bound


_PARTITIONABLE = ("--feature-gates", "DRAPartitionableDevices=true")

WORKLOADS: dict[str, tuple[Callable[[float], Iterator[Obj]], int | None, tuple[str, ...]]] = {
    "SchedulingBasic/5000Nodes_10000Pods": (scheduling_basic, 680, ()),
    "SchedulingNodeAffinity/5000Nodes_10000Pods": (node_affinity, 220, ()),
    "SchedulingPodAntiAffinity/5000Nodes_2000Pods": (
        _affinity_workload(pod_with_pod_anti_affinity, 5000, 1000, 2000),
        60,
        (),
    ),
    "SchedulingPodAffinity/5000Nodes_5000Pods": (
        _affinity_workload(pod_with_pod_affinity, 5000, 5000, 5000, zone1=True),
        35,
        (),
    ),
    "SchedulingPreferredPodAffinity/5000Nodes_5000Pods": (
        _affinity_workload(pod_with_preferred_pod_affinity, 5000, 5000, 5000),
        90,
        (),
    ),
    "SchedulingPreferredPodAntiAffinity/5000Nodes_5000Pods": (
        _affinity_workload(pod_with_preferred_pod_anti_affinity, 5000, 5000, 5000),
        90,
        (),
    ),
    "TopologySpreading/5000Nodes_5000Pods": (topology_spreading, 460, ()),
    "PreferredTopologySpreading/5000Nodes_5000Pods": (preferred_topology_spreading, 340, ()),
    "MixedSchedulingBasePod/5000Nodes_5000Pods": (mixed_base_pod, 140, ()),
    "SchedulingDaemonset/15000Nodes": (daemonset, 1100, ()),
    "SchedulingWithResourceClaimTemplate/5000pods_500nodes": (claim_template_workload, 40, ()),
    "Partitionable/2000pods_100nodes": (partitionable, None, _PARTITIONABLE),
    "FirstAvailable/2500pods_500nodes": (first_available, None, ()),
    "PreemptionBasic/1000Nodes": (preemption_basic, None, ()),
    # the volume workloads' bars: kubernetes PR 126871's thresholds, in its diff's order
    "SchedulingInTreePVs/5000Nodes_2000Pods": (_pv_workload(False, False, False, 2000), 90, ()),
    "SchedulingMigratedInTreePVs/5000Nodes_5000Pods": (
        _pv_workload(True, True, False, 5000),
        35,
        (),
    ),
    "SchedulingCSIPVs/5000Nodes_5000Pods": (_pv_workload(True, False, True, 5000), 48, ()),
}
"""Name -> (generator, upstream threshold in pods/s or None, extra ``simulate`` flags: the
feature gates upstream's test case turns on that are off by default in 1.34)."""

STEADY_STATE: dict[str, tuple[Callable[[float], Iterator[Obj]], int]] = {
    "SteadyStateClusterResourceClaimTemplate/empty_500nodes": (steady_state_cluster(0), 64),
    "SteadyStateClusterResourceClaimTemplate/half_500nodes": (steady_state_cluster(2500), 70),
    "SteadyStateClusterResourceClaimTemplate/full_500nodes": (steady_state_cluster(4990), 60),
}
"""dra/performance-config.yaml's steady-state ``performance`` workloads: name -> (setup
generator, threshold in pods/s), run by `steady_state` (DynamicResourceAllocation is on by
default in 1.34). The thresholds are those of the workloads with SchedulerQueueingHints off;
the ``_QueueingHintsEnabled`` twins ask 64, 60 and 60 of the same setup (schedsim's queue
always uses the hints; with ten pods that all fit, no pod is ever requeued)."""

MEASURED_NAMESPACE = {
    "SchedulingBasic/5000Nodes_10000Pods": "namespace-2",
    "SchedulingNodeAffinity/5000Nodes_10000Pods": "namespace-2",
    "SchedulingPodAntiAffinity/5000Nodes_2000Pods": "sched-1",
    "SchedulingPodAffinity/5000Nodes_5000Pods": "sched-1",
    "SchedulingPreferredPodAffinity/5000Nodes_5000Pods": "sched-1",
    "SchedulingPreferredPodAntiAffinity/5000Nodes_5000Pods": "sched-1",
    "TopologySpreading/5000Nodes_5000Pods": "namespace-2",
    "PreferredTopologySpreading/5000Nodes_5000Pods": "namespace-2",
    "MixedSchedulingBasePod/5000Nodes_5000Pods": "namespace-6",
    "SchedulingDaemonset/15000Nodes": "namespace-2",
    "SchedulingWithResourceClaimTemplate/5000pods_500nodes": "test",
    "SchedulingInTreePVs/5000Nodes_2000Pods": "namespace-2",
    "SchedulingMigratedInTreePVs/5000Nodes_5000Pods": "namespace-2",
    "SchedulingCSIPVs/5000Nodes_5000Pods": "namespace-2",
}
"""The namespace of a workload's measured pods (upstream's ``collectMetrics`` createPods),
for ``--measured``."""


def measured(
    name: str, objects: list[Obj], repeat: int, extra: tuple[str, ...] = ()
) -> tuple[float, float, int, int]:
    """CPU time of the measured pods only, as upstream counts them: the whole run minus the
    same run without the measured pods (input order kept, so the init pods place the same),
    the two alternated ``repeat`` times. Returns (min, median) seconds over the repeats, the
    measured pods and how many of them were placed."""
    ns = MEASURED_NAMESPACE[name]

    def is_measured(o: Obj) -> bool:
        return o["kind"] == "Pod" and o["metadata"].get("namespace") == ns

    base = [o for o in objects if not is_measured(o)]
    count = len(objects) - len(base)
    diffs = []
    placed_all = 0
    for _ in range(repeat):
        _, cpu_all, placed_all, _ = run(objects, 1, extra)
        _, cpu_base, placed_base, _ = run(base, 1, extra)
        diffs.append(cpu_all - cpu_base)
    diffs.sort()
    return diffs[0], diffs[len(diffs) // 2], count, placed_all - placed_base


def run(
    objects: list[Obj], repeat: int, extra: tuple[str, ...] = ()
) -> tuple[float, float, int, int]:
    """Best wall time and best CPU time (``time.process_time``: what the shared machine's
    load does not inflate) of ``schedsim simulate -o json`` over ``objects`` (JSON List
    file), with the pods it placed and the pods it was given."""
    from schedsim.cli import main as cli_main

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cluster.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": objects}, f)
        best = cpu = float("inf")
        out = ""
        for _ in range(repeat):
            buf = io.StringIO()
            start, start_cpu = time.perf_counter(), time.process_time()
            with contextlib.redirect_stdout(buf):
                cli_main(["simulate", path, "-o", "json", *extra])
            best = min(best, time.perf_counter() - start)
            cpu = min(cpu, time.process_time() - start_cpu)
            out = buf.getvalue()
    result = json.loads(out)
    pods = result.get("pods", [])
    placed = sum(1 for p in pods if p.get("node"))
    return best, cpu, placed, len(pods)


def growth(name: str, scales: tuple[float, float], repeat: int, placement: str) -> str:
    """One table row: ``name`` at two scales, run alternately ``repeat`` times (best CPU
    time of each), and the ratio of the larger to the smaller."""
    generate, _, extra = WORKLOADS[name]
    inputs = [list(generate(s)) for s in scales]
    best = [float("inf"), float("inf")]
    for _ in range(repeat):
        for i, objects in enumerate(inputs):
            _, cpu, _, _ = run(objects, 1, (*extra, "--placement", placement))
            best[i] = min(best[i], cpu)
    pods = [sum(1 for o in objs if o["kind"] == "Pod") for objs in inputs]
    return (
        f"| {name} | {scales[0]} -> {scales[1]} | {pods[0]} -> {pods[1]} pods | "
        f"{best[0]:.2f} s -> {best[1]:.2f} s CPU | {best[1] / best[0]:.2f}x |"
    )


def main(argv: list[str] | None = None) -> int:
    """Generate every workload (or ``--only``), run it, print pods/s beside upstream."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append", choices=sorted({**WORKLOADS, **STEADY_STATE}))
    ap.add_argument(
        "--rounds",
        type=int,
        default=100,
        help="steady-state workloads: rounds of ten pods (upstream runs 10 s, ~800 pods)",
    )
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument(
        "--placement", choices=("kube-scheduler", "first-fit"), default="kube-scheduler"
    )
    ap.add_argument(
        "--growth",
        metavar="A,B",
        help="run each workload at scales A and B alternately and print the CPU-time ratio",
    )
    ap.add_argument(
        "--measured",
        action="store_true",
        help="CPU time of the measured pods only (whole run minus the run without them)",
    )
    args = ap.parse_args(argv)
    if args.measured:
        print(
            "| workload | measured pods (placed) | CPU min / median | pods/s (min CPU) "
            "| CI bar | x bar |"
        )
        print("|---|---|---|---|---|---|")
        for name, (generate, threshold, extra) in WORKLOADS.items():
            if (args.only and name not in args.only) or name not in MEASURED_NAMESPACE:
                continue
            objects = list(generate(args.scale))
            lo, med, count, placed = measured(
                name, objects, args.repeat, (*extra, "--placement", args.placement)
            )
            rate = count / lo if lo > 0 else float("inf")
            bar = f"{threshold}" if threshold else "-"
            times = f"{rate / threshold:.2f}x" if threshold else "-"
            print(
                f"| {name} | {count} ({placed}) | {lo:.2f} / {med:.2f} s | {rate:,.0f} "
                f"| {bar} | {times} |",
                flush=True,
            )
        for name, (generate, threshold) in STEADY_STATE.items():
            if args.only and name not in args.only:
                continue
            objects = list(generate(args.scale))
            runs = sorted(steady_state(objects, args.rounds) for _ in range(args.repeat))
            (lo, count, placed), (med, _, _) = runs[0], runs[len(runs) // 2]
            rate = count / lo if lo > 0 else float("inf")
            print(
                f"| {name} | {count} ({placed}) | {lo:.2f} / {med:.2f} s | {rate:,.0f} "
                f"| {threshold} | {rate / threshold:.2f}x |",
                flush=True,
            )
        return 0
    if args.growth:
        low, high = (float(x) for x in args.growth.split(","))
        print("| workload | scales | size | CPU | ratio |")
        print("|---|---|---|---|---|")
        for name in WORKLOADS:
            if not args.only or name in args.only:
                print(growth(name, (low, high), args.repeat, args.placement), flush=True)
        return 0
    print("| workload | pods (placed) | whole process | CPU | pods/s (CPU) | upstream threshold |")
    print("|---|---|---|---|---|---|")
    for name, (generate, threshold, extra) in WORKLOADS.items():
        if args.only and name not in args.only:
            continue
        objects = list(generate(args.scale))
        total = sum(1 for o in objects if o["kind"] == "Pod" and not o["spec"].get("nodeName"))
        t, cpu, placed, _ = run(objects, args.repeat, (*extra, "--placement", args.placement))
        limit = f"{threshold}" if threshold else "-"
        print(
            f"| {name} | {total} ({placed}) | {t:.2f} s | {cpu:.2f} s | "
            f"{total / t:,.0f} ({total / cpu:,.0f}) | {limit} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
