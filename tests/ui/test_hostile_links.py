"""What a link can make the dashboard show (issue 33 §4, §5): a refused `ws=` names only what was asked, never the
data root; `?ws=hp%0A..%2F..%2F` (a newline, then a way up to the data root itself) is refused and the address bar
never gets the absolute data root; hints name workspaces relative to the server's folder; a repeated run name is
one name (`runs=overlap,overlap`, `emb-s figure heatmap --runs overlap,overlap`)."""
from __future__ import annotations

from conftest import REPO
from streamlit.testing.v1 import AppTest
from test_text_only import run_page


def shown(at: AppTest) -> str:
    parts = [e.value for e in at.error] + [w.value for w in at.warning] + [i.value for i in at.info]
    parts += [c.value for c in at.code] + [c.value for c in at.caption] + [m.value for m in at.markdown]
    return "\n".join(str(p).replace("\\", "") for p in parts)


def test_a_refused_workspace_names_no_server_folder(app_env):
    root = str(app_env.parent)
    for hostile in ("hp\n../../", "hp\n..", "../../etc", "/etc/passwd", "..", "."):
        at = run_page("2_Overview.py", {"ws": hostile})
        assert not at.exception, (hostile, [e.message for e in at.exception])
        text = shown(at)
        assert root not in text and str(REPO) not in text, (hostile, text[:400])
        assert any("outside the data folder" in e.value or "control character" in e.value for e in at.error), hostile
        ws = at.query_params.get("ws", "")
        assert root not in ws and not ws.startswith("/"), (hostile, ws)  # the address bar holds a name, not a path


def test_repeated_run_names_are_one_name_on_the_overview(app_env):
    at = run_page("2_Overview.py", {"ws": "dash", "runs": "overlap,overlap"})
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.get("plotly_chart")


def test_repeated_run_names_are_one_name_in_the_cli_figure(dash_ws, tmp_path, capsys):
    from emb_s_core.cli import main

    out = tmp_path / "h.html"
    assert main(["figure", "heatmap", "-w", str(dash_ws), "--runs", "overlap,overlap", "--out", str(out)]) == 0
    once = tmp_path / "once.html"
    assert main(["figure", "heatmap", "-w", str(dash_ws), "--runs", "overlap", "--out", str(once)]) == 0
    assert out.stat().st_size > 0 and "Traceback" not in capsys.readouterr().err


def test_a_www_literal_after_an_underscore_is_not_autolinked():
    """GFM starts a www. autolink after whitespace or any of * _ ~ (: an id joined with '_' (the id rule) must not
    become a link either."""
    from ui.safe import WORD_JOINER, md

    for text in ("q1_www.example.com", "*www.example.com", "(www.example.com", "~www.x.org", "www.example.com"):
        assert "www." not in md(text).replace("\\", ""), text
        assert md(text).replace("\\", "").replace(WORD_JOINER, "") == text
