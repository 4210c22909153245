"""Strict field validation on a GCDA-sized cluster (1,213 nodes, 7,064 pods; see
`gcda_cluster`): loading with ``validate="strict"`` against ``validate="ignore"``, from a JSON
file (parsing is cheap, so the walk shows), from a YAML file (what people usually have), and
decoding already-parsed documents (the walk against the decoders alone). The ratio
strict / ignore per row is what docs/performance.md reports.

Run: ``pytest benchmarks/test_bench_validation.py --benchmark-enable``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gcda_cluster import NODES, PODS, cluster_documents

from schedsim.api.loading.loader import decode_objects, load_paths
from schedsim.api.loading.strict import find_unknown_fields


@pytest.fixture(scope="module")
def gcda(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    doc = cluster_documents()
    root = tmp_path_factory.mktemp("gcda")
    (root / "gcda.json").write_text(json.dumps(doc), encoding="utf-8")
    import yaml

    dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    (root / "gcda.yaml").write_text(yaml.dump(doc, Dumper=dumper), encoding="utf-8")
    find_unknown_fields({"kind": "Pod"}, "Pod")  # compile the schema outside the timings
    return {"doc": doc, "root": root}


def _check(m: Any) -> None:
    assert (len(m.nodes), len(m.pods)) == (NODES, PODS)


@pytest.mark.parametrize("mode", ["ignore", "strict"])
def test_load_json(benchmark: Any, gcda: dict[str, Any], mode: str) -> None:
    path = str(Path(gcda["root"]) / "gcda.json")
    benchmark.group = "GCDA-sized JSON file"
    _check(benchmark.pedantic(load_paths, args=([path],), kwargs={"validate": mode}, rounds=3))


@pytest.mark.parametrize("mode", ["ignore", "strict"])
def test_load_yaml(benchmark: Any, gcda: dict[str, Any], mode: str) -> None:
    path = str(Path(gcda["root"]) / "gcda.yaml")
    benchmark.group = "GCDA-sized YAML file"
    _check(benchmark.pedantic(load_paths, args=([path],), kwargs={"validate": mode}, rounds=1))


@pytest.mark.parametrize("mode", ["ignore", "strict"])
def test_decode(benchmark: Any, gcda: dict[str, Any], mode: str) -> None:
    benchmark.group = "GCDA-sized, already parsed (decode only)"
    _check(benchmark.pedantic(decode_objects, args=([gcda["doc"]], "gcda", mode), rounds=3))
