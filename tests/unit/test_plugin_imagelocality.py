"""ImageLocality Score: upstream's tables (image_locality_test.go TestImageLocalityPriority,
TestNormalizedImageName) with their case names and expected scores."""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import CycleState, Framework, Handle, Profile
from schedsim.snapshot import PredicateSnapshot
from schedsim_plugins.imagelocality import ImageLocality, normalized_image_name

MB = 1024 * 1024


def images(*entries: tuple[list[str], int]) -> list[dict[str, Any]]:
    return [{"names": names, "sizeBytes": size * MB} for names, size in entries]


NODE_40_300_2000 = images(
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300),
    (["gcr.io/2000:latest"], 2000),
)
NODE_250_10 = images((["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10))
NODE_600_40_900 = images(
    (["gcr.io/600:latest"], 600), (["gcr.io/40:latest"], 40), (["gcr.io/900:latest"], 900)
)
NODE_300_600_900 = images(
    (["gcr.io/300:latest"], 300), (["gcr.io/600:latest"], 600), (["gcr.io/900:latest"], 900)
)
NODE_4000_30 = images((["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30))
NODE_20_30_40 = images(
    (["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40)
)
NO_IMAGES: list[dict[str, Any]] = []

TABLE = [
    (
        "two images spread on two nodes, prefer the larger image one",
        ["gcr.io/40", "gcr.io/250"],
        [],
        [NODE_40_300_2000, NODE_250_10],
        [0, 5],
    ),
    (
        "two images on one node, prefer this node",
        ["gcr.io/40", "gcr.io/300"],
        [],
        [NODE_40_300_2000, NODE_250_10],
        [7, 0],
    ),
    (
        "if exceed limit, use limit",
        ["gcr.io/10", "gcr.io/4000"],
        [],
        [NODE_4000_30, NODE_250_10],
        [100, 0],
    ),
    (
        "if exceed limit, use limit (with node which has no images present)",
        ["gcr.io/10", "gcr.io/4000"],
        [],
        [NODE_4000_30, NODE_250_10, NO_IMAGES],
        [66, 0, 0],
    ),
    (
        "pod with multiple large images, node2 is preferred",
        ["gcr.io/300", "gcr.io/600", "gcr.io/900"],
        [],
        [NODE_600_40_900, NODE_300_600_900, NO_IMAGES],
        [32, 36, 0],
    ),
    (
        "pod with multiple small images",
        ["gcr.io/30", "gcr.io/40"],
        [],
        [NODE_20_30_40, NODE_4000_30],
        [1, 0],
    ),
    (
        "include InitContainers: two images spread on two nodes, prefer the larger image one",
        ["gcr.io/30"],
        ["gcr.io/300"],
        [NODE_40_300_2000, NODE_20_30_40],
        [6, 0],
    ),
]


def run(
    containers: list[str], init: list[str], node_images: list[list[dict[str, Any]]], pre_score: bool
) -> list[int]:
    nodes = [
        Node.from_manifest({"metadata": {"name": f"node{i + 1}"}, "status": {"images": imgs}})
        for i, imgs in enumerate(node_images)
    ]
    pod = Pod.from_manifest(
        {
            "metadata": {"name": "p"},
            "spec": {
                "containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(containers)],
                "initContainers": [{"name": f"i{i}", "image": im} for i, im in enumerate(init)],
            },
        }
    )
    handle = Handle()
    snap = PredicateSnapshot(Framework(Profile(plugins={}), handle))
    assert snap.set_cluster_state(nodes, []) == []
    plugin = ImageLocality({}, handle)
    state = CycleState()
    infos = [snap.get_node_info(n.name) for n in nodes]
    out = []
    with snap.bound():  # the plugin lists the nodes through its handle
        if pre_score:
            assert plugin.schedsim_pre_score(state, pod, infos) is None
        for ni in infos:
            got = plugin.schedsim_score(state, pod, ni)
            assert isinstance(got, int)
            out.append(got)
    return out


@pytest.mark.parametrize("row", TABLE, ids=[r[0] for r in TABLE])
@pytest.mark.parametrize("pre_score", [False, True], ids=["score only", "with schedsim's PreScore"])
def test_image_locality_priority(row: tuple[Any, ...], pre_score: bool) -> None:
    """Image sizes scaled by the share of nodes having the image, summed, clamped to
    [23MB, 1000MB x containers] and scaled to [0, 100]; upstream runs Score alone."""
    _, containers, init, node_images, want = row
    assert run(containers, init, node_images, pre_score) == want


@pytest.mark.parametrize(
    ("name", "image", "want"),
    [
        ("add :latest postfix 1", "root", "root:latest"),
        ("add :latest postfix 2", "gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("keep it as is 1", "root:tag", "root:tag"),
        ("keep it as is 2", "root@sha256:" + "0" * 64, "root@sha256:" + "0" * 64),
    ],
)
def test_normalized_image_name(name: str, image: str, want: str) -> None:
    """TestNormalizedImageName: ``:latest`` is added unless a tag or digest follows the
    last ``/``."""
    assert normalized_image_name(image) == want, name
