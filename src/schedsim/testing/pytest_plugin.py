"""schedsim's pytest plugin: the plugin test kit as fixtures, for an out-of-tree plugin's own
test suite.

Installed with schedsim through the ``pytest11`` entry point (``schedsim =
schedsim.testing.pytest_plugin``), so any project that has schedsim installed gets the
fixtures without a conftest; without the entry point (a source checkout), load it with
``-p schedsim.testing.pytest_plugin`` or ``pytest_plugins = ["schedsim.testing.pytest_plugin"]``.

Fixtures:

- ``schedsim_cluster``: a function ``(manifests YAML text) -> Cluster``, the manifests loaded
  as ``schedsim simulate`` loads them (workload controllers expanded, API defaults applied).
- ``schedsim_store``: parametrized over both snapshot stores, ``"basic"`` (clone on fork, the
  reference) and ``"delta"`` (layered): a test using it runs once per store.
- ``schedsim_run_plugin``: `schedsim.testing.run_plugin` (one plugin's extension points for a
  pod on a node, Reserve and Permit on request); ``schedsim_run_plugin_on_nodes``:
  `schedsim.testing.run_plugin_on_nodes`.
- ``schedsim_run_profile``: a function ``(cluster, plugins=("module:Class", ...),
  config=None or a KubeSchedulerConfiguration mapping, store="delta") -> SimulationResult``:
  a whole profile scheduling the cluster (by default kube-scheduler's default profile with
  the given plugins enabled at ``multiPoint``).
- ``schedsim_check_plugin``: a function ``(*specs, static=True, dynamic=True) -> list[str]``,
  the problems ``schedsim check-plugin`` would report (`schedsim.testing.plugin_check`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from schedsim.engine import STORES, Cluster, Engine, EngineConfig
from schedsim.framework.scheduler_config import scheduler_configuration_from_mapping
from schedsim.scheduler.scheduling import SimulationResult
from schedsim.testing.plugin_check import dynamic_problems, static_problems
from schedsim.testing.plugins import run_plugin, run_plugin_on_nodes

__all__ = [
    "schedsim_check_plugin",
    "schedsim_cluster",
    "schedsim_run_plugin",
    "schedsim_run_plugin_on_nodes",
    "schedsim_run_profile",
    "schedsim_store",
]

STORE_NAMES = tuple(sorted(STORES))
"""The names of `schedsim.engine.STORES`: ``basic``, ``delta``."""


@pytest.fixture
def schedsim_cluster() -> Callable[[str], Cluster]:
    """Load manifests (YAML text) into a `Cluster`."""

    def load(text: str) -> Cluster:
        return Cluster.from_text(text, "<test manifests>")

    return load


@pytest.fixture(params=STORE_NAMES)
def schedsim_store(request: pytest.FixtureRequest) -> str:
    """Each snapshot store's name in turn (``basic``, ``delta``)."""
    name: str = request.param
    return name


@pytest.fixture
def schedsim_run_plugin() -> Callable[..., Any]:
    """`schedsim.testing.run_plugin`."""
    return run_plugin


@pytest.fixture
def schedsim_run_plugin_on_nodes() -> Callable[..., Any]:
    """`schedsim.testing.run_plugin_on_nodes`."""
    return run_plugin_on_nodes


def _profile_config(plugins: Sequence[str], config: Mapping[str, Any] | None) -> Any:
    if config is None:
        from schedsim.framework.runtime import load_plugin_spec

        names = [load_plugin_spec(s)[0] for s in plugins]
        config = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": n} for n in names]}}}],
        }
    return scheduler_configuration_from_mapping(config)


@pytest.fixture
def schedsim_run_profile() -> Callable[..., SimulationResult]:
    """Schedule a cluster with a whole profile (see the module docstring)."""

    def run(
        cluster: Cluster,
        plugins: Sequence[str] = (),
        config: Mapping[str, Any] | None = None,
        store: str = "delta",
    ) -> SimulationResult:
        loaded = _profile_config(plugins, config)
        specs: Any = tuple(plugins)
        engine = Engine(
            EngineConfig(
                profile=loaded.profiles[0], plugins=specs, store=store, scheduler_config=loaded
            )
        )
        return engine.simulate(cluster)

    return run


@pytest.fixture
def schedsim_check_plugin() -> Callable[..., list[str]]:
    """The problems ``schedsim check-plugin`` reports for ``specs`` (empty: conformant)."""

    def check(*specs: str, static: bool = True, dynamic: bool = True) -> list[str]:
        problems: list[str] = []
        if static:
            problems += static_problems(specs)
        if dynamic:
            problems += dynamic_problems(specs)
        return problems

    return check
