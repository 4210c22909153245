"""How scale-down grows with the cluster: CPU time of the removal simulation (every node a
candidate, 2 movable pods each, all reverted) at 1,000 and 4,000 nodes, and their ratio
(linear is 4x). Run: ``python benchmarks/scale_down_growth.py`` (numbers in
docs/performance.md, "Scale-down growth")."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from test_bench_autoscaling import run_scale_down


def main() -> None:
    times = {}
    for nodes in (1000, 4000):
        start = time.process_time()
        run_scale_down("delta", nodes, 2, 0.0)
        times[nodes] = time.process_time() - start
        print(f"{nodes} nodes: {times[nodes]:.2f} s CPU", flush=True)
    print(f"4k / 1k: {times[4000] / times[1000]:.1f}x (linear: 4x)")


if __name__ == "__main__":
    main()
