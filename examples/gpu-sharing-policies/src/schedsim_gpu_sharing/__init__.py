"""The six GPU-sharing policies of the FGD paper as schedsim Score plugins, each with its GPU
choice (schedsim's DeviceChoice point, beyond kube-scheduler 1.34).

Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
Gradient Descent" (USENIX ATC '23). Each policy is implemented from the definitions of its
artifact (``hkust-adsl/kubernetes-scheduler-simulator``, ``pkg/simulator/plugin/*_score.go``
and ``pkg/type/open-gpu-share``), as summarised in ``fgd-experiment.md``, for the Alibaba
openb trace read with ``--gpu-as dra`` (`schedsim.replay.alibaba`): each GPU is a DRA device
of the driver `DRIVER` with a `CAPACITY` of 1000 milli-GPU; a sharing pod's claim asks for
its milli-GPU of one device, a whole-GPU pod's for whole devices.

Notation (all integers, Go ``int64`` arithmetic where the artifact uses it): for a node,
``cpuLeft`` = allocatable minus requested milli-CPU, ``gpuLeft[i]`` = milli left on GPU i
(device order ``gpu-0``, ``gpu-1``...), ``gpuLeftTotal`` their sum, ``nFree`` the GPUs with
all 1000 left; for the pod, ``cpu``, ``g`` = milli per GPU, ``k`` = GPU count, ``G = g x k``.
`MAX_SPEC_CPU` = 128,000 and `MAX_SPEC_GPU` = 8,000. Memory never enters a score.

========================  ===========================================  =====================
plugin                    Score                                        GPU of a sharing pod
========================  ===========================================  =====================
`RandomScore`             PreScore draws one feasible node: 100, else  uniform among those
                          0                                            that fit
`DotProductScore`         ``int(100 x (1 - dot/2))``, dot of (cpuLeft,  tightest fit
                          gpuLeftTotal) and (cpu, G), each / max spec
`GpuClusteringScore`      75 / 50 / 25 / 0 by the node's pod tags,     tightest fit
                          ``+ 25 x (8000 - gpuLeftTotal) / 8000``
`GpuPackingScore`         shared GPUs first, then free GPUs of used    tightest fit
                          nodes, then free nodes (`gpu_packing_score`)
`BestFitScore`            ``100 x (1 - [0.5 (cpuLeft - cpu)/128000 +   tightest fit
                          0.5 (gpuLeftTotal - G)/8000])``, min-max
                          normalised
`FGDScore`                ``int(100 x sigmoid((F(before) -             the GPU with the
                          F(after)) / 1000))``, F the node's expected  highest FGD score
                          fragmentation for the target workload
========================  ===========================================  =====================

Tightest fit: the GPU with the least milli left that still fits, lowest index on ties.
Whole-GPU and multi-GPU pods take the lowest-indexed free GPUs under every policy: the
plugins return no ranking for them, so the allocator's own order (device order) decides.
CPU-only pods score 0 under GpuClustering and GpuPacking.

The GPU-sharing experiment (`schedsim.replay.experiment`) calls ``set_experiment(classes,
seed)`` on the plugins before the first pod: FGDScore takes the target workload from it
(or from its ``targetWorkload`` arg), RandomScore seeds its generator with it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

import attrs

from schedsim.api.core import Pod
from schedsim.api.core.resources import pod_requests
from schedsim.api.resource import ResourceClaim
from schedsim.framework import Code, CycleState, Handle, NodeInfo, StateKey, Status
from schedsim.framework.devices import DeviceCandidate, node_devices
from schedsim.framework.resource import Resource
from schedsim.replay.fragmentation import TargetClass, node_fragment_amount

__all__ = [
    "CAPACITY",
    "DRIVER",
    "MAX_SPEC_CPU",
    "MAX_SPEC_GPU",
    "BestFitScore",
    "DotProductScore",
    "FGDScore",
    "GpuClusteringScore",
    "GpuDemand",
    "GpuPackingScore",
    "NodeGpus",
    "RandomScore",
    "best_fit_score",
    "dot_product_score",
    "fgd_score",
    "gpu_clustering_score",
    "gpu_packing_score",
    "gpu_tag",
    "min_max_normalize",
    "tightest_fit",
]

DRIVER: Final = "gpu.alibaba.com"
"""The DRA driver of the GPUs (`schedsim.replay.alibaba.GPU_DRIVER`)."""
CAPACITY: Final = "gpu-milli"
"""Each GPU device's consumable capacity (1000)."""
MODEL_LABEL: Final = "alibaba.com/gpu-model"
"""The node label with the GPU model."""
MAX_SPEC_CPU: Final = 128_000
"""``MaxSpecCpu``: milli-CPU that normalises CPU in the scores."""
MAX_SPEC_GPU: Final = 8_000
"""``MaxSpecGpu``: milli-GPU that normalises GPU in the scores."""
MILLI: Final = 1000
MAX_NODE_SCORE: Final = 100


