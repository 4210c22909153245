"""Let the tests run from a checkout without installing the plugin."""

import importlib.metadata
import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("schedsim_gpu_guard") is None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


# The kit's fixtures (schedsim_cluster, schedsim_store, schedsim_run_plugin,
# schedsim_run_profile, schedsim_check_plugin) come from schedsim's pytest plugin, installed
# with schedsim (entry point pytest11); from a checkout where schedsim's entry points are not
# installed, take them from the module itself.
if not any(
    ep.value == "schedsim.testing.pytest_plugin"
    for ep in importlib.metadata.entry_points(group="pytest11")
):
    from schedsim.testing.pytest_plugin import *  # noqa: F403
