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
    from tests.conftest import built_once

    return Path(built_once(tmp_path_factory, "dash", build_workspace))


@pytest.fixture
def app_env(dash_ws, monkeypatch, tmp_path):
    """Point the dashboard's data folder at the test's temp dir, holding a link to the fixture workspace (the URL may
    open only workspaces under the data folder; copies a test makes in tmp_path are under it too); return the link."""
    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    (tmp_path / "dash").symlink_to(dash_ws)
    return tmp_path / "dash"


@pytest.fixture
def downloads(monkeypatch) -> dict:
    """file name -> the callable that makes the bytes, for every download button the page run creates (Streamlit
    makes deferred downloads only when clicked; a test reads what a click would get)."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    made: dict = {}
    original = MediaFileManager.add_deferred

    def capture(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        made[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name, **kw)

    monkeypatch.setattr(MediaFileManager, "add_deferred", capture)
    return made


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def payload_ws(tmp_path_factory) -> tuple[Path, int]:
    """A workspace whose every text field carries Markdown/HTML payloads pointing at 127.0.0.1:PORT; (path, PORT)."""
    from testkit.payload_bank import build_payload_workspace
    from tests.conftest import built_once

    def build(folder: Path) -> tuple[Path, int]:
        port = free_port()
        return build_payload_workspace(folder, port), port

    ws, port = built_once(tmp_path_factory, "payload", build)  # a model load and LLM-judged runs: once per run
    return Path(ws), int(port)
