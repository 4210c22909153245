"""HTML reports: one self-contained page (plotly.js embedded, opens offline) per run of
``replay``, ``simulate``, ``scale-up`` and ``scale-down`` (``--report FILE.html``).

.. code-block:: python

    from pathlib import Path

    from schedsim.report import replay_page

    Path("replay.html").write_text(replay_page(metrics).render())
"""

from schedsim.report.page import Page
from schedsim.report.replay import replay_page
from schedsim.report.results import scale_down_page, scale_up_page, simulate_page

__all__ = ["Page", "replay_page", "scale_down_page", "scale_up_page", "simulate_page"]
