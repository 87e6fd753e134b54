"""Dashboard test fixtures: one small real workspace per session (bank, ladder, word-overlap runs)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture(scope="session")
def dash_ws(tmp_path_factory) -> Path:
    """A workspace with a 3-domain bank, a 12-rung ladder and five runs (three overlap weightings, a
    does-not-fit run, a partial run)."""
    from testkit.dashboard_factory import build_workspace

    return build_workspace(tmp_path_factory.mktemp("dash"))


@pytest.fixture
def app_env(dash_ws, monkeypatch, tmp_path):
    """Point the dashboard's data folder at an empty temp dir so only the fixture workspace is chosen by URL."""
    monkeypatch.setenv("EMB_S_DATA", str(tmp_path / "data"))
    return dash_ws