@attrs.frozen
class GpuDemand:
    """What the pod asks for: milli-CPU, milli-GPU per GPU (0: none) and the GPU count."""

    milli_cpu: int
    gpu_milli: int
    gpus: int

    @property
    def total_gpu_milli(self) -> int:
        """``G = g x k``."""
        return self.gpu_milli * self.gpus

    @property
    def sharing(self) -> bool:
        """One GPU, part of it."""
        return self.gpus == 1 and 0 < self.gpu_milli < MILLI


@attrs.frozen
class NodeGpus:
    """A node as the policies see it: ``cpu_left`` milli-CPU, milli left per GPU, model."""

    cpu_left: int
    gpu_left: tuple[int, ...]
    model: str = ""

    @property
    def total_left(self) -> int:
        """``gpuLeftTotal``."""
        return sum(self.gpu_left)

    @property
    def n_free(self) -> int:
        """GPUs with all 1000 left."""
        return sum(1 for x in self.gpu_left if x == MILLI)


def _claim_demand(claims: Sequence[ResourceClaim]) -> tuple[int, int]:
    """(GPUs, milli per GPU) the claims ask for from `DRIVER`'s devices: a request with a
    `CAPACITY` request is that share of one GPU, one without takes whole GPUs."""
    gpus = milli = 0
    for claim in claims:
        for request in claim.spec.requests:
            e = request.exactly
            if e is None:
                continue
            share = e.capacity_requests.get(CAPACITY)
            gpus += e.count
            milli = int(share) if share is not None else MILLI
    return gpus, milli


def _pod_claims(pod: Pod, handle: Handle) -> list[ResourceClaim]:
    manager = handle.dra_manager
    out = []
    for ref in pod.resource_claims:
        name = ref.resource_claim_name or pod.resource_claim_statuses.get(ref.name)
        if name:
            claim = manager.get_resource_claim(pod.namespace, name)
            if claim is not None:
                out.append(claim)
    return out


def _demand(pod: Pod, claims: Sequence[ResourceClaim]) -> GpuDemand:
    gpus, milli = _claim_demand(claims)
    return GpuDemand(Resource.from_resource_list(pod_requests(pod)).milli_cpu, milli, gpus)


def gpu_tag(demand: GpuDemand) -> str:
    """GpuClustering's tag of a pod: ``no-gpu``, ``share-gpu`` or ``<k>-gpu``."""
    if demand.gpus == 0:
        return "no-gpu"
    return "share-gpu" if demand.sharing else f"{demand.gpus}-gpu"


# ------------------------------------------------------------------------------ scores


