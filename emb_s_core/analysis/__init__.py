"""The one analysis surface that the CLI and the dashboard call: views, reports, compare, drill-down.

Every function here reads results through the store/bank/runs modules and returns frames or plain records; nothing
here draws (figures do) and nothing above it (pages, ``ui/``, ``cli/``) computes a metric, join or pivot
(DESIGN.md §2). Import the submodules directly: ``from emb_s_core.analysis import views``.
"""
from __future__ import annotations
