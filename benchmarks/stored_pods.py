"""Bytes per stored pod, and the table output against the JSON output (issue 17 item 5).

Generates, deterministically, 100 nodes (32 cpu, 128Gi, 110 pods) and P pending pods of one
template (one container, one label, 100m / 128Mi requests), as a JSON ``kind: List``
(not committed; written to a temporary directory), then measures in one run:

- **bytes per stored pod**, with tracemalloc (the memory still allocated afterwards, divided
  by P): (a) ``Pod.from_manifest`` of P manifests built in Python (their strings shared, as
  literals are); (b) the whole loader (``load_text`` of the JSON text: parse, decode,
  defaults; the parsed documents are dropped, the decoded objects kept), so every string is
  a fresh one as a parser makes it; (c) for scale, the parsed JSON documents themselves
  (``json.loads``), per pod.
- **table vs JSON**: ``schedsim simulate FILE --placement first-fit -o table`` and
  ``-o json``, whole process (child CPU time, start-up included), alternated, best of N, and
  their ratio.

Run: ``python benchmarks/stored_pods.py [--pods 10000] [--repeat 2]``. To measure another
tree (before/after), put its ``src`` first: ``PYTHONPATH=/path/to/src python ...``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import tracemalloc
from collections.abc import Callable
from typing import Any


def _node(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}"}},
        "status": {"capacity": {"pods": "110", "cpu": "32", "memory": "128Gi"}},
    }


def _pod(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i}", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10.1",
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                }
            ]
        },
    }


def _retained(make: Callable[[], object], per: int) -> float:
    """Bytes ``make()``'s result keeps allocated (tracemalloc), divided by ``per``."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = make()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    return (after - before) / per


def _child_cpu(argv: list[str]) -> float:
    """CPU seconds (user + system) of one child process running ``argv``."""
    start = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    end = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (end.ru_utime - start.ru_utime) + (end.ru_stime - start.ru_stime)


def main(argv: list[str] | None = None) -> int:
    """Print bytes per pod (three measures) and the table / JSON times and ratio."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--pods", type=int, default=10_000)
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)

    from schedsim.api.core import Pod
    from schedsim.api.loading.loader import load_text

    objects = [_node(i) for i in range(args.nodes)] + [_pod(i) for i in range(args.pods)]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})
    manifests = [_pod(i) for i in range(args.pods)]
    # one warm-up (module-level caches such as parsed quantities), then the measures
    Pod.from_manifest(manifests[0])
    n = args.pods
    decoded = _retained(lambda: [Pod.from_manifest(m) for m in manifests], n)
    loaded = _retained(lambda: load_text(text, "pods.json").pods, n)
    parsed = _retained(lambda: json.loads(json.dumps([_pod(i) for i in range(n)])), n)
    print(f"bytes per stored pod, {n:,} pods of one template (tracemalloc):")
    print(f"  Pod.from_manifest (manifests built in Python): {decoded:,.0f} B")
    print(f"  load_text of the JSON List (fresh strings):   {loaded:,.0f} B")
    print(f"  the parsed JSON document of a pod, for scale:  {parsed:,.0f} B")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cluster.json")
        with open(path, "w") as f:
            f.write(text)
        base = [sys.executable, "-m", "schedsim.cli", "simulate", path]
        base += ["--placement", "first-fit", "-o"]
        best = {"json": float("inf"), "table": float("inf")}
        for _ in range(args.repeat):
            for output in ("json", "table"):  # alternated: the load moves both alike
                best[output] = min(best[output], _child_cpu([*base, output]))
    print(
        f"simulate --placement first-fit, {args.nodes} nodes, {n:,} pending pods, whole "
        f"process CPU, best of {args.repeat}:"
    )
    print(f"  -o json  {best['json']:.2f} s")
    print(f"  -o table {best['table']:.2f} s  ({best['table'] / best['json']:.2f}x the JSON run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
