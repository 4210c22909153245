"""RuntimeClass and LimitRanger admission of the pods read from manifests (issue 30).

Expected values come from Kubernetes' own documentation and sources:

- "Pod Overhead" (kubernetes.io/docs/concepts/scheduling-eviction/pod-overhead): RuntimeClass
  ``kata-fc`` with ``overhead.podFixed`` ``{memory: 120Mi, cpu: 250m}``; the pod ``test-pod``
  (limits 500m/100Mi and 1500m/100Mi, so requests the same) gets ``spec.overhead``
  ``map[cpu:250m memory:120Mi]`` and the scheduler looks for a node with 2.25 CPU and 320 MiB.
- plugin/pkg/admission/runtimeclass/admission.go: ``pod rejected: RuntimeClass "x" not
  found``, ``pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead``,
  the ``conflict: runtimeClass.scheduling.nodeSelector[...]`` message, MergeTolerations.
- "Configure Default CPU Requests and Limits for a Namespace": LimitRange default cpu 1,
  defaultRequest 0.5; a container without resources gets request 500m and limit 1; one with
  only a limit gets request = limit; one with only a request (0.75) gets limit 1.
- "Configure Minimum and Maximum CPU Constraints for a Namespace": max 800m, min 200m; the
  stored LimitRange has default and defaultRequest 800m (SetDefaults_LimitRangeItem); a limit
  of 1.5 is refused with ``maximum cpu usage per Container is 800m, but limit is 1500m``, a
  request of 100m with ``minimum cpu usage per Container is 200m, but request is 100m``.
- "Limit Ranges" (concepts/policy/limit-range): a default limit of 500m and a request of 700m
  make the pod invalid: ``must be less than or equal to cpu limit`` (of 500m).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from schedsim.api.core import Toleration
from schedsim.api.errors import ManifestError
from schedsim.api.loading.loader import load_text
from schedsim.api.runtimeclass import merge_tolerations
from schedsim.engine import Cluster, Engine

MI = 2**20
# how an input pod's LimitRanger refusal says to go on (schedsim's, not upstream's words)
LR = " (fix the pod's resources, or the LimitRange of its namespace)"

KATA = """apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kata-fc}
handler: kata-fc
overhead:
  podFixed: {memory: "120Mi", cpu: "250m"}
"""

DOCS_POD = """---
apiVersion: v1
kind: Pod
metadata: {name: test-pod}
spec:
  runtimeClassName: kata-fc
  containers:
  - name: busybox-ctr
    image: busybox:1.28
    resources:
      limits: {cpu: 500m, memory: 100Mi}
  - name: nginx-ctr
    image: nginx
    resources:
      limits: {cpu: 1500m, memory: 100Mi}
