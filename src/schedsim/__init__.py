"""schedsim: the Kubernetes scheduler framework over a Cluster-Autoscaler-style snapshot.

The public surface, for library users:

- the entry point: `Cluster` (a loaded cluster, frozen and picklable), `EngineConfig` (how
  to build the scheduler profile and store, picklable) and `Engine` (runs simulate,
  scale-up and scale-down on a Cluster; `Engine.snapshot` gives a ready `PredicateSnapshot`
  to drive by hand, forked with ``with snapshot.forked():``);
- loading: `load_paths` / `load_text` (manifests into `schedsim.api.Manifests`; most users
  call `Cluster.from_paths` instead), `load_node_groups` (the node-groups file scale-up and
  scale-down read), `load_scheduler_configuration` (a KubeSchedulerConfiguration file, for
  ``EngineConfig(scheduler_config=...)``);
- the errors to catch: `ManifestError` (bad input: ``FILE: KIND NS/NAME: FIELD: problem``),
  `NodeGroupError` (a bad node-groups file or template), `PluginError` (a profile's plugins
  cannot be built), `SchedulingError` with its `SchedulingErrorType` (a snapshot operation
  failed: a failing predicate, no node passing, an internal error), `DraSnapshotError`
  (inconsistent DRA objects).

.. code-block:: python

    import schedsim

    result = schedsim.Engine().simulate(schedsim.Cluster.from_paths(["cluster.yaml"]))

The names resolve on first use (PEP 562): ``import schedsim.api.core`` and the other
submodules import this package first, and must not pay for (or cycle through) the engine.
Everything else stays in its subpackage (`schedsim.framework` for plugin authors,
`schedsim.snapshot`, `schedsim.scheduler`, `schedsim.autoscaler`, `schedsim.replay`,
`schedsim.sweep`).
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING
from typing import Any as _Any

if TYPE_CHECKING:
    from schedsim.api.errors import ManifestError
    from schedsim.api.loading.loader import load_paths, load_text
    from schedsim.autoscaler.nodegroups import NodeGroupError, load_node_groups
    from schedsim.engine.cluster import Cluster
    from schedsim.engine.config import EngineConfig
    from schedsim.engine.engine import Engine
    from schedsim.framework.registry import PluginError
    from schedsim.framework.scheduler_config import load_scheduler_configuration
    from schedsim.snapshot.dra_claims import DraSnapshotError
    from schedsim.snapshot.errors import SchedulingError, SchedulingErrorType

__all__ = [
    "Cluster",
    "DraSnapshotError",
    "Engine",
    "EngineConfig",
    "ManifestError",
    "NodeGroupError",
    "PluginError",
    "SchedulingError",
    "SchedulingErrorType",
    "load_node_groups",
    "load_paths",
    "load_scheduler_configuration",
    "load_text",
]

# public name -> the module that defines it (kept equal to the TYPE_CHECKING block above;
# tests/unit/test_public_surface.py checks both)
_SOURCES: dict[str, str] = {
    "Cluster": "schedsim.engine.cluster",
    "DraSnapshotError": "schedsim.snapshot.dra_claims",
    "Engine": "schedsim.engine.engine",
    "EngineConfig": "schedsim.engine.config",
    "ManifestError": "schedsim.api.errors",
    "NodeGroupError": "schedsim.autoscaler.nodegroups",
    "PluginError": "schedsim.framework.registry",
    "SchedulingError": "schedsim.snapshot.errors",
    "SchedulingErrorType": "schedsim.snapshot.errors",
    "load_node_groups": "schedsim.autoscaler.nodegroups",
    "load_paths": "schedsim.api.loading.loader",
    "load_scheduler_configuration": "schedsim.framework.scheduler_config",
    "load_text": "schedsim.api.loading.loader",
}


def __getattr__(name: str) -> _Any:
    """Import a public name's module on first access and cache the name here."""
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module 'schedsim' has no attribute {name!r}")
    value = getattr(_importlib.import_module(source), name)
    globals()[name] = value  # later accesses skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
