"""Speed of the DRA-sharing path (issue 27): CPU per pod of the GPU-sharing experiment
(``--gpu-as dra`` with DRAConsumableCapacity, a measurement after every pod) against the
same inflated pod list scheduled with GPUs as the extended resource ``nvidia.com/gpu``
(sharing pods take a whole GPU there), in one run, as a ratio.

Run: ``PYTHONPATH=examples/gpu-sharing-policies/src nice -n 10 python benchmarks/fgd_speed.py
[--pods N] [--repeat R] [--config FILE]`` (default: every pod of the default trace after
inflation to 1.3, seed 42, kube-scheduler's default profile with percentageOfNodesToScore
100; ``--config`` e.g. examples/gpu-sharing-policies/fgd.yaml, used for both runs except that
the policy plugins need DRA, so the extended-resource run keeps the default profile then).
Prints CPU seconds, ms per pod and the ratio (min and median over R rounds). Numbers in
docs/performance.md ("GPU-sharing experiment").
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

import attrs

from schedsim.api.loading.uids import default_uid
from schedsim.engine import Engine, EngineConfig
from schedsim.replay.alibaba import alibaba_trace, pod_demand
from schedsim.replay.experiment import GpuSharingExperiment, tuned_workload
from schedsim.scheduler import Scheduler

ROOT = Path(__file__).resolve().parents[1]
TRACE = Path(
    os.environ.get("SCHEDSIM_ALIBABA_OPENB", ROOT.parent / "shared/examples/alibaba-openb")
)
PLUGINS = tuple(
    f"schedsim_gpu_sharing:{p}"
    for p in (
        "RandomScore",
        "DotProductScore",
        "GpuClusteringScore",
        "GpuPackingScore",
        "BestFitScore",
        "FGDScore",
    )
)
EVERY_NODE = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
"""


class _Stop(Exception):
    pass


def _engine(config: str | None, policies: bool) -> Engine:
    gates = {"DRAConsumableCapacity": True}
    if config is None or not policies:
        path = Path("/tmp/fgd-speed-every-node.yaml")
        path.write_text(EVERY_NODE)
        config = str(path)
    return Engine(
        EngineConfig.from_config_file(
            config, feature_gates=gates, plugins=PLUGINS if policies else ()
        )
    )


def dra_run(pods: int | None, config: str | None) -> tuple[float, int]:
    """CPU seconds and pods of the experiment (DRA sharing), stopped after ``pods``."""
    tr = alibaba_trace(
        str(TRACE / "openb_pod_list_default.csv"),
        str(TRACE / "openb_node_list_gpu_node.csv"),
        gpu_as="dra",
        gpu_share=True,
    )
    engine = _engine(config, policies=config is not None)
    done = 0

    def progress(n: int, total: int) -> None:
        nonlocal done
        done = n
        if pods is not None and n >= pods:
            raise _Stop

    t0 = time.process_time()
    exp = GpuSharingExperiment(tr, engine, inflate=1.3, seed=42)
    try:
        exp.run(progress)
    except _Stop:
        pass
    return time.process_time() - t0, done


def extended_run(pods: int | None) -> tuple[float, int]:
    """The same tuned list (tuned with the DRA trace's per-GPU milli), GPUs as
    ``nvidia.com/gpu``, scheduled one by one with the same node priority."""
    share = alibaba_trace(
        str(TRACE / "openb_pod_list_default.csv"),
        str(TRACE / "openb_node_list_gpu_node.csv"),
        gpu_as="dra",
        gpu_share=True,
    )
    ext = alibaba_trace(
        str(TRACE / "openb_pod_list_default.csv"), str(TRACE / "openb_node_list_gpu_node.csv")
    )
    by_name = {tp.pod.name: tp.pod for tp in ext.arrivals}
    originals = sorted(share.arrivals, key=lambda tp: tp.pod.name)
    rng = random.Random(42)
    gpus = sum(len(sl.devices) for sl in share.cluster.resource_slices)
    tuned = tuned_workload(
        [(tp.pod, pod_demand(tp.pod)) for tp in originals], 1000 * gpus, 1.3, rng
    )
    names = sorted(n.name for n in ext.cluster.nodes)
    perm = list(range(len(names)))
    rng.shuffle(perm)
    engine = _engine(None, policies=False)
    t0 = time.process_time()
    snap, _ = engine.snapshot(ext.cluster, skip_unschedulable_nodes=False, node_tree=True)
    scheduler = Scheduler(snap, node_rank=dict(zip(names, perm, strict=True)))
    n = 0
    for pod, _ in tuned[:pods]:
        base = pod.name.split("-tuned-")[0]
        p = by_name[base]
        if p.name != pod.name:
            p = attrs.evolve(p, name=pod.name, uid=default_uid("Pod", p.namespace, pod.name))
        scheduler.schedule_one(p)
        n += 1
    return time.process_time() - t0, n


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pods", type=int)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--config")
    args = ap.parse_args(argv)
    ratios, dra_ms, ext_ms = [], [], []
    for _ in range(args.repeat):
        d_cpu, d_n = dra_run(args.pods, args.config)
        e_cpu, e_n = extended_run(args.pods)
        dra_ms.append(1000 * d_cpu / d_n)
        ext_ms.append(1000 * e_cpu / e_n)
        ratios.append(dra_ms[-1] / ext_ms[-1])
        print(
            f"dra-share {d_cpu:.1f} s CPU / {d_n} pods = {dra_ms[-1]:.2f} ms; extended-resource "
            f"{e_cpu:.1f} s / {e_n} = {ext_ms[-1]:.2f} ms; ratio {ratios[-1]:.2f}x",
            flush=True,
        )
    print(
        f"min / median: dra {min(dra_ms):.2f} / {statistics.median(dra_ms):.2f} ms, extended "
        f"{min(ext_ms):.2f} / {statistics.median(ext_ms):.2f} ms, ratio {min(ratios):.2f} / "
        f"{statistics.median(ratios):.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