"""


def _node(cpu: str, memory: str) -> str:
    return (
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        f"status: {{allocatable: {{cpu: {cpu!r}, memory: {memory}, pods: '110'}}}}\n"
    )


def _placed(text: str) -> dict[str, str | None]:
    cluster = Cluster.from_text(text, "t.yaml")
    return {o.pod.name: o.node_name for o in Engine().simulate(cluster).outcomes}


def _error(text: str) -> str:
    with pytest.raises(ManifestError) as info:
        load_text(text, "t.yaml")
    return str(info.value)


# --------------------------------------------------------------------------- RuntimeClass


def test_runtime_class_sets_the_docs_overhead() -> None:
    m = load_text(KATA + DOCS_POD, "t.yaml")
    assert m.warnings == []
    assert m.pods[0].overhead == {"memory": 120 * MI, "cpu": Fraction(1, 4)}


def test_overhead_decides_whether_the_docs_pod_fits() -> None:
    # 2250m CPU and 320Mi: the containers' requests plus the overhead
    assert _placed(KATA + DOCS_POD + _node("2250m", "320Mi")) == {"test-pod": "n1"}
    assert _placed(KATA + DOCS_POD + _node("2249m", "320Mi")) == {"test-pod": None}
    assert _placed(KATA + DOCS_POD + _node("2250m", "319Mi")) == {"test-pod": None}
    # without the class's overhead (a class with none) the pod needs 2 CPU and 200Mi only
    bare = KATA.replace('overhead:\n  podFixed: {memory: "120Mi", cpu: "250m"}\n', "")
    assert _placed(bare + DOCS_POD + _node("2", "200Mi")) == {"test-pod": "n1"}


def test_missing_runtime_class_is_refused_for_a_pending_pod() -> None:
    assert _error(DOCS_POD) == (
        "t.yaml: Pod default/test-pod: spec.runtimeClassName: pod rejected: RuntimeClass "
        '"kata-fc" not found (add the RuntimeClass to the input, or remove '
        "spec.runtimeClassName)"
    )


def test_a_different_overhead_is_refused_and_an_equal_one_kept() -> None:
    differs = DOCS_POD.replace("  runtimeClassName:", "  overhead: {cpu: 1}\n  runtimeClassName:")
    assert _error(KATA + differs) == (
        "t.yaml: Pod default/test-pod: spec.overhead: pod rejected: Pod's Overhead doesn't "
        "match RuntimeClass's defined Overhead (make the pod agree with its RuntimeClass, or "
        "change the RuntimeClass)"
    )
    same = DOCS_POD.replace(
        "  runtimeClassName:", "  overhead: {cpu: 250m, memory: 120Mi}\n  runtimeClassName:"
    )
    assert load_text(KATA + same, "t.yaml").pods[0].overhead == {
        "cpu": Fraction(1, 4),
        "memory": 120 * MI,
    }


def test_stored_pods_are_read_as_given() -> None:
    # spec.priority: the pod went through an API server's admission (a dump); its missing
    # overhead (a class changed since, or omitted from the dump) is not added, nothing refused
    stored = DOCS_POD.replace("  runtimeClassName:", "  priority: 0\n  runtimeClassName:")
    assert load_text(KATA + stored, "t.yaml").pods[0].overhead == {}
    assert load_text(stored, "t.yaml").pods[0].overhead == {}
    bound = DOCS_POD.replace("  runtimeClassName:", "  nodeName: n1\n  runtimeClassName:")
    m = load_text(bound, "t.yaml")
    assert len(m.pods) == 1
    assert m.warnings == [
        "t.yaml: Pod default/test-pod: spec.runtimeClassName: pod rejected: RuntimeClass "
        '"kata-fc" not found; the API server refuses creating such a pod: kept as given, it '
        "is already placed"
    ]


def test_overhead_without_a_runtime_class_is_read_as_given() -> None:
    pod = DOCS_POD.replace("  runtimeClassName: kata-fc\n", "  overhead: {cpu: 10m}\n")
    assert load_text(pod, "t.yaml").pods[0].overhead == {"cpu": Fraction(1, 100)}


SANDBOX = """apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
scheduling:
  nodeSelector: {sandbox: gvisor}
  tolerations:
  - {key: sandbox, operator: Exists, effect: NoSchedule}
"""


def _sandbox_pod(extra: str = "") -> str:
    return (
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        f"spec: {{runtimeClassName: gvisor, {extra}containers: [{{name: c}}]}}\n"
    )


def test_scheduling_merges_node_selector_and_tolerations() -> None:
    pod = load_text(SANDBOX + _sandbox_pod("nodeSelector: {zone: a}, "), "t.yaml").pods[0]
    assert pod.node_selector == {"zone": "a", "sandbox": "gvisor"}
    assert Toleration(key="sandbox", operator="Exists", effect="NoSchedule") in pod.tolerations
    # DefaultTolerationSeconds' two come first (it runs before RuntimeClass)
    assert [t.key for t in pod.tolerations] == [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "sandbox",
    ]
    tainted = (
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {sandbox: gvisor}}\n"
        "spec: {taints: [{key: sandbox, value: 'yes', effect: NoSchedule}]}\n"
        "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '110'}}\n"
    )
    assert _placed(SANDBOX + _sandbox_pod() + tainted) == {"p": "n1"}
    assert _placed(SANDBOX + _sandbox_pod() + _node("1", "1Gi")) == {"p": None}


def test_node_selector_conflict_is_refused() -> None:
    assert _error(SANDBOX + _sandbox_pod("nodeSelector: {sandbox: runc}, ")) == (
        "t.yaml: Pod default/p: spec.nodeSelector[sandbox]: conflict: "
        "runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; "
        "pod.spec.nodeSelector[sandbox] = runc (make the pod agree with its RuntimeClass, or "
        "change the RuntimeClass)"
    )


def test_merge_tolerations_keeps_supersets() -> None:
    # pkg/util/tolerations MergeTolerations: a toleration another covers is dropped
    everything = Toleration(operator="Exists")
    a = Toleration(key="a", operator="Equal", value="1", effect="NoSchedule")
    a_any = Toleration(key="a", operator="Exists")
    assert merge_tolerations([a], [a_any]) == (a_any,)
    assert merge_tolerations([a, a], []) == (a,)
    assert merge_tolerations([a], [everything]) == (everything,)
    short = Toleration(key="b", operator="Exists", effect="NoExecute", toleration_seconds=10)
    long = Toleration(key="b", operator="Exists", effect="NoExecute", toleration_seconds=20)
    assert merge_tolerations([short], [long]) == (long,)


def test_controller_pods_without_their_class_are_kept_and_warned() -> None:
    deployment = """---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      runtimeClassName: kata-fc
      containers: [{name: c}]