def dot_product_score(node: NodeGpus, pod: GpuDemand) -> int:
    """DotProd (``dot_product_score.go`` with ``-dimext merge -norm max``): ``int(100 x (1 -
    dot / 2))`` with node ``(cpuLeft/128000, gpuLeftTotal/8000)`` and pod ``(cpu/128000,
    G/8000)``."""
    dot = (node.cpu_left / MAX_SPEC_CPU) * (pod.milli_cpu / MAX_SPEC_CPU) + (
        node.total_left / MAX_SPEC_GPU
    ) * (pod.total_gpu_milli / MAX_SPEC_GPU)
    return int(MAX_NODE_SCORE * (1 - dot / 2))


def gpu_clustering_score(node: NodeGpus, pod: GpuDemand, tags: Mapping[str, int]) -> int:
    """GpuClustering (``gpu_clustering_score.go``): 0 for a CPU-only pod; else ``25 x (8000 -
    gpuLeftTotal) / 8000`` (integers) plus 75 when the node's GPU pods all have the pod's tag,
    50 when they include it among others, 25 when it has no GPU pods, 0 otherwise.
    ``tags``: tag -> GPU pods with it on the node."""
    if pod.gpus == 0:
        return 0
    tag = gpu_tag(pod)
    fill = MAX_NODE_SCORE // 4 * (MAX_SPEC_GPU - node.total_left) // MAX_SPEC_GPU
    if tags.get(tag, 0) > 0:
        return fill + (75 if len(tags) == 1 else 50)
    return fill + (25 if not tags else 0)


