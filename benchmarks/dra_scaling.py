"""How DRA scheduling grows with the cluster: n nodes, n network-attached ResourceSlices
(``allNodes``, 4 devices each, one pool per slice) and n pending pods, each with a claim from
a template asking for 2 devices; ``schedsim simulate`` in-process, CPU time, for n = 100,
400, 800. Before the per-cycle caches (pools per node, the allocated-device tracker, the
search skipping taken devices without building ids) every pod rebuilt all pools and all
allocated devices: quadratic. Run: ``python benchmarks/dra_scaling.py``."""

from __future__ import annotations

import contextlib
import io
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from schedsim.cli import main as schedsim


def cluster(n: int) -> list[dict[str, Any]]:
    """The objects of the n-sized cluster (deterministic)."""
    out: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"node-{i}"},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}},
        }
        for i in range(n)
    ]
    out.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "net"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "net.example.com"'}}]},
        }
    )
    out += [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"slice-{i}"},
            "spec": {
                "driver": "net.example.com",
                "allNodes": True,
                "pool": {"name": f"pool-{i}", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": f"dev-{j}"} for j in range(4)],
            },
        }
        for i in range(n)
    ]
    out.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "two", "namespace": "default"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": "r", "exactly": {"deviceClassName": "net", "count": 2}}
                        ]
                    }
                }
            },
        }
    )
    out += [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"pod-{i:05d}", "namespace": "default"},
            "spec": {
                "containers": [{"name": "c", "resources": {"claims": [{"name": "r"}]}}],
                "resourceClaims": [{"name": "r", "resourceClaimTemplateName": "two"}],
            },
        }
        for i in range(n)
    ]
    return out


def run(n: int) -> float:
    """CPU seconds of one ``simulate -o json`` over the n-sized cluster."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "cluster.yaml"
        path.write_text(yaml.safe_dump_all(cluster(n)))
        start = time.process_time()
        with contextlib.redirect_stdout(io.StringIO()):
            assert schedsim(["simulate", str(path), "-o", "json"]) == 0
        return time.process_time() - start


def main() -> None:
    times = {n: run(n) for n in (100, 400, 800)}
    for n, t in times.items():
        print(f"n={n}: {t:.2f} s CPU")
    print(f"400/100: {times[400] / times[100]:.1f}x, 800/400: {times[800] / times[400]:.1f}x")


if __name__ == "__main__":
    main()
