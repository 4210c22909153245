"""Workload controller expansion: Deployments x 10 replicas each, decoded once outside the
timing, then `expand_workloads` (ReplicaSet per Deployment, 10 pods each, API defaults).
``100`` against ``1000`` Deployments shows it is linear; ``pods`` (decoding the same number of
bare Pod manifests) is the yardstick: what the pods would cost if the input listed them.

Run: ``pytest benchmarks/test_bench_workloads.py --benchmark-enable``.
"""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.apps.controllers import expand_workloads
from schedsim.api.loading.loader import Manifests, decode_objects

REPLICAS = 10


def _deployment(i: int) -> dict[str, Any]:
    labels = {"app": f"app-{i}", "tier": "web"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"app-{i}", "namespace": f"ns-{i % 10}"},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "nginx",
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                            "ports": [{"containerPort": 8080}],
                        }
                    ],
                    "tolerations": [{"key": "dedicated", "operator": "Exists"}],
                },
            },
        },
    }


def _decoded(n: int) -> list[dict[str, Any]]:
    return [_deployment(i) for i in range(n)]


def _fresh(docs: list[dict[str, Any]]) -> Manifests:
    return decode_objects(docs, "bench")


@pytest.mark.parametrize("deployments", [100, 1000])
def test_expand_deployments(benchmark: Any, deployments: int) -> None:
    docs = _decoded(deployments)

    def setup() -> tuple[tuple[Manifests], dict[str, Any]]:
        return (_fresh(docs),), {}

    benchmark.pedantic(expand_workloads, setup=setup, rounds=5)


@pytest.mark.parametrize("deployments", [100, 1000])
def test_decode_deployments(benchmark: Any, deployments: int) -> None:
    docs = _decoded(deployments)
    benchmark.pedantic(_fresh, args=(docs,), rounds=5)


@pytest.mark.parametrize("deployments", [1000])
def test_decode_same_pods(benchmark: Any, deployments: int) -> None:
    """The yardstick: 10,000 bare Pod manifests shaped like the expanded pods."""
    pods = []
    for d in _decoded(deployments):
        for r in range(REPLICAS):
            t = d["spec"]["template"]
            meta = {**t["metadata"], "name": f"{d['metadata']['name']}-{r}"}
            meta["namespace"] = d["metadata"]["namespace"]
            pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": t["spec"]})
    benchmark.pedantic(_fresh, args=(pods,), rounds=5)
