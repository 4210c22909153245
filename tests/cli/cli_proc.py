"""Running the real ``schedsim`` console script from tests (a helper module, not tests)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest


def schedsim_script() -> str:
    """The path of the installed ``schedsim`` script (beside this Python, else on PATH);
    skips the test when it is not installed."""
    script = Path(sys.executable).with_name("schedsim")
    found = str(script) if script.exists() else shutil.which("schedsim")
    if found is None:
        pytest.skip("the schedsim console script is not installed")
    return found