def gpu_packing_score(node: NodeGpus, pod: GpuDemand) -> int:
    """GpuPacking (``gpu_packing_score.go``, ``getPackingScore``): 0 for a CPU-only pod. On a
    node whose GPUs are all free: ``max(33 - nFree, nFree)``. Otherwise the k GPUs that would
    serve it (ascending milli left, the first that fit): when any is fully free,
    ``max(50 - fully free used, 33)``; else ``max(100 - sum(left x 100 / 1000) / 10, 50)``.
    A node that cannot serve it scores 0."""
    if pod.gpu_milli <= 0:
        return 0
    n_free = node.n_free
    if n_free == len(node.gpu_left):
        return max(MAX_NODE_SCORE // 3 - n_free, n_free)
    need = pod.gpus
    free_used = 0
    used: list[int] = []
    for i in sorted(range(len(node.gpu_left)), key=lambda i: node.gpu_left[i]):
        if need == 0:
            break
        left = node.gpu_left[i]
        if pod.gpu_milli <= left:
            need -= 1
            used.append(i)
            if left == MILLI:
                free_used += 1
    if need:
        return 0
    if free_used:
        return max(MAX_NODE_SCORE // 2 - free_used, MAX_NODE_SCORE // 3)
    ratio = sum(node.gpu_left[i] * 100 // MILLI for i in used)
    return max(MAX_NODE_SCORE - ratio // 10, MAX_NODE_SCORE // 2)


def best_fit_score(node: NodeGpus, pod: GpuDemand) -> int:
    """BestFit's raw score (``best_fit_score.go``): ``int(100 x (1 - [0.5 (cpuLeft - cpu) /
    128000 + 0.5 (gpuLeftTotal - G) / 8000]))``; `min_max_normalize` follows."""
    s = (
        0.5 * (node.cpu_left - pod.milli_cpu) / MAX_SPEC_CPU
        + 0.5 * (node.total_left - pod.total_gpu_milli) / MAX_SPEC_GPU
    )
    return int((1.0 - s) * MAX_NODE_SCORE)


def min_max_normalize(scores: dict[str, int]) -> None:
    """The artifact's NormalizeScore: ``(s - lowest) x 100 / (highest - lowest)`` (integer),
    all 0 when they are equal."""
    if not scores:
        return
    lo, hi = min(scores.values()), max(scores.values())
    for k, v in scores.items():
        scores[k] = 0 if hi == lo else (v - lo) * MAX_NODE_SCORE // (hi - lo)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def fgd_score(
    node: NodeGpus, pod: GpuDemand, classes: Sequence[TargetClass]
) -> tuple[int, int | None]:
    """FGD (``fgd_score.go``, ``calculateGpuShareFragExtendScore``): the score and, for a
    sharing pod, the GPU index it would take. ``F`` = `node_fragment_amount` (milli);
    ``score = int(100 x sigmoid((F(before) - F(after)) / 1000))``. "After": the pod's CPU
    taken and, for a sharing pod, its milli taken from each GPU that fits in turn (the GPU
    of the highest score, lowest index on ties); otherwise from the k lowest-indexed free
    GPUs (a CPU-only pod changes F through its CPU alone)."""
    before = node_fragment_amount(node.cpu_left, node.gpu_left, node.model, classes)
    cpu = node.cpu_left - pod.milli_cpu
    if pod.sharing:
        best, gpu = 0, None
        for i, left in enumerate(node.gpu_left):
            if left >= pod.gpu_milli:
                after_left = list(node.gpu_left)
                after_left[i] -= pod.gpu_milli
                after = node_fragment_amount(cpu, after_left, node.model, classes)
                score = int(_sigmoid((before - after) / 1000) * MAX_NODE_SCORE)
                if gpu is None or score > best:
                    best, gpu = score, i
        return best, gpu
    after_left = list(node.gpu_left)
    need = pod.gpus
    for i, left in enumerate(after_left):
        if need == 0:
            break
        if left == MILLI:
            after_left[i] = 0
            need -= 1
    after = node_fragment_amount(cpu, after_left, node.model, classes)
    return int(_sigmoid((before - after) / 1000) * MAX_NODE_SCORE), None


def tightest_fit(gpu_left: Sequence[int], milli: int) -> int | None:
    """The GPU with the least milli left that still holds ``milli`` (lowest index on ties)
    (``allocateGpuIdBasedOnBestFit``), or None."""
    best = None
    for i, left in enumerate(gpu_left):
        if left >= milli and (best is None or left < gpu_left[best]):
            best = i
    return best


# ------------------------------------------------------------------------------ plugins

_DEMAND: StateKey[GpuDemand] = StateKey("PreScoreGpuSharingDemand")
_NO_TARGET = "no target workload: give targetWorkload, or run it with schedsim replay --inflate"


class _Policy:
    """What the six plugins share: the pod's demand (PreScore), the node's GPUs (cached per
    NodeInfo generation), the GPU choice for sharing pods (DeviceChoice)."""

    name: ClassVar[str] = ""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        unknown = sorted(set(args) - {"apiVersion", "kind", *self._ARGS})
        if unknown:
            raise ValueError(f"unknown {self.name} args field(s): {', '.join(unknown)}")
        self.handle = handle
        self._nodes: dict[tuple[str, int], NodeGpus] = {}

    _ARGS: ClassVar[frozenset[str]] = frozenset()

    def set_experiment(self, classes: Sequence[TargetClass], seed: int) -> None:
        """Called by the GPU-sharing experiment before its first pod (see the module)."""
        del classes, seed

    def node_gpus(self, node_info: NodeInfo) -> NodeGpus:
        """The node's `NodeGpus` (from `node_devices`: its slices and its pods' claims)."""
        node = node_info.node
        assert node is not None
        key = (node.name, node_info.generation)
        got = self._nodes.get(key)
        if got is None:
            left = tuple(
                int(d.left(CAPACITY)) if CAPACITY in d.capacity else (0 if d.shares else MILLI)
                for d in node_devices(node_info, DRIVER)
            )
            cpu_left = node_info.allocatable.milli_cpu - node_info.requested.milli_cpu
            got = NodeGpus(cpu_left, left, node.labels.get(MODEL_LABEL, ""))
            if len(self._nodes) > 100_000:
                self._nodes.clear()
            self._nodes[key] = got
        return got

    def schedsim_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Read the pod's GPU demand from its claims once per attempt."""
        del nodes
        state[_DEMAND] = _demand(pod, _pod_claims(pod, self.handle))
        return None

    def demand(self, state: CycleState, pod: Pod) -> GpuDemand:
        """The pod's demand, read from its claims once per attempt (by PreScore when the
        plugin is enabled there, else by the first Score call)."""
        got = state.get(_DEMAND)
        if got is None:
            got = state[_DEMAND] = _demand(pod, _pod_claims(pod, self.handle))
        return got

    def choose_gpu(self, state: CycleState, node: NodeGpus, pod: GpuDemand) -> int | None:
        """The GPU index a sharing pod takes on ``node`` (default: tightest fit)."""
        del state
        return tightest_fit(node.gpu_left, pod.gpu_milli)

    def schedsim_choose_devices(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        claim: ResourceClaim,
        request: str,
        candidates: Sequence[DeviceCandidate],
    ) -> Sequence[int] | None:
        """A sharing pod's GPU first (`choose_gpu`); no ranking for whole GPUs."""
        del request
        gpus, milli = _claim_demand([claim])
        if not (gpus == 1 and 0 < milli < MILLI):
            return None
        node = self.node_gpus(node_info)
        demand = attrs.evolve(self.demand(state, pod), gpu_milli=milli, gpus=1)
        i = self.choose_gpu(state, node, demand)
        if i is None:
            return None
        devices = node_devices(node_info, DRIVER)
        name = devices[i].name
        first = [j for j, c in enumerate(candidates) if c.device.name == name]
        return first or None


class RandomScore(_Policy):
    """Random (``random_score.go``): PreScore draws one feasible node uniformly, it scores
    100 and every other 0; a sharing pod takes a uniformly random GPU that fits. Seeded
    (``seed`` arg, default 0; the experiment's seed in an experiment): the artifact's picks
    are not reproducible, these are."""

    name: ClassVar[str] = "RandomScore"
    _ARGS: ClassVar[frozenset[str]] = frozenset({"seed"})
    _PICK: ClassVar[StateKey[str]] = StateKey("PreScoreRandomScore")

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        super().__init__(args, handle)
        seed = args.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"seed: expected an integer, got {seed!r}")
        self.rng = random.Random(seed)

    def set_experiment(self, classes: Sequence[TargetClass], seed: int) -> None:
        """Seed the generator with the experiment's seed."""
        del classes
        self.rng = random.Random(seed)

    def schedsim_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        super().schedsim_pre_score(state, pod, nodes)
        if nodes:
            chosen = nodes[self.rng.randrange(len(nodes))].node
            state[self._PICK] = chosen.name if chosen is not None else ""
        return None

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        return MAX_NODE_SCORE if node is not None and state.get(self._PICK) == node.name else 0

    def choose_gpu(self, state: CycleState, node: NodeGpus, pod: GpuDemand) -> int | None:
        fit = [i for i, left in enumerate(node.gpu_left) if left >= pod.gpu_milli]
        return fit[self.rng.randrange(len(fit))] if fit else None


class DotProductScore(_Policy):
    """DotProd (Tetris-style alignment; `dot_product_score`), tightest-fit GPU."""

    name: ClassVar[str] = "DotProductScore"

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return dot_product_score(self.node_gpus(node_info), self.demand(state, pod))


class GpuClusteringScore(_Policy):
    """GpuClustering (pods of one GPU shape together; `gpu_clustering_score`), tightest-fit
    GPU."""

    name: ClassVar[str] = "GpuClusteringScore"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        super().__init__(args, handle)
        self._tags: dict[tuple[str, int], dict[str, int]] = {}

    def node_tags(self, node_info: NodeInfo) -> dict[str, int]:
        """Tag -> GPU pods with it on the node (from its pods' allocated claims)."""
        node = node_info.node
        assert node is not None
        key = (node.name, node_info.generation)
        got = self._tags.get(key)
        if got is None:
            got = {}
            for pi in node_info.pods:
                claims = getattr(pi, "needed_resource_claims", ())
                tag = gpu_tag(_demand(pi.pod, claims))
                if tag != "no-gpu":
                    got[tag] = got.get(tag, 0) + 1
            if len(self._tags) > 100_000:
                self._tags.clear()
            self._tags[key] = got
        return got

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return gpu_clustering_score(
            self.node_gpus(node_info), self.demand(state, pod), self.node_tags(node_info)
        )


class GpuPackingScore(_Policy):
    """GpuPacking (shared GPUs, then free GPUs of used nodes, then free nodes;
    `gpu_packing_score`), tightest-fit GPU."""

    name: ClassVar[str] = "GpuPackingScore"

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return gpu_packing_score(self.node_gpus(node_info), self.demand(state, pod))


class BestFitScore(_Policy):
    """BestFit (least CPU and GPU left after the pod; `best_fit_score`, min-max
    normalised), tightest-fit GPU."""

    name: ClassVar[str] = "BestFitScore"

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return best_fit_score(self.node_gpus(node_info), self.demand(state, pod))

    def schedsim_normalize_score(
        self, state: CycleState, pod: Pod, scores: dict[str, int]
    ) -> Status | None:
        min_max_normalize(scores)
        return None


class FGDScore(_Policy):
    """FGD (fragmentation gradient descent; `fgd_score`): the node and GPU whose use
    increases the node's expected fragmentation for the target workload least.

    Args (``pluginConfig``): ``targetWorkload`` (optional): a list of ``{milliCpu, gpuMilli,
    gpus, models, weight}``; without it the experiment's (`set_experiment`) is used, and
    Score fails with an Error status when there is none.
    """

    name: ClassVar[str] = "FGDScore"
    _ARGS: ClassVar[frozenset[str]] = frozenset({"targetWorkload"})

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        super().__init__(args, handle)
        self.classes: tuple[TargetClass, ...] | None = None
        raw = args.get("targetWorkload")
        if raw is not None:
            self.classes = _target_classes(raw)
        self._memo: dict[tuple[NodeGpus, GpuDemand], tuple[int, int | None]] = {}

    def set_experiment(self, classes: Sequence[TargetClass], seed: int) -> None:
        """Use the experiment's target workload unless ``targetWorkload`` was given."""
        del seed
        if self.classes is None:
            self.classes = tuple(classes)
        self._memo.clear()

    def _score(self, node: NodeGpus, pod: GpuDemand) -> tuple[int, int | None]:
        assert self.classes is not None
        key = (node, pod)
        got = self._memo.get(key)
        if got is None:
            got = fgd_score(node, pod, self.classes)
            if len(self._memo) > 200_000:
                self._memo.clear()
            self._memo[key] = got
        return got

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        if self.classes is None:
            return Status(
                Code.Error,
                (_NO_TARGET,),
                self.name,
            )
        return self._score(self.node_gpus(node_info), self.demand(state, pod))[0]

    def choose_gpu(self, state: CycleState, node: NodeGpus, pod: GpuDemand) -> int | None:
        if self.classes is None:
            return tightest_fit(node.gpu_left, pod.gpu_milli)
        return self._score(node, pod)[1]


def _target_classes(raw: Any) -> tuple[TargetClass, ...]:
    if not isinstance(raw, list):
        raise ValueError("targetWorkload: expected a list")
    out = []
    for i, c in enumerate(raw):
        where = f"targetWorkload[{i}]"
        if not isinstance(c, Mapping):
            raise ValueError(f"{where}: expected a mapping")
        unknown = sorted(set(c) - {"milliCpu", "gpuMilli", "gpus", "models", "weight"})
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {', '.join(unknown)}")
        try:
            out.append(
                TargetClass(
                    int(c.get("milliCpu", 0)),
                    int(c.get("gpuMilli", 0)),
                    int(c.get("gpus", 0)),
                    tuple(str(m) for m in c.get("models", ())),
                    float(c["weight"]),
                )
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{where}: {e}") from None
    return tuple(out)
