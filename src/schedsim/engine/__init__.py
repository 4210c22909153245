"""The library entry point: a loaded `Cluster`, a picklable `EngineConfig`, and the `Engine`
that runs simulate / scale-up / scale-down on them. The commands, replay and sweeps all start
here; none of them wires stores or DRA/CSI snapshots by hand.

.. code-block:: python

    from schedsim.engine import Cluster, Engine

    result = Engine().simulate(Cluster.from_paths(["cluster.yaml"]))
"""

from schedsim.engine.cluster import Cluster
from schedsim.engine.config import STORES, EngineConfig
from schedsim.engine.engine import Engine

__all__ = ["STORES", "Cluster", "Engine", "EngineConfig"]