"""
    m = load_text(deployment, "t.yaml")
    assert len(m.pods) == 2
    assert len(m.warnings) == 1
    assert m.warnings[0].startswith("t.yaml: 2 pods (default/web-")
    assert m.warnings[0].endswith(
        ': spec.runtimeClassName: pod rejected: RuntimeClass "kata-fc" not found; simulated '
        "without the RuntimeClass's overhead and scheduling (add the RuntimeClass to the input)"
    )
    assert [p.overhead for p in load_text(KATA + deployment, "t.yaml").pods] == [
        {"memory": 120 * MI, "cpu": Fraction(1, 4)}
    ] * 2


def test_runtime_class_is_read_not_skipped() -> None:
    m = load_text(KATA, "t.yaml")
    assert m.warnings == []
    assert [rc.handler for rc in m.runtime_classes] == ["kata-fc"]
    assert "handler: required" in _error(KATA.replace("handler: kata-fc\n", ""))


# --------------------------------------------------------------------------- LimitRange

DEFAULT_CPU = """apiVersion: v1
kind: LimitRange
metadata: {name: cpu-limit-range, namespace: default-cpu-example}
spec:
  limits:
  - default: {cpu: 1}
    defaultRequest: {cpu: 0.5}
    type: Container
"""


def _ns_pod(name: str, resources: str = "", ns: str = "default-cpu-example") -> str:
    res = f", resources: {resources}" if resources else ""
    return (
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\n"
        f"spec: {{containers: [{{name: c{res}}}]}}\n"
    )


def _resources(text: str) -> dict[str, tuple[dict[str, Fraction], dict[str, Fraction]]]:
    m = load_text(text, "t.yaml")
    return {p.name: (dict(p.containers[0].requests), dict(p.containers[0].limits)) for p in m.pods}


def test_limit_range_defaults_as_in_the_docs() -> None:
    text = (
        DEFAULT_CPU
        + _ns_pod("none")
        + _ns_pod("limit-only", "{limits: {cpu: 1}}")
        + _ns_pod("request-only", "{requests: {cpu: 0.75}}")
        + _ns_pod("other-namespace", ns="default")
    )
    half, one = Fraction(1, 2), Fraction(1)
    assert _resources(text) == {
        "none": ({"cpu": half}, {"cpu": one}),
        "limit-only": ({"cpu": one}, {"cpu": one}),  # the request defaults to the limit first
        "request-only": ({"cpu": Fraction(3, 4)}, {"cpu": one}),
        "other-namespace": ({}, {}),
    }
    pod = load_text(DEFAULT_CPU + _ns_pod("none"), "t.yaml").pods[0]
    assert pod.annotations == {
        "kubernetes.io/limit-ranger": "LimitRanger plugin set: cpu request for container c; "
        "cpu limit for container c"
    }


def test_limit_range_defaults_change_the_fit() -> None:
    node = _node("1", "1Gi")
    pods = _ns_pod("a") + _ns_pod("b") + _ns_pod("c")
    # without the LimitRange the pods request nothing: all three fit a 1-CPU node
    assert _placed(node + pods) == {"a": "n1", "b": "n1", "c": "n1"}
    # with it each requests 500m: two fit, the third is Insufficient cpu
    cluster = Cluster.from_text(DEFAULT_CPU + node + pods, "t.yaml")
    outcomes = Engine().simulate(cluster).outcomes
    assert [o.node_name for o in outcomes] == ["n1", "n1", None]
    assert "1 Insufficient cpu" in outcomes[2].message


MIN_MAX = """apiVersion: v1
kind: LimitRange
metadata: {name: cpu-min-max-demo-lr, namespace: constraints-cpu-example}
spec:
  limits:
  - max: {cpu: "800m"}
    min: {cpu: "200m"}
    type: Container
