"""Let the tests run from a checkout without installing the plugin."""

import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("schedsim_gpu_sharing") is None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
