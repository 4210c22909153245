"""The FGD paper's experiment grid on the real openb trace (issue 27): GPU allocation and
fragmentation against the arrived workload per policy, seeds 42-51 by default.

Run (the six policies of ``examples/gpu-sharing-policies``, the default trace, 10 seeds):

    PYTHONPATH=examples/gpu-sharing-policies/src nice -n 10 python benchmarks/fgd_curves.py \\
        [--traces default ...] [--policies fgd bestfit ...] [--seeds 42 43 ...] \\
        [--jobs N] [--out DIR] [--report FILE.html]

Each experiment is ``schedsim replay --alibaba-nodes ... --alibaba-pods ... --gpu-as dra
--inflate 1.3 --seed S --config examples/gpu-sharing-policies/<policy>.yaml -o json``
(`schedsim.replay.experiment.GpuSharingExperiment`), run in a local process pool; each
run's JSON goes to ``--out`` (``<trace>-<policy>-<seed>.json``, reused when present) with its
CPU seconds. Prints, per trace and policy, the mean (min-max over seeds) GPU allocation and
fragmentation ratio at 50/80/90/100/110/120/130 % arrived, the table of docs/replay.md;
``--report`` writes the curves as one HTML page (mean and range over seeds per policy, the
shape of the paper's Fig. 7 and 9(a)). The trace is read from ../shared/examples/alibaba-openb
(``SCHEDSIM_ALIBABA_OPENB``, or ``SCHEDSIM_SHARED_DIR``, overrides).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# the trace as the tests find it: SCHEDSIM_ALIBABA_OPENB, else SCHEDSIM_SHARED_DIR, else beside
# the checkout (a git worktree's parent is not the team folder, hence the variables)
TRACE_DIR = Path(
    os.environ.get("SCHEDSIM_ALIBABA_OPENB")
    or Path(os.environ.get("SCHEDSIM_SHARED_DIR") or ROOT.parent / "shared")
    / "examples/alibaba-openb"
)
POLICIES = ("random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd")
PLUGINS = (
    "RandomScore",
    "DotProductScore",
    "GpuClusteringScore",
    "GpuPackingScore",
    "BestFitScore",
    "FGDScore",
)


def run_one(trace: str, policy: str, seed: int, out: str) -> dict[str, Any]:
    """One experiment; its JSON (with ``cpuSeconds``) written to ``out`` and returned."""
    from schedsim.engine import Engine, EngineConfig
    from schedsim.replay.alibaba import alibaba_trace
    from schedsim.replay.experiment import GpuSharingExperiment

    path = Path(out) / f"{trace}-{policy}-{seed}.json"
    if path.exists():
        data: dict[str, Any] = json.loads(path.read_text())
        return data
    t0 = time.process_time()
    tr = alibaba_trace(
        str(TRACE_DIR / f"openb_pod_list_{trace}.csv"),
        str(TRACE_DIR / "openb_node_list_gpu_node.csv"),
        gpu_as="dra",
        gpu_share=True,
    )
    config = EngineConfig.from_config_file(
        str(ROOT / "examples/gpu-sharing-policies" / f"{policy}.yaml"),
        feature_gates={"DRAConsumableCapacity": True},
        plugins=tuple(f"schedsim_gpu_sharing:{p}" for p in PLUGINS),
    )
    result = GpuSharingExperiment(tr, Engine(config), inflate=1.3, seed=seed).run()
    data = result.to_json()
    data["cpuSeconds"] = time.process_time() - t0
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)
    return data


def _results(runs: dict[tuple[str, str, int], dict[str, Any]]) -> list[Any]:
    """The runs as sweep results (`schedsim.sweep.curves` groups them over seeds), in
    trace, policy, seed order."""
    from schedsim.sweep.results import ScenarioResult

    keys = sorted(runs, key=lambda k: (k[0], POLICIES.index(k[1]), k[2]))
    return [
        ScenarioResult(
            name=f"{t}+{p}+{s}",
            index=i,
            axes=(("traces", t), ("schedulerConfig", p), ("seeds", str(s))),
            fingerprint="",
            curve=[
                (c["arrived"], c["gpuAllocation"], c["fragmentation"], c["fragmentationAmount"])
                for c in runs[(t, p, s)]["curve"]
            ],
        )
        for i, (t, p, s) in enumerate(keys)
    ]


def table(runs: dict[tuple[str, str, int], dict[str, Any]]) -> str:
    """The markdown table: per (trace, policy), allocation and fragmentation ratio at
    50-130 % arrived, mean (min-max) over seeds (`schedsim.sweep.curves.curve_table`)."""
    from schedsim.sweep.curves import curve_table

    return curve_table(_results(runs)).rstrip("\n")


def report(runs: dict[tuple[str, str, int], dict[str, Any]], path: str) -> None:
    """The curves as one self-contained HTML page: per trace, allocation and fragmentation
    against arrived percent, mean line and min-max band per policy
    (`schedsim.sweep.curves.curve_figures`)."""
    from schedsim.report import Page
    from schedsim.sweep.curves import curve_figures

    page = Page("FGD curves")
    for fig in curve_figures(_results(runs)):
        page.chart(fig)
    tmp = Path(path + ".tmp")
    tmp.write_text(page.render())
    tmp.replace(path)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", nargs="+", default=["default"])
    ap.add_argument("--policies", nargs="+", default=list(POLICIES), choices=POLICIES)
    ap.add_argument("--seeds", nargs="+", type=int, default=list(range(42, 52)))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default="fgd-runs")
    ap.add_argument("--report", metavar="FILE.html")
    args = ap.parse_args(argv)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    grid = [(t, p, s) for t in args.traces for p in args.policies for s in args.seeds]
    runs: dict[tuple[str, str, int], dict[str, Any]] = {}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {key: pool.submit(run_one, *key, args.out) for key in grid}
        for key, f in futures.items():
            runs[key] = f.result()
            d = runs[key]["experiment"]
            print(
                f"{key[0]} {key[1]} seed {key[2]}: {d['pods']} pods, {d['scheduled']} "
                f"scheduled, {runs[key].get('cpuSeconds', 0):.1f} s CPU",
                file=sys.stderr,
                flush=True,
            )
    print(table(runs))
    if args.report:
        report(runs, args.report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