"""


def test_min_max_defaults_and_refusals_as_in_the_docs() -> None:
    m = load_text(MIN_MAX, "t.yaml")
    assert m.warnings == []  # read, no longer a skipped kind
    (item,) = m.limit_ranges[0].limits
    assert item.default == {"cpu": Fraction(4, 5)}
    assert item.default_request == {"cpu": Fraction(4, 5)}
    pod = _ns_pod("constraints-cpu-demo", ns="constraints-cpu-example")
    assert _resources(MIN_MAX + pod) == {
        "constraints-cpu-demo": ({"cpu": Fraction(4, 5)}, {"cpu": Fraction(4, 5)})
    }
    over = _ns_pod(
        "demo-2", "{limits: {cpu: '1.5'}, requests: {cpu: 500m}}", "constraints-cpu-example"
    )
    under = _ns_pod(
        "demo-3", "{limits: {cpu: 800m}, requests: {cpu: 100m}}", "constraints-cpu-example"
    )
    assert _error(MIN_MAX + over + under) == (
        "t.yaml: Pod constraints-cpu-example/demo-2: spec.containers[0].resources.limits[cpu]: "
        "maximum cpu usage per Container is 800m, but limit is 1500m"
        f"{LR}\n"
        "t.yaml: Pod constraints-cpu-example/demo-3: spec.containers[0].resources.requests[cpu]: "
        "minimum cpu usage per Container is 200m, but request is 100m"
        f"{LR}"
    )


def test_a_default_limit_below_the_request_makes_the_pod_invalid() -> None:
    lr = DEFAULT_CPU.replace("default: {cpu: 1}", "default: {cpu: 500m}").replace(
        "defaultRequest: {cpu: 0.5}", "defaultRequest: {cpu: 500m}"
    )
    assert _error(lr + _ns_pod("p", "{requests: {cpu: 700m}}")) == (
        "t.yaml: Pod default-cpu-example/p: spec.containers[0].resources.requests: "
        f"invalid value '700m': must be less than or equal to cpu limit of 500m{LR}"
    )


def test_placed_pods_are_never_refused_and_stored_ones_not_defaulted() -> None:
    bound = (
        "---\napiVersion: v1\nkind: Pod\n"
        "metadata: {name: running, namespace: constraints-cpu-example}\n"
        "spec: {nodeName: n1, containers: [{name: c, resources: {limits: {cpu: 2}}}]}\n"
    )
    m = load_text(MIN_MAX + bound, "t.yaml")
    assert [p.name for p in m.pods] == ["running"]
    assert m.warnings == [
        "t.yaml: Pod constraints-cpu-example/running: spec.containers[0].resources.limits[cpu]: "
        "maximum cpu usage per Container is 800m, but limit is 2; the API server refuses "
        "creating such a pod: kept as given, it is already placed"
    ]
    stored = _ns_pod("stored").replace("spec: {", "spec: {priority: 0, ")
    assert _resources(DEFAULT_CPU + stored) == {"stored": ({}, {})}


def test_controller_pods_refused_by_a_limit_range_are_left_out() -> None:
    job = """---
