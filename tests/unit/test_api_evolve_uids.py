"""`schedsim.api.evolve.evolve` is ``attrs.evolve`` (attrs' documented behaviour: a new
instance through ``__init__`` with the old fields and the changes; ``init=False`` fields at
their default; an unknown name is a TypeError), and `schedsim.api.loading.uids.url_uuid5` is
``uuid.uuid5(uuid.NAMESPACE_URL, name)`` (RFC 4122 section 4.3, as Python's ``uuid``
module computes it), the UIDs of objects read without one."""

from __future__ import annotations

import uuid

import attrs
import pytest

from schedsim.api.core import Pod, Toleration
from schedsim.api.evolve import evolve
from schedsim.api.loading.loader import load_text
from schedsim.api.loading.uids import default_uid, url_uuid5


def test_evolve_equals_attrs_evolve_and_starts_an_empty_memo() -> None:
    """Same fields as attrs.evolve, the original unchanged, the memo (init=False) empty."""
    pod = Pod(name="p", namespace="ns", tolerations=(Toleration(key="k"),), priority=1)
    pod.memo("requests", lambda: 42)
    new = evolve(pod, priority=7, preemption_policy="Never")
    assert new == attrs.evolve(pod, priority=7, preemption_policy="Never")
    assert (new.priority, new.preemption_policy, pod.priority) == (7, "Never", 1)
    assert new.memo("requests", lambda: 0) == 0  # not the original's memo
    assert evolve(pod) == pod and evolve(pod) is not pod


def test_evolve_unknown_field_is_attrs_type_error() -> None:
    """A change naming no init argument raises what attrs.evolve raises."""
    pod = Pod(name="p")
    with pytest.raises(TypeError, match="bogus"):
        evolve(pod, bogus=1)
    with pytest.raises(TypeError):
        evolve(pod, memo={})  # init=False: not an argument


def test_evolve_keyword_only_and_private_fields() -> None:
    """Classes with keyword-only fields go through attrs.evolve; a private field is changed
    by its init argument name (``_x`` -> ``x``), as attrs.evolve does."""

    @attrs.frozen
    class KwOnly:
        a: int
        b: int = attrs.field(kw_only=True, default=0)

    @attrs.frozen
    class Private:
        a: int
        _x: int = 0

    assert evolve(KwOnly(1, b=2), b=3) == KwOnly(1, b=3)
    assert evolve(Private(1, 2), x=5) == Private(1, 5)


@pytest.mark.parametrize("name", ["", "a", "schedsim:Pod:default/web-0", "ü" * 40, "x" * 500])
def test_url_uuid5_equals_uuid_module(name: str) -> None:
    """The same 36-character text as str(uuid.uuid5(uuid.NAMESPACE_URL, name))."""
    assert url_uuid5(name) == str(uuid.uuid5(uuid.NAMESPACE_URL, name))


def test_objects_without_uid_get_the_stable_default() -> None:
    """A Pod and a Node read without metadata.uid get ``uuid5(URL, schedsim:KIND:NS/NAME)``
    (the value earlier releases gave, so outputs stay the same); a given uid is kept."""
    text = (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        "status: {allocatable: {cpu: '1', pods: '10'}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\n"
        "spec: {containers: [{name: c}]}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: q, uid: given}\n"
        "spec: {containers: [{name: c}]}\n"
    )
    m = load_text(text, "in.yaml")
    assert m.nodes[0].uid == str(uuid.uuid5(uuid.NAMESPACE_URL, "schedsim:Node:/n1"))
    assert m.pods[0].uid == str(uuid.uuid5(uuid.NAMESPACE_URL, "schedsim:Pod:ns/p"))
    assert m.pods[0].uid == default_uid("Pod", "ns", "p")
    assert m.pods[1].uid == "given"
