"""Workload controllers to pods, as the controllers and the API server would create them.

`expand_workloads` adds to a `Manifests` the pods its Deployments, ReplicaSets,
ReplicationControllers, StatefulSets, DaemonSets and Jobs would run, and the pending
PersistentVolumeClaims of StatefulSet ``volumeClaimTemplates``:

- Deployment: its ReplicaSet ``<deployment>-<pod-template-hash>`` (the hash is
  ``controller.ComputeHash``'s: fnv32a of the template, then ``rand.SafeEncodeString``), whose
  pods carry the ``pod-template-hash`` label. When the input already holds ReplicaSets the
  Deployment controls, new pods go to the newest one (highest
  ``deployment.kubernetes.io/revision``) and no ReplicaSet is made.
- ReplicaSet, ReplicationController: ``replicas`` pods named ``<owner>-<5 characters>``
  (``SimpleNameGenerator``: the base cut to 58 characters, a suffix from
  ``rand.String``'s alphabet), made deterministic: the suffix is derived from the owner's
  UID and the pod's index.
- StatefulSet: pods ``<set>-<ordinal>`` from ``spec.ordinals.start``, labelled
  ``statefulset.kubernetes.io/pod-name`` and ``apps.kubernetes.io/pod-index``; each
  ``volumeClaimTemplates`` entry becomes a volume of the pod backed by the pending claim
  ``<template>-<set>-<ordinal>`` (created unless the input has it).
- DaemonSet: one pod per node the controller targets (`daemon_set_should_run`:
  ``NodeShouldRunDaemonPod``), built by `daemon_set_pod`.
- Job: ``min(parallelism, completions - succeeded)`` pods (``Job.wanted_active``); Indexed
  Jobs name them ``<job>-<index>-<suffix>`` with the completion-index annotation and label.

Every pod has an ownerReference to its controller with ``controller: true`` (so scale-down's
drain rules see it) and the API server's pod defaults (`schedsim.api.loading.defaults`). Pods the
input already has that a controller owns (ownerReference with ``controller: true``, same kind
and name) and that are not terminal count against its replicas:
nothing is duplicated. Controllers create every pod at once (the settled state; OrderedReady
StatefulSets wait for readiness in a real cluster, which does not change where pods fit).

Differences from Kubernetes, all deliberate: names and hashes are deterministic (the same
input gives the same pods), and ComputeHash hashes the template's canonical JSON where Go
hashes the typed struct's ``spew`` dump, so hash values differ from a real cluster's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, cast

import attrs

from schedsim.api.apps.controller_names import (
    CONTROLLER_REVISION_HASH_LABEL,
    JOB_COMPLETION_INDEX,
    POD_INDEX_LABEL,
    POD_TEMPLATE_HASH_LABEL,
    REVISION_ANNOTATION,
    STATEFUL_SET_POD_NAME_LABEL,
    compute_hash,
    fnv32a,
    pods_prefix,
)
from schedsim.api.apps.daemonset_pods import (
    DAEMON_SET_TOLERATIONS,
    daemon_set_pod,
    daemon_set_should_run,
)
from schedsim.api.core import (
    OwnerReference,
    Pod,
    Volume,
)
from schedsim.api.core.nodeaffinity import OBJECT_NAME_FIELD
from schedsim.api.errors import ManifestError
from schedsim.api.loading.defaults import default_pod, generate_name
from schedsim.api.storage import PersistentVolumeClaim

if TYPE_CHECKING:
    from schedsim.api.loading.loader import Manifests
from schedsim.api.apps.workloads import (
    DaemonSet,
    Deployment,
    Job,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
    Workload,
    default_uid,
)

__all__ = [
    "DAEMON_SET_TOLERATIONS",
    "POD_TEMPLATE_HASH_LABEL",
    "compute_hash",
    "daemon_set_pod",
    "daemon_set_should_run",
    "expand_workloads",
    "fnv32a",
    "new_job_pod",
    "unexpanded_warning",
]

# --------------------------------------------------------------------------- expansion


@attrs.define
class _Owned:
    """Pods of the input indexed by their controller."""

    active: dict[tuple[str, str, str], list[Pod]] = attrs.field(factory=dict)
    names: set[tuple[str, str]] = attrs.field(factory=set)
    succeeded: dict[tuple[str, str, str], int] = attrs.field(factory=dict)

    @classmethod
    def of(cls, pods: Iterable[Pod]) -> _Owned:
        out = cls()
        for pod in pods:
            out.names.add((pod.namespace, pod.name))
            ref = next((r for r in pod.owner_references if r.controller), None)
            if ref is None:
                continue
            key = (ref.kind, pod.namespace, ref.name)
            if pod.phase == "Succeeded":
                out.succeeded[key] = out.succeeded.get(key, 0) + 1
            if not pod.is_terminal:
                out.active.setdefault(key, []).append(pod)
        return out

    def of_controller(self, w: Workload) -> list[Pod]:
        """Active pods ``w`` controls (by kind, namespace and name: UIDs of hand-written
        inputs are made up, so they are not compared)."""
        return self.active.get((w.kind, w.namespace, w.name), [])


@attrs.define
class _Expander:
    m: Manifests
    owned: _Owned
    pods: list[tuple[Pod, str]] = attrs.field(factory=list)
    claims: list[tuple[PersistentVolumeClaim, str]] = attrs.field(factory=list)
    replica_sets: list[tuple[ReplicaSet, str]] = attrs.field(factory=list)
    warnings: list[str] = attrs.field(factory=list)
    # id(controller) -> (defaulted template pod, owner references, the controller itself,
    # kept so the id stays its own)
    protos: dict[int, tuple[Pod, tuple[OwnerReference, ...], Workload]] = attrs.field(factory=dict)

    def name_for(self, namespace: str, base: str, seed: str) -> str:
        """A generated name not taken in ``namespace`` (a taken one is hashed again)."""
        for attempt in range(100):
            name = generate_name(base, f"{seed}#{attempt}" if attempt else seed)
            if (namespace, name) not in self.owned.names:
                self.owned.names.add((namespace, name))
                return name
        raise AssertionError("no free generated name after 100 attempts")  # pragma: no cover

    def new_pod(
        self,
        owner: Workload,
        name: str,
        source: str,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        **changes: Any,
    ) -> Pod:
        template = owner.template
        proto = self.protos.get(id(owner))
        if proto is None:  # once per controller: defaults and owner reference
            proto = self.protos[id(owner)] = (
                default_pod(template.pod),
                (owner.controller_ref(),),
                owner,
            )
        pod = attrs.evolve(
            proto[0],
            name=name,
            uid=default_uid("Pod", owner.namespace, name),
            labels=labels if labels is not None else template.labels,
            annotations=annotations if annotations is not None else template.annotations,
            owner_references=proto[1],
            **changes,
        )
        self.pods.append((pod, source))
        return pod

    def replicas(self, owner: ReplicaSet | ReplicationController, want: int, have: int) -> None:
        source = self.m.source_of(owner)
        for i in range(have, want):
            name = self.name_for(owner.namespace, pods_prefix(owner.name), f"{owner.uid}/{i}")
            self.new_pod(owner, name, source)

    # ------------------------------------------------------------------ per kind

    def deployment(self, d: Deployment, managed: list[ReplicaSet]) -> None:
        orphans: list[Pod] = []
        if not managed:
            managed = [_replica_set_for(d)]
            self.replica_sets.append((managed[0], self.m.source_of(d)))
            orphans = self.orphans_of(d, managed[0].name)
        have = sum(len(self.owned.of_controller(rs)) for rs in managed) + len(orphans)
        if have < d.replicas:
            self.replicas_into(max(managed, key=_revision), d, d.replicas - have)

    def orphans_of(self, d: Deployment, made: str) -> list[Pod]:
        """Active pods controlled by a ReplicaSet the input does not have, named
        ``<deployment>-...`` and selected by the Deployment: its ReplicaSet's pods (as
        ``kubectl get deploy,pods`` lists them, without the ReplicaSet). They count against
        the Deployment's replicas, as the controller sees them, with a warning. ``made``: the
        ReplicaSet schedsim makes for ``d`` (its pods already count)."""
        present = {rs.name for rs in self.m.replica_sets if rs.namespace == d.namespace}
        present.add(made)
        found: dict[str, list[Pod]] = {}
        for (kind, ns, name), pods in self.owned.active.items():
            if kind != "ReplicaSet" or ns != d.namespace or name in present:
                continue
            if not name.startswith(f"{d.name}-"):
                continue
            mine = [p for p in pods if d.selector.matches(p.labels)]
            if mine:
                found[name] = mine
        if found:
            pods = [p for name in sorted(found) for p in found[name]]
            self.warnings.append(
                f"{self.m.source_of(d)}: Deployment {d.key}: {len(pods)} pod(s) (e.g. "
                f"{pods[0].key}) are controlled by ReplicaSet(s) {', '.join(sorted(found))} "
                "that the input does not have; counted as the Deployment's pods, not created "
                "again (add the ReplicaSets to the input to silence this)"
            )
        return [p for name in sorted(found) for p in found[name]]

    def replicas_into(self, rs: ReplicaSet, d: Deployment, count: int) -> None:
        have = len(self.owned.of_controller(rs))
        source = self.m.source_of(d)
        for i in range(have, have + count):
            name = self.name_for(rs.namespace, pods_prefix(rs.name), f"{rs.uid}/{i}")
            self.new_pod(rs, name, source)

    def stateful_set(self, ss: StatefulSet) -> None:
        source = self.m.source_of(ss)
        existing_claims = {(c.namespace, c.name) for c in self.m.persistent_volume_claims}
        revision = f"{ss.name}-{compute_hash(ss.template.raw)}"
        for ordinal in range(ss.ordinals_start, ss.ordinals_start + ss.replicas):
            name = f"{ss.name}-{ordinal}"
            volumes = list(ss.template.pod.volumes)
            for tname, claim, _ in ss.volume_claim_templates:
                claim_name = f"{tname}-{ss.name}-{ordinal}"
                volumes = [v for v in volumes if v.name != tname]
                volumes.append(
                    Volume(
                        name=tname,
                        persistent_volume_claim=claim_name,
                        source={"persistentVolumeClaim": {"claimName": claim_name}},
                    )
                )
                if (ss.namespace, claim_name) not in existing_claims:
                    existing_claims.add((ss.namespace, claim_name))
                    self.claims.append((_claim_for(ss, claim, claim_name), source))
            if (ss.namespace, name) in self.owned.names:
                if not any(p.name == name for p in self.owned.of_controller(ss)):
                    self.warnings.append(
                        f"{source}: StatefulSet {ss.key}: pod {ss.namespace}/{name} exists and "
                        "is not controlled by the StatefulSet; not created again"
                    )
                continue
            self.owned.names.add((ss.namespace, name))
            labels = {
                **ss.template.labels,
                STATEFUL_SET_POD_NAME_LABEL: name,
                POD_INDEX_LABEL: str(ordinal),
                CONTROLLER_REVISION_HASH_LABEL: revision,
            }
            self.new_pod(ss, name, source, labels=labels, volumes=tuple(volumes))

    def daemon_set(self, ds: DaemonSet) -> None:
        source = self.m.source_of(ds)
        covered = {_daemon_node(p) for p in self.owned.of_controller(ds)}
        for node in self.m.nodes:
            if node.name in covered or not daemon_set_should_run(ds, node):
                continue
            name = self.name_for(ds.namespace, pods_prefix(ds.name), f"{ds.uid}/{node.name}")
            pod = daemon_set_pod(ds, node.name, name)
            self.pods.append((pod, source))

    def job(self, job: Job) -> None:
        source = self.m.source_of(job)
        active = self.owned.of_controller(job)
        done = max(job.succeeded, self.owned.succeeded.get(("Job", job.namespace, job.name), 0))
        job = attrs.evolve(job, succeeded=done)
        want = job.wanted_active - len(active)
        if want <= 0:
            return
        if job.completion_mode != "Indexed":
            for i in range(len(active), len(active) + want):
                name = self.name_for(job.namespace, pods_prefix(job.name), f"{job.uid}/{i}")
                self.new_pod(job, name, source)
            return
        assert job.completions is not None  # decoding requires it for Indexed
        taken = {p.annotations.get(JOB_COMPLETION_INDEX) for p in active}
        indexes = [i for i in range(job.completions) if str(i) not in taken][:want]
        for index in indexes:
            base = f"{job.name}-{index}-"
            name = self.name_for(job.namespace, base, f"{job.uid}/{index}")
            labels = {**job.template.labels, JOB_COMPLETION_INDEX: str(index)}
            annotations = {**job.template.annotations, JOB_COMPLETION_INDEX: str(index)}
            self.new_pod(job, name, source, labels=labels, annotations=annotations)


def new_job_pod(job: Job, n: int, taken: set[tuple[str, str]]) -> Pod:
    """One more pod of ``job``, as the Job controller creates it and `expand_workloads` makes
    them: NonIndexed, ``n`` is a serial (name ``<job>-<suffix>``); Indexed, ``n`` is the
    completion index (name ``<job>-<n>-<suffix>``, ``batch.kubernetes.io/job-completion-index``
    label and annotation). ``taken``: the (namespace, name) pairs in use; the new name is
    added to it."""
    x = _Expander(cast("Manifests", None), _Owned(names=taken))  # new_pod never reads m
    if job.completion_mode == "Indexed":
        name = x.name_for(job.namespace, f"{job.name}-{n}-", f"{job.uid}/{n}")
        labels = {**job.template.labels, JOB_COMPLETION_INDEX: str(n)}
        annotations = {**job.template.annotations, JOB_COMPLETION_INDEX: str(n)}
        return x.new_pod(job, name, "", labels=labels, annotations=annotations)
    name = x.name_for(job.namespace, pods_prefix(job.name), f"{job.uid}/{n}")
    return x.new_pod(job, name, "")


def _revision(rs: ReplicaSet) -> int:
    try:
        return int(rs.annotations.get(REVISION_ANNOTATION, "0"))
    except ValueError:
        return 0


def _replica_set_for(d: Deployment) -> ReplicaSet:
    """The ReplicaSet the Deployment controller creates (``getNewReplicaSet``): named
    ``<deployment>-<hash>``, template and selector labelled with the pod-template-hash,
    controlled by the Deployment."""
    h = compute_hash(d.template.raw)
    name = f"{d.name}-{h}"
    labels = {**d.template.labels, POD_TEMPLATE_HASH_LABEL: h}
    template = attrs.evolve(
        d.template, labels=labels, pod=attrs.evolve(d.template.pod, labels=labels)
    )
    selector = attrs.evolve(
        d.selector, match_labels={**d.selector.match_labels, POD_TEMPLATE_HASH_LABEL: h}
    )
    return ReplicaSet(
        name=name,
        namespace=d.namespace,
        uid=default_uid("ReplicaSet", d.namespace, name),
        labels=labels,
        annotations={REVISION_ANNOTATION: "1"},
        owner_references=(d.controller_ref(),),
        selector=selector,
        template=template,
        replicas=d.replicas,
    )


def _claim_for(ss: StatefulSet, claim: PersistentVolumeClaim, name: str) -> PersistentVolumeClaim:
    """The claim the StatefulSet controller creates for one ordinal (``getPersistentVolumeClaims``):
    pending (no volume), owned by the set only when ``whenDeleted`` is ``Delete``."""
    owners: tuple[OwnerReference, ...] = ()
    if ss.retention[0] == "Delete":
        ref = ss.controller_ref()
        owners = (attrs.evolve(ref, controller=False),)
    return attrs.evolve(
        claim,
        name=name,
        namespace=ss.namespace,
        uid=default_uid("PersistentVolumeClaim", ss.namespace, name),
        owner_references=owners,
        volume_name="",
    )


def _daemon_node(pod: Pod) -> str:
    """The node a DaemonSet pod is for: its nodeName, else its matchFields node affinity."""
    if pod.node_name:
        return pod.node_name
    na = pod.affinity.node_affinity if pod.affinity else None
    for term in (na.required or ()) if na else ():
        for req in term.match_fields:
            if req.key == OBJECT_NAME_FIELD and req.operator == "In" and len(req.values) == 1:
                return req.values[0]
    return pod.nominated_node_name


def expand_workloads(m: Manifests) -> None:
    """Add the pods (and StatefulSet claims, and Deployments' ReplicaSets) the input's
    workload controllers would create to ``m`` (see the module docstring).

    Each object is recorded as coming from its controller's file (`Manifests.source_of`).
    Objects are appended after the input's own, controllers in kind order (Deployments,
    ReplicaSets, ReplicationControllers, StatefulSets, DaemonSets, Jobs), each in input
    order. A pod or claim whose name the input already uses is not made again.

    Args:
        m: loaded manifests; modified in place (pods, persistent_volume_claims,
            replica_sets, warnings).

    Raises:
        ManifestError: the controllers together would create more than
            `MAX_EXPANDED_PODS` pods (``FILE: KIND NS/NAME: spec.replicas: ...`` naming the
            one that crosses it), checked before anything is made.
    """
    _check_expansion_size(m)
    x = _Expander(m, _Owned.of(m.pods))
    deployments = {(d.namespace, d.name): d for d in m.deployments}
    managed: dict[tuple[str, str], list[ReplicaSet]] = {}
    standalone: list[ReplicaSet] = []
    for rs in m.replica_sets:
        ref = rs.controller
        if ref is not None and ref.kind == "Deployment" and (rs.namespace, ref.name) in deployments:
            managed.setdefault((rs.namespace, ref.name), []).append(rs)
        else:
            standalone.append(rs)
    for d in m.deployments:
        x.deployment(d, managed.get((d.namespace, d.name), []))
    for rs in standalone:
        x.replicas(rs, rs.replicas, len(x.owned.of_controller(rs)))
    for rc in m.replication_controllers:
        x.replicas(rc, rc.replicas, len(x.owned.of_controller(rc)))
    for ss in m.stateful_sets:
        x.stateful_set(ss)
    for ds in m.daemon_sets:
        x.daemon_set(ds)
    for job in m.jobs:
        x.job(job)
    for rs, source in x.replica_sets:
        m.add(rs, source)
    for claim, source in x.claims:
        m.add(claim, source)
    for pod, source in x.pods:
        m.add(pod, source)
    m.warnings.extend(x.warnings)


_CONTROLLER_KINDS: Final = (
    ("Deployment", "deployments"),
    ("ReplicaSet", "replica_sets"),
    ("ReplicationController", "replication_controllers"),
    ("StatefulSet", "stateful_sets"),
    ("DaemonSet", "daemon_sets"),
    ("Job", "jobs"),
)


def unexpanded_warning(m: Manifests) -> list[str]:
    """What a run with workload expansion off leaves out: one warning counting the workload
    controllers of ``m`` whose pods were not created (empty when there are none), so that an
    input of Deployments does not silently schedule nothing."""
    counts = [
        f"{len(objs)} {kind}" for kind, attr in _CONTROLLER_KINDS if (objs := getattr(m, attr))
    ]
    if not counts:
        return []
    return [
        f"workload expansion is off (--no-expand-workloads): the pods of {', '.join(counts)} "
        "were not created; only the input's own pods are scheduled"
    ]


MAX_EXPANDED_PODS: Final = 1_000_000
"""The most pods schedsim makes from workload controllers in one input: far beyond any
cluster's (kube-scheduler's scalability limit is 150,000 pods), and what a run can hold in
memory; `replicas: 1000000000` would otherwise fill memory for minutes."""


def _check_expansion_size(m: Manifests) -> None:
    total = 0
    wanted: list[tuple[Any, str, int]] = [
        *((o, "spec.replicas", o.replicas) for o in m.deployments),
        *((o, "spec.replicas", o.replicas) for o in m.replica_sets),
        *((o, "spec.replicas", o.replicas) for o in m.replication_controllers),
        *((o, "spec.replicas", o.replicas) for o in m.stateful_sets),
        *((o, "spec.parallelism", o.wanted_active) for o in m.jobs),
    ]
    for obj, field, n in wanted:
        total += n
        if total > MAX_EXPANDED_PODS:
            raise ManifestError(
                f"{m.source_of(obj)}: {obj.kind} {obj.namespace}/{obj.name}: {field}: {n} "
                f"pods would take the input past schedsim's limit of {MAX_EXPANDED_PODS:,} "
                "pods made from workload controllers (use --no-expand-workloads to list pods "
                "yourself)"
            )