apiVersion: batch/v1
kind: Job
metadata: {name: big, namespace: constraints-cpu-example}
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, resources: {limits: {cpu: 2}}}]
"""
    m = load_text(MIN_MAX + job, "t.yaml")
    assert m.pods == []
    assert len(m.warnings) == 1
    assert m.warnings[0].startswith("t.yaml: 2 pods (constraints-cpu-example/big-")
    assert m.warnings[0].endswith(
        ": spec.containers[0].resources.limits[cpu]: maximum cpu usage per Container is 800m, "
        "but limit is 2; not admitted, so not scheduled"
    )


def test_limit_range_validation() -> None:
    bad = MIN_MAX.replace('min: {cpu: "200m"}', 'min: {cpu: "1"}')
    # every problem (ValidateLimitRange returns an ErrorList), on the defaulted item
    # (default and defaultRequest 800m from max, SetDefaults_LimitRangeItem)
    lr = "t.yaml: LimitRange constraints-cpu-example/cpu-min-max-demo-lr: spec.limits[0]"
    assert _error(bad) == (
        f"{lr}.min[cpu]: invalid value '1': min value 1 is greater than max value 800m\n"
        f"{lr}.defaultRequest[cpu]: invalid value '800m': min value 1 is greater than default "
        "request value 800m\n"
        f"{lr}.default[cpu]: invalid value '1': min value 1 is greater than default value 800m"
    )
    pod_default = MIN_MAX.replace("type: Container", "type: Pod\n    default: {cpu: 1}")
    assert _error(pod_default).endswith(
        "spec.limits[0].default: forbidden: may not be specified when `type` is 'Pod'"
    )


def test_pod_limit_range_checks_the_pods_totals() -> None:
    lr = MIN_MAX.replace("type: Container", "type: Pod").replace('    min: {cpu: "200m"}\n', "")
    two = (
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: constraints-cpu-example}\n"
        "spec: {containers: [{name: a, resources: {limits: {cpu: 500m}}}, "
        "{name: b, resources: {limits: {cpu: 500m}}}]}\n"
    )
    assert _error(lr + two) == (
        "t.yaml: Pod constraints-cpu-example/p: spec.containers: maximum cpu usage per Pod is "
        f"800m, but limit is 1{LR}"
    )


def test_controller_pods_are_admitted_even_when_the_template_sets_priority() -> None:
    # "has spec.priority => stored" holds for the input's Pod objects only: a controller
    # creates its pods through the API server, so LimitRanger, Priority and RuntimeClass
    # admit them whatever the template says (the template's spec.priority is copied into
    # the pod and checked by the Priority plugin: plugin/pkg/admission/priority/admission.go
    # "the integer value of priority (%d) must not be provided in pod spec; priority
    # admission controller computed %d from the given PriorityClass name")
    deployment = """---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      priority: 0
      runtimeClassName: kata-fc
      containers: [{name: c}]
"""
    m = load_text(KATA + deployment, "t.yaml")
    assert [p.overhead for p in m.pods] == [{"memory": 120 * MI, "cpu": Fraction(1, 4)}]
    assert not m.pods[0].priority_given  # admitted: a kss export writes what admission set
    limited = deployment.replace(
        "metadata: {name: web}", "metadata: {name: web, namespace: default-cpu-example}"
    ).replace("      runtimeClassName: kata-fc\n", "")
    (pod,) = load_text(DEFAULT_CPU + limited, "t.yaml").pods
    assert dict(pod.containers[0].requests) == {"cpu": Fraction(1, 2)}
    assert dict(pod.containers[0].limits) == {"cpu": 1}
    wrong = deployment.replace("priority: 0", "priority: 7")
    m = load_text(KATA + wrong, "t.yaml")
    assert m.pods == []
    assert len(m.warnings) == 1
    assert m.warnings[0].endswith(
        ": the integer value of priority (7) must not be provided in pod spec; priority "
        "admission controller computed 0 from the given PriorityClass name; not admitted, so "
        "not scheduled"
    )


def test_an_invalid_defaulted_pod_gets_no_limit_range_refusal_too() -> None:
    # The API server runs the mutating plugins (LimitRanger's default limit of max), then
    # ValidatePodCreate (ValidateResourceRequirements: request <= limit), and only for a
    # valid pod the validating plugins (LimitRanger's Validate: "maximum cpu usage per
    # Container"): a pod the defaults make invalid gets the validation error alone
    # (k8s.io/apiserver admission chain, pkg/registry/core/pod strategy Validate)
    assert _error(MIN_MAX + _ns_pod("p", "{requests: {cpu: 1}}", "constraints-cpu-example")) == (
        "t.yaml: Pod constraints-cpu-example/p: spec.containers[0].resources.requests: "
        f"invalid value '1': must be less than or equal to cpu limit of 800m{LR}"
    )


def test_an_empty_or_malformed_runtime_class_name_is_invalid() -> None:
    # ValidatePodSpec (pkg/apis/core/validation): a set runtimeClassName goes through
    # ValidateRuntimeClassName, NameIsDNSSubdomain: "" is not a name, so no API server stores
    # such a pod (stored or not, the input is refused); a control character is escaped
    expected = (
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
        "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')"
    )
    assert _error(_sandbox_pod().replace("gvisor", "''")).endswith(
        f"spec.runtimeClassName: invalid value '': {expected}"
    )
    stored = _sandbox_pod("priority: 0, ").replace("gvisor", "''")
    assert _error(stored).endswith(f"spec.runtimeClassName: invalid value '': {expected}")
    escape = _sandbox_pod().replace("gvisor", '"\\e[31mx"')
    assert _error(escape).endswith(f"spec.runtimeClassName: invalid value '\\x1b[31mx': {expected}")


def test_limit_range_validation_reports_every_problem_and_resource_names() -> None:
    # pkg/apis/core/validation ValidateLimitRange: each item's type (validateLimitRangeTypeName,
    # field.Duplicate), resource names (validateLimitRangeResourceName: for Pod and Container
    # items validateContainerResourceName, which appends "must be a standard resource for
    # containers" to validateResourceName's "must be a standard resource type or fully
    # qualified"), Forbidden default for type Pod, then the per-resource checks; all in one
    # ErrorList, at idxPath.Child("max").Key(name) paths
    text = """apiVersion: v1
