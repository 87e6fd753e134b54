"""The what-if box in a real browser: ``streamlit run`` served as the suite does, headless Chromium types an edited
query into the drill-down's box (key events, no Enter: the live input commits after a pause) and reads the ranks
from the rendered page."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time

import pytest

from emb_s_core import bank, export
from emb_s_core.store import Workspace
from test_dashboard_browser import _serve

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(300),
              pytest.mark.skipif(export.find_browser() is None, reason="no Chromium/Chrome installed")]

LABEL = "Query text (edited)"
READ = """JSON.stringify((() => {
  const input = [...document.querySelectorAll('input')].find(e => e.getAttribute('aria-label') === %s);
  const grids = [...document.querySelectorAll('[data-testid=stDataFrame], [data-testid=stTable]')];
  const cells = grids.map(g => [...g.querySelectorAll('td, th')].map(c => c.innerText));
  return {value: input ? input.value : null, cells: cells,
          running: document.querySelectorAll('[data-testid=stStatusWidget]').length,
          text: document.body ? document.body.innerText : ''};
})())"""


@pytest.fixture(scope="module")
def server(dash_ws, tmp_path_factory):
    from testkit.whatif_bank import build

    data = tmp_path_factory.mktemp("whatif_browser")
    build(dash_ws, data / "live")
    proc, base = _serve(data)
    yield base, str(data / "live")
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


async def _read(tab) -> dict:
    r = await tab.send_command("Runtime.evaluate", params={"expression": READ % json.dumps(LABEL),
                                                          "returnByValue": True})
    return json.loads(r["result"]["result"]["value"])


async def _wait(tab, done, what: str, seconds: float = 90) -> dict:
    """The page once ``done`` holds and no script runs; a page that never gets there fails here, saying what it
    waited for and what it showed (not later, on a page that was never ready)."""
    start, got = time.time(), {}
    while time.time() - start < seconds:
        got = await _read(tab)
        if not got["running"] and done(got):
            return got
        await asyncio.sleep(0.3)
    raise AssertionError(f"waited {seconds:.0f} s for {what}; the page showed: {got.get('text', '')[:600]!r}")


def _what_if_table(got: dict) -> list[str]:
    """The cells of the table that has a "moved" column (the what-if table)."""
    return next((cells for cells in got["cells"] if "moved" in cells), [])


async def _type(base: str, ws: str, qid: str, edit: str) -> tuple[dict, dict]:
    import choreographer as choreo

    async with choreo.Browser(headless=True) as browser:
        tab = await browser.create_tab("about:blank")
        await tab.send_command("Emulation.setDeviceMetricsOverride",
                               params={"width": 1400, "height": 2400, "deviceScaleFactor": 1, "mobile": False})
        await tab.send_command("Page.bringToFront")  # a page without focus ignores key events
        await tab.send_command("Emulation.setFocusEmulationEnabled", params={"enabled": True})
        # Home first: a fresh server's first load of another page's URL opens a "Page not found" dialog
        await tab.send_command("Page.navigate", params={"url": f"{base}/?ws={ws}"})
        await _wait(tab, lambda g: "EMB-S Diagnostics" in g["text"], "Home", seconds=120)
        await tab.send_command("Page.navigate",
                               params={"url": f"{base}/query_drilldown?ws={ws}&by=search&find={qid}&q={qid}"})
        before = await _wait(tab, lambda g: g["value"] is not None and "Edit the text above" in g["text"],
                             "the drill-down's what-if box")
        # focus the box, select its text, type the edit key by key
        await tab.send_command("Runtime.evaluate", params={"expression": (
            f"(() => {{ const e = [...document.querySelectorAll('input')].find(e => e.getAttribute('aria-label') "
            f"=== {json.dumps(LABEL)}); e.focus(); e.select(); }})()")})
        await asyncio.sleep(0.5)
        for ch in edit:  # one key at a time, as a person types (the first replaces the selected text)
            await tab.send_command("Input.dispatchKeyEvent", params={"type": "keyDown", "key": ch, "text": ch,
                                                                     "unmodifiedText": ch})
            await tab.send_command("Input.dispatchKeyEvent", params={"type": "keyUp", "key": ch})
            await asyncio.sleep(0.05)
        after = await _wait(tab, lambda g: any(" · was " in c for c in _what_if_table(g)),
                            "the what-if table after typing")
        return before, after


def test_typing_in_the_what_if_box_updates_the_ranks(server):
    base, ws = server
    os.environ.setdefault("BROWSER_PATH", export.find_browser() or "")
    qs = bank.queries(Workspace(ws))
    q = qs[qs["hard_negative_ids"].map(lambda h: h is not None and len(h) > 0)].iloc[0]
    before, after = asyncio.run(_type(base, ws, q["qid"], "zebra quartz"))
    assert before["value"] == q["text"], before.get("text", "")[:500]
    assert not _what_if_table(before)  # nothing re-ranked before the first edit
    cells = _what_if_table(after)
    assert "bm25" in cells and "dense:minilm-l3" in cells, cells[:40]
    assert after["value"] == "zebra quartz", after.get("text", "")[:500]
    gold = [c for c in cells if c.startswith("gold ")]
    assert gold and any(" · was " in c for c in cells), cells[:60]
    assert "Traceback" not in after["text"]
