"""What the API server's value rules (`schedsim.api.validation`) cost at load, as ratios in
one run.

Inputs: the GCDA-sized cluster of `benchmarks/gcda.py` (1,213 nodes, 7,064 pods; plain
manifests) and the `kubectl get -o yaml`-like dump of `benchmarks/gcda_cluster.py` (same
counts with labels, annotations, ownerReferences, managedFields, probes, tolerations,
affinity). For each: decoding the parsed documents with the rules (``api_rules=True``, the
default) and without (``api_rules=False``; field validation stays on in both), and the same
with the YAML parse included. Process time, best of ``--repeat`` alternating runs, the
garbage collector paused as the CLI pauses it.

Run: ``python benchmarks/api_validation.py [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

import gcda
import gcda_cluster
import yaml

from schedsim.api.loading.loader import decode_objects
from schedsim.api.loading.manifest_text import parse_text


def _best(f: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        start = time.process_time()
        f()
        best = min(best, time.process_time() - start)
        gc.enable()
    return best


def _pair(name: str, with_rules: Callable[[], Any], without: Callable[[], Any], n: int) -> None:
    a = b = float("inf")
    for _ in range(n):  # alternate, so load on a shared machine hits both alike
        b = min(b, _best(without, 1))
        a = min(a, _best(with_rules, 1))
    print(f"| {name} | {b:.3f} s | {a:.3f} s | {a / b:.2f}x |")


def main() -> None:
    """Print the table rows of docs/performance.md."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    n = parser.parse_args().repeat
    dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    inputs = {
        "gcda.py": gcda.generate(),
        "gcda_cluster.py dump": yaml.dump(gcda_cluster.cluster_documents(), Dumper=dumper),
    }
    print("| input | without the rules | with them | ratio |")
    print("|---|---|---|---|")
    for name, text in inputs.items():
        docs = parse_text(text, "bench.yaml")
        decode_objects(docs, "bench.yaml")  # warm: schema compile, caches; and a clean load

        def decode(rules: bool, docs: list[Any] = docs) -> Any:
            return decode_objects(docs, "bench.yaml", api_rules=rules)

        def load(rules: bool, text: str = text) -> Any:
            return decode_objects(parse_text(text, "bench.yaml"), "bench.yaml", api_rules=rules)

        _pair(f"{name}, decode", lambda: decode(True), lambda: decode(False), n)
        _pair(f"{name}, parse + decode", lambda: load(True), lambda: load(False), max(1, n // 2))


if __name__ == "__main__":
    main()