kind: LimitRange
metadata: {name: bad, namespace: a}
spec:
  limits:
  - type: Pod
    default: {cpu: "1"}
    max: {bogus: "1", example.com/foo: "1"}
  - type: Container
    max: {cpu: "1"}
    defaultRequest: {cpu: "2"}
  - type: Container
    min: {cpu: "1"}
    maxLimitRequestRatio: {cpu: 500m}
  - type: PersistentVolumeClaim
    max: {storage: 1Gi, bogus: "1"}
"""
    lr = "t.yaml: LimitRange a/bad: spec.limits"
    assert _error(text).splitlines() == [
        f"{lr}[0].max[bogus]: invalid value 'bogus': must be a standard resource type or fully "
        "qualified",
        f"{lr}[0].max[bogus]: invalid value 'bogus': must be a standard resource for containers",
        f"{lr}[0].default: forbidden: may not be specified when `type` is 'Pod'",
        f"{lr}[1].defaultRequest[cpu]: invalid value '2': default request value 2 is greater "
        "than max value 1",
        # default 1 from max (SetDefaults_LimitRangeItem)
        f"{lr}[1].defaultRequest[cpu]: invalid value '2': default request value 2 is greater "
        "than default limit value 1",
        f"{lr}[2].type: duplicate value 'Container'",
        f"{lr}[2].maxLimitRequestRatio[cpu]: invalid value '500m': ratio 500m is less than 1",
        # validateResourceName only, for a PersistentVolumeClaim item
        f"{lr}[3].max[bogus]: invalid value 'bogus': must be a standard resource type or fully "
        "qualified",
    ]


def test_names_in_messages_are_escaped() -> None:
    # ValidatePodSpec: a non-empty priorityClassName is a DNS subdomain
    # (ValidatePriorityClassName), so a control character is a validation error, printed
    # escaped; a claimName is not validated, and the scheduler's NotFound message quotes it
    # as apimachinery's NewNotFound does (%q: "\x1b[31mx")
    pod = _sandbox_pod().replace("runtimeClassName: gvisor", 'priorityClassName: "\\e[31mx"')
    assert "spec.priorityClassName: invalid value '\\x1b[31mx': a lowercase RFC 1123" in (
        _error(pod)
    )
    claim = (
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  containers: [{name: c}]\n"
        '  volumes: [{name: v, persistentVolumeClaim: {claimName: "\\e[31mx"}}]\n'
    )
    cluster = Cluster.from_text(claim + _node("1", "1Gi"), "t.yaml")
    (outcome,) = Engine().simulate(cluster).outcomes
    assert 'persistentvolumeclaim "\\x1b[31mx" not found' in outcome.message
    assert "\x1b" not in outcome.message
