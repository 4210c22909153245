"""Pod priority from PriorityClasses, as the Priority admission plugin sets it
(plugin/pkg/admission/priority, admission_test.go): a named class gives its value, built-in
system classes included; no class name gives the globalDefault class's value (the lowest if
several) or 0; an unknown class is refused ("no PriorityClass with name X was found"); a pod
that already carries spec.priority is a stored object and keeps it. Found by the fresh-user
pass: priorityClassName was ignored, so a priority-1000 pod lost the last slot."""

from __future__ import annotations

from schedsim.api.loading.loader import load_text

CLUSTER = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "1", memory: 4Gi, pods: "110"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: base}
value: 1000
globalDefault: true
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
"""


def _pod(name: str, extra: str = "") -> str:
    return (
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\n"
        f"spec: {{{extra}containers: [{{name: c, resources: {{requests: {{cpu: 1}}}}}}]}}\n"
    )


def _priorities(text: str) -> dict[str, int]:
    m = load_text(text, "p.yaml")
    return {p.name: p.priority for p in m.pods}


def test_class_values_default_and_system_classes() -> None:
    text = (
        CLUSTER
        + _pod("named", "priorityClassName: low, ")
        + _pod("unnamed")
        + _pod("critical", "priorityClassName: system-node-critical, ")
        + _pod("stored", "priorityClassName: low, priority: 7, ")
    )
    assert _priorities(text) == {
        "named": 10,
        "unnamed": 1000,  # globalDefault
        "critical": 2000001000,
        "stored": 7,  # admission already ran for a stored pod
    }


def test_no_default_class_gives_zero_and_the_lowest_default_wins() -> None:
    assert _priorities(CLUSTER.replace("globalDefault: true", "") + _pod("p")) == {"p": 0}
    second = (
        "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
        "metadata: {name: other}\nvalue: 500\nglobalDefault: true\n"
    )
    assert _priorities(CLUSTER + second + _pod("p")) == {"p": 500}
    # Admission refuses creating a second default ("PriorityClass base is already marked as
    # default. Only one default can exist"): said, not silent (fresh-user finding).
    m = load_text(CLUSTER + second + _pod("p"), "p.yaml")
    assert (
        "PriorityClass other: globalDefault: PriorityClass base is already marked as default. "
        "Only one default can exist; pods without a class get the lowest default value (500), "
        "as admission does when several exist" in m.warnings
    )


def test_unknown_class_is_not_admitted_and_the_others_go_on() -> None:
    m = load_text(CLUSTER + _pod("bad", "priorityClassName: nope, ") + _pod("ok"), "p.yaml")
    assert [p.name for p in m.pods] == ["ok"]
    assert (
        "pod default/bad: no PriorityClass with name nope was found; not admitted, so not "
        "scheduled" in m.warnings
    )


def test_workload_template_class_is_resolved() -> None:
    deploy = """---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {priorityClassName: low, containers: [{name: c, image: nginx}]}
"""
    assert set(_priorities(CLUSTER + deploy).values()) == {10}
