"""A GCDA-sized cluster as ``kubectl get nodes,pods -A -o yaml`` would print it: 1,213 nodes
and 7,064 pods, generated deterministically (seeded), with the metadata real dumps carry
(labels, annotations, ownerReferences, managedFields) and pod specs of the usual shapes
(requests/limits, env, ports, probes, volume mounts, tolerations, node affinity, topology
spread). About one pod in ten is pending.

Used by `benchmarks/test_bench_validation.py` (load time with and without strict field
validation) and by `tests/unit/test_strict_fields.py` (validation visits each key once).
"""

from __future__ import annotations

import random
from typing import Any

import yaml

NODES = 1213
PODS = 7064

_ZONES = ("us-central1-a", "us-central1-b", "us-central1-c")
_TYPES = (
    ("n2-standard-8", "8", "32Gi"),
    ("n2-standard-16", "16", "64Gi"),
    ("n2-highmem-32", "32", "256Gi"),
)
_TS = "2024-05-01T10:00:00Z"


def _managed(manager: str, api_version: str) -> list[dict[str, Any]]:
    return [
        {
            "manager": manager,
            "operation": "Update",
            "apiVersion": api_version,
            "time": _TS,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {}},
        }
    ]


def node(i: int, rng: random.Random) -> dict[str, Any]:
    """Node ``i`` (``gke-pool-NNNN``)."""
    kind, cpu, mem = _TYPES[i % len(_TYPES)]
    zone = _ZONES[i % len(_ZONES)]
    name = f"gke-pool-{i:04d}"
    spec: dict[str, Any] = {
        "podCIDR": f"10.{i // 250}.{i % 250}.0/24",
        "providerID": f"gce://p/{zone}/{name}",
    }
    if i % 50 == 0:
        spec["taints"] = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    capacity = {"cpu": cpu, "memory": mem, "pods": "110", "ephemeral-storage": "100Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"00000000-0000-0000-0000-{i:012d}",
            "resourceVersion": str(1000 + i),
            "creationTimestamp": _TS,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": kind,
                "topology.kubernetes.io/zone": zone,
                "cloud.google.com/gke-nodepool": f"pool-{i % 7}",
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "managedFields": _managed("kubelet", "v1"),
        },
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": {**capacity, "cpu": f"{int(cpu) * 1000 - 200}m"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "lastHeartbeatTime": _TS,
                    "lastTransitionTime": _TS,
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                }
            ],
            "addresses": [
                {"type": "InternalIP", "address": f"10.128.{i // 250}.{i % 250}"},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "machineID": f"m{i}",
                "systemUUID": f"s{i}",
                "bootID": f"b{i}",
                "kernelVersion": "6.1.0",
                "osImage": "Container-Optimized OS",
                "containerRuntimeVersion": "containerd://1.7.0",
                "kubeletVersion": "v1.34.0",
                "kubeProxyVersion": "v1.34.0",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "images": [
                {
                    "names": [f"registry.example/app-{j}:v1"],
                    "sizeBytes": 100_000_000 + j * rng.randrange(1000),
                }
                for j in range(3)
            ],
        },
    }


def pod(i: int, rng: random.Random) -> dict[str, Any]:
    """Pod ``i`` of app ``app-(i % 300)``, bound to a node except every tenth."""
    app = f"app-{i % 300}"
    ns = f"team-{i % 12}"
    cpu = rng.choice(("100m", "250m", "500m", "1"))
    mem = rng.choice(("128Mi", "256Mi", "512Mi", "1Gi"))
    container: dict[str, Any] = {
        "name": "main",
        "image": f"registry.example/{app}:v1",
        "imagePullPolicy": "IfNotPresent",
        "args": ["--port=8080", "--log-level=info"],
        "env": [
            {"name": "APP", "value": app},
            {
                "name": "POD_IP",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}},
            },
        ],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "resources": {"requests": {"cpu": cpu, "memory": mem}, "limits": {"memory": mem}},
        "readinessProbe": {
            "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": True}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    spec: dict[str, Any] = {
        "containers": [container],
        "volumes": [{"name": "config", "configMap": {"name": f"{app}-config", "defaultMode": 420}}],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "schedulerName": "default-scheduler",
        "priority": 0,
        "enableServiceLinks": True,
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ],
    }
    if i % 5 == 0:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "topology.kubernetes.io/zone",
                                    "operator": "In",
                                    "values": list(_ZONES[:2]),
                                }
                            ]
                        }
                    ]
                }
            }
        }
    if i % 7 == 0:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    pending = i % 10 == 9
    if not pending:
        spec["nodeName"] = f"gke-pool-{rng.randrange(NODES):04d}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{app}-{i:05d}",
            "namespace": ns,
            "uid": f"11111111-0000-0000-0000-{i:012d}",
            "resourceVersion": str(5000 + i),
            "creationTimestamp": _TS,
            "generateName": f"{app}-",
            "labels": {"app": app, "pod-template-hash": "5d8f7c6b9"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": _TS},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{app}-5d8f7c6b9",
                    "uid": f"22222222-0000-0000-0000-{i % 300:012d}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": _managed("kube-controller-manager", "v1"),
        },
        "spec": spec,
        "status": {"phase": "Pending"}
        if pending
        else {
            "phase": "Running",
            "qosClass": "Burstable",
            "podIP": f"10.{i // 60000}.{(i // 250) % 250}.{i % 250}",
            "startTime": _TS,
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": _TS}],
        },
    }


def cluster_documents(nodes: int = NODES, pods: int = PODS, seed: int = 1) -> dict[str, Any]:
    """One ``kind: List`` holding ``nodes`` nodes then ``pods`` pods (same seed, same list)."""
    rng = random.Random(seed)
    items = [node(i, rng) for i in range(nodes)] + [pod(i, rng) for i in range(pods)]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def cluster_yaml(nodes: int = NODES, pods: int = PODS, seed: int = 1) -> str:
    """`cluster_documents` as YAML text (the C emitter when PyYAML has it)."""
    dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return str(yaml.dump(cluster_documents(nodes, pods, seed), Dumper=dumper, sort_keys=False))
