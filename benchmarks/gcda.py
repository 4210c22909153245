"""The whole-process benchmark on a GCDA-sized cluster (issue 12, Performance).

1,213 nodes of five sizes and 7,064 pending pods of ten shapes in one YAML file, generated
deterministically here (nothing is committed as data). Times, in one run and as ratios to
PyYAML's C-loader parse of the same file (``yaml.load_all(..., Loader=CSafeLoader)``):

- ``schedsim simulate FILE -o json`` (kube-scheduler placement, the default),
- ``schedsim simulate FILE -o json --placement first-fit``,

each the whole process in-process (read, parse, build objects, schedule, write JSON), best of
``--repeat`` runs, in wall time and in process (CPU) time; a run that exits with an error
stops the benchmark. ``--alternate N`` adds N rounds that time the parse and then each
placement back to back and print each round's CPU ratio (the spread on a shared machine).
Run: ``python benchmarks/gcda.py [--repeat 3] [--alternate N] [--keep FILE]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from collections.abc import Callable

import yaml

NODE_SIZES = (  # (cpu, memory, share in 1,213 nodes)
    ("4", "16Gi", 300),
    ("8", "32Gi", 400),
    ("16", "64Gi", 300),
    ("32", "128Gi", 163),
    ("64", "256Gi", 50),
)
POD_SHAPES = (  # (cpu, memory, count): 7,064 pods
    ("100m", "128Mi", 1200),
    ("250m", "256Mi", 1200),
    ("500m", "512Mi", 1000),
    ("500m", "2Gi", 800),
    ("1", "1Gi", 800),
    ("1", "4Gi", 700),
    ("2", "2Gi", 500),
    ("2", "8Gi", 400),
    ("4", "8Gi", 300),
    ("8", "32Gi", 164),
)


def generate() -> str:
    """The cluster as one multi-document YAML text (same text every call)."""
    out = []
    i = 0
    for cpu, mem, count in NODE_SIZES:
        for _ in range(count):
            zone = f"zone-{i % 3}"
            taint = (
                "\n  taints:\n  - {key: dedicated, value: batch, effect: NoSchedule}"
                if i % 50 == 49
                else ""
            )
            out.append(
                f"""apiVersion: v1
kind: Node
metadata:
  name: node-{i:04d}
  labels:
    kubernetes.io/hostname: node-{i:04d}
    topology.kubernetes.io/zone: {zone}
    node.kubernetes.io/instance-type: c{cpu}{spec_lines(taint)}
status:
  allocatable: {{cpu: "{cpu}", memory: {mem}, pods: "110"}}
  capacity: {{cpu: "{cpu}", memory: {mem}, pods: "110"}}
"""
            )
            i += 1
    j = 0
    for k, (cpu, mem, count) in enumerate(POD_SHAPES):
        for _ in range(count):
            out.append(
                f"""apiVersion: v1
kind: Pod
metadata:
  name: app-{k}-{j:05d}
  namespace: ns-{k % 4}
  labels: {{app: app-{k}}}
  creationTimestamp: "2024-01-01T00:00:00Z"
spec:
  containers:
  - name: main
    image: registry.example/app-{k}:1.0
    resources:
      requests: {{cpu: "{cpu}", memory: {mem}}}
"""
            )
            j += 1
    return "---\n".join(out)


def spec_lines(taint: str) -> str:
    """The node's spec section (empty without a taint)."""
    return f"\nspec:{taint}" if taint else ""


def _best(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The best wall time and the best process (CPU) time of ``repeat`` calls, in seconds.
    On a shared machine the CPU time moves less with the load than the wall time."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
        best = min(best, time.perf_counter() - start)
    return best, best_cpu


def main(argv: list[str] | None = None) -> int:
    """Generate, time, print the ratios."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", metavar="FILE", help="also write the generated YAML here")
    ap.add_argument("--only", choices=("kube-scheduler", "first-fit"), action="append")
    ap.add_argument(
        "--alternate",
        type=int,
        default=0,
        metavar="N",
        help="also N rounds of parse then each placement, back to back: the CPU ratio of each "
        "round (both sides timed seconds apart, so a change in the machine's load moves both)",
    )
    args = ap.parse_args(argv)
    from schedsim.cli import main as cli_main

    text = generate()
    if args.keep:
        with open(args.keep, "w", encoding="utf-8") as f:
            f.write(text)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gcda.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

        def parse() -> object:
            with open(path, encoding="utf-8") as f:
                return list(yaml.load_all(f, Loader=yaml.CSafeLoader))

        def run(*extra: str) -> Callable[[], object]:
            def go() -> object:
                with contextlib.redirect_stdout(io.StringIO()):
                    status = cli_main(["simulate", path, "-o", "json", *extra])
                if status != 0:  # a failed run is not a time
                    raise SystemExit(f"simulate {' '.join(extra)} exited with status {status}")
                return status

            return go

        base, base_cpu = _best(parse, args.repeat)
        print(f"file: {len(text) / 1e6:.1f} MB, {len(parse())} objects")  # type: ignore[arg-type]
        print(f"PyYAML CSafeLoader parse: {base:.2f} s (CPU {base_cpu:.2f} s)")
        modes = {"kube-scheduler": (), "first-fit": ("--placement", "first-fit")}
        for name, extra in modes.items():
            if args.only and name not in args.only:
                continue
            t, cpu = _best(run(*extra), args.repeat)
            print(
                f"simulate ({name}): {t:.2f} s = {t / base:.2f}x the parse "
                f"(CPU {cpu:.2f} s = {cpu / base_cpu:.2f}x)"
            )
        chosen = [(n, e) for n, e in modes.items() if not args.only or n in args.only]
        rounds: dict[str, list[float]] = {n: [] for n, _ in chosen}
        for _ in range(args.alternate):
            _, parse_cpu = _best(parse, 1)
            for name, extra in chosen:
                rounds[name].append(_best(run(*extra), 1)[1] / parse_cpu)
        for name, ratios in rounds.items():
            if ratios:
                shown = ", ".join(f"{r:.2f}x" for r in ratios)
                print(f"alternated rounds ({name}, CPU / parse CPU): {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
