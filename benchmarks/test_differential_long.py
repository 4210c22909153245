"""The basic-vs-delta store differential test of ``tests/snapshot/test_differential.py``, run
much longer: ``SCHEDSIM_DIFFERENTIAL_LONG_EXAMPLES`` (default 2000) operation sequences of
``SCHEDSIM_DIFFERENTIAL_LONG_STEPS`` (default 80) steps, a few minutes.

Not part of the default ``pytest`` run (testpaths is ``tests/``); run it explicitly::

    pytest benchmarks/test_differential_long.py -p no:cacheprovider

The state machine itself lives in the tests module, loaded here from its file (``tests/`` is
not a package), so both runs always exercise the same rules.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from hypothesis.stateful import run_state_machine_as_test

EXAMPLES = int(os.environ.get("SCHEDSIM_DIFFERENTIAL_LONG_EXAMPLES", "2000"))
STEPS = int(os.environ.get("SCHEDSIM_DIFFERENTIAL_LONG_STEPS", "80"))

_MACHINE_FILE = Path(__file__).resolve().parent.parent / "tests/snapshot/test_differential.py"


def _load_machine_module() -> ModuleType:
    name = "schedsim_differential_machine"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, _MACHINE_FILE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses resolve the module through sys.modules
        spec.loader.exec_module(module)
    return module


def test_delta_store_matches_basic_store_long() -> None:
    """Many more random operation sequences than the CI run: same outcomes and states."""
    machine = _load_machine_module()
    run_state_machine_as_test(
        machine.DifferentialMachine,
        settings=machine.differential_settings(EXAMPLES, STEPS),
    )
