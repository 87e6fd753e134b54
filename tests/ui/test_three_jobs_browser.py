"""The three jobs walked in a real browser on a demo workspace with its benign twin (``streamlit run`` as the suite
serves it, headless Chromium over the DevTools protocol): open the finder, open one query by clicking its row, read
the gold next to the document that took its place; type a what-if; download a figure and a table."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from emb_s_core import export
from emb_s_core.analysis import finder
from emb_s_core.store import Workspace
from test_dashboard_browser import _serve

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600),
              pytest.mark.skipif(export.find_browser() is None, reason="no Chromium/Chrome installed")]

STATE = """JSON.stringify({text: document.body ? document.body.innerText : '',
  running: document.querySelectorAll('[data-testid=stStatusWidget]').length,
  docs: [...document.querySelectorAll('.emb-doc')].map(d => ({text: d.innerText,
         marks: d.querySelectorAll('mark').length, only: d.querySelectorAll('ins').length})),
  plots: document.querySelectorAll('.js-plotly-plot .main-svg').length,
  cells: [...document.querySelectorAll('[data-testid=stDataFrame] td, [data-testid=stDataFrame] th')]
         .map(c => c.innerText),
  url: location.href})"""


@pytest.fixture(scope="module")
def server(demo_twin_ws, tmp_path_factory):
    data = tmp_path_factory.mktemp("three_jobs")
    (data / "demo").symlink_to(demo_twin_ws)
    proc, base = _serve(data)
    yield base, demo_twin_ws
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


async def _state(tab) -> dict:
    r = await tab.send_command("Runtime.evaluate", params={"expression": STATE, "returnByValue": True})
    return json.loads(r["result"]["result"]["value"])


async def _wait(tab, done, seconds: float = 150) -> dict:
    start, got = time.time(), {}
    while time.time() - start < seconds:
        got = await _state(tab)
        if not got["running"] and done(got):
            return got
        await asyncio.sleep(0.3)
    raise AssertionError(f"timed out at {got.get('url')}; the page shows: {got.get('text', '')[:800]!r}")


async def _open(tab, url: str, done) -> dict:
    """Load ``url`` afresh (a blank page first, so nothing of the page before is read as this one) and wait."""
    await tab.send_command("Page.navigate", params={"url": "about:blank"})
    await asyncio.sleep(0.5)
    await tab.send_command("Page.navigate", params={"url": url})
    return await _wait(tab, done)


async def _js(tab, expr: str):
    r = await tab.send_command("Runtime.evaluate", params={"expression": expr, "returnByValue": True})
    return r["result"]["result"].get("value")


async def _click_at(tab, box: dict) -> None:
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        await tab.send_command("Input.dispatchMouseEvent",
                               params={"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})
        await asyncio.sleep(0.1)


async def _box(tab, expr: str, seconds: float = 20) -> dict:
    """The viewport box of the element ``expr`` finds (waiting for it to be drawn), scrolled into view first."""
    start, found = time.time(), None
    while not found and time.time() - start < seconds:
        found = await _js(tab, f"(() => {{ const e = {expr}; if (!e) return null; "
                               "e.scrollIntoView({block: 'center'}); return JSON.stringify(e.getBoundingClientRect()); "
                               "})()")
        if not found:
            await asyncio.sleep(0.3)
    assert found, f"not on the page: {expr}; it shows {(await _state(tab))['text'][:600]!r}"
    return json.loads(found)


async def _download(tab, folder: Path, label: str, suffix: str, seconds: float = 120) -> Path:
    """Click the first download button labelled ``label`` and wait for its file in ``folder``."""
    before = set(folder.iterdir())
    box = await _box(tab, f"[...document.querySelectorAll('[data-testid=stDownloadButton] button')]"
                          f".find(b => b.innerText.includes({json.dumps(label)}))")
    await _click_at(tab, box)
    start = time.time()
    while time.time() - start < seconds:
        new = [p for p in set(folder.iterdir()) - before if p.suffix == suffix and p.stat().st_size > 0]
        if new:
            return new[0]
        await asyncio.sleep(0.5)
    raise AssertionError(f"no {suffix} file arrived from the {label} button")


async def _walk(base: str, first: str, second: str, expected_other: int, downloads: Path) -> dict:
    import choreographer as choreo

    out: dict = {}
    async with choreo.Browser(headless=True) as browser:
        tab = await browser.create_tab("about:blank")
        await tab.send_command("Emulation.setDeviceMetricsOverride",
                               params={"width": 1400, "height": 1600, "deviceScaleFactor": 1, "mobile": False})
        await tab.send_command("Page.bringToFront")
        await tab.send_command("Emulation.setFocusEmulationEnabled", params={"enabled": True})
        await browser.send_command("Browser.setDownloadBehavior",
                                   params={"behavior": "allow", "downloadPath": str(downloads)})
        # Home first: a fresh server's first load of another page's URL opens a "Page not found" dialog
        await tab.send_command("Page.navigate", params={"url": f"{base}/?ws=demo"})
        await _wait(tab, lambda g: "EMB-S Diagnostics" in g["text"])
        # 1. the finder: the drill-down's landing view, with no parameter but the metric
        await tab.send_command("Page.navigate", params={"url": f"{base}/query_drilldown?ws=demo&metric=R%401"})
        out["finder"] = await _wait(tab, lambda g: "fail at 512K" in g["text"] and len(g["docs"]) == 2
                                    and first in g["cells"])
        # 2. open another query from the finder's table, as a person does: click its row (the row marker at the
        #    grid's left edge; header and rows are 35 px high)
        grid = await _box(tab, "document.querySelector('[data-testid=stDataFrame]')")
        await _click_at(tab, {"x": grid["x"] + 2, "y": grid["y"] + 35 + 35 * 1 + 2, "width": 20, "height": 30})
        # 3. read the gold next to the document that took its place
        out["opened"] = await _wait(tab, lambda g: f"q={second}" in g["url"] and len(g["docs"]) == 2
                                    and f" {expected_other} that outranked it" in g["text"])
        # 4. a what-if: type an edited query into the live box, key by key, and see the ranks follow
        label = json.dumps("Query text (edited)")
        await _js(tab, f"(() => {{ const e = [...document.querySelectorAll('input')].find(e => "
                       f"e.getAttribute('aria-label') === {label}); e.scrollIntoView({{block: 'center'}}); e.focus(); "
                       "e.select(); })()")
        await asyncio.sleep(0.3)
        for ch in "zebra quartz":
            await tab.send_command("Input.dispatchKeyEvent", params={"type": "keyDown", "key": ch, "text": ch,
                                                                     "unmodifiedText": ch})
            await tab.send_command("Input.dispatchKeyEvent", params={"type": "keyUp", "key": ch})
            await asyncio.sleep(0.05)
        out["whatif"] = await _wait(tab, lambda g: "Ranks under the edited text" in g["text"]
                                    and any(" · was " in c for c in g["cells"]))
        # 5. a table (the finder's rows) and a figure (the Overview heatmap) downloaded
        await _open(tab, f"{base}/query_drilldown?ws=demo&metric=R%401", lambda g: "fail at 512K" in g["text"])
        out["table"] = await _download(tab, downloads, "CSV", ".csv")
        await _open(tab, f"{base}/overview?ws=demo&x=rung", lambda g: g["plots"] >= 2)
        out["figure"] = await _download(tab, downloads, "PNG", ".png")
    return out


def test_the_three_jobs_in_chromium(server, tmp_path):
    base, ws_dir = server
    os.environ.setdefault("BROWSER_PATH", export.find_browser() or "")
    ws = Workspace(ws_dir)
    rows = finder.find(ws, "bm25", "64K", "512K", "R@1")
    assert len(rows) >= 2
    second = rows.iloc[1]
    got = asyncio.run(_walk(base, rows["qid"].iloc[0], second["qid"], int(second["other"]), tmp_path))
    landing = got["finder"]["text"]
    cells = got["finder"]["cells"]  # the finder's table: one row per query, the document that took its place
    assert all(q in cells for q in rows["qid"]) and "rank at 512K" in cells, cells[:40]
    assert "Traceback" not in landing and "Page not found" not in landing
    docs = got["opened"]["docs"]  # the gold and the document that took its place, marked, as text
    assert all(d["marks"] > 0 for d in docs) and any(d["only"] > 0 for d in docs)
    assert f"Gold doc {int(second['gold'])} " in got["opened"]["text"]
    assert "Ranks under the edited text" not in landing
    assert any(c.startswith("gold ") for c in got["whatif"]["cells"])  # the what-if's ranks of the gold
    table = got["table"].read_text(encoding="utf-8").splitlines()
    assert table[0].startswith("qid,gold,rank at 64K,rank at 512K,fell by,took its place") and [line.split(",")[0] for line in table[1:]] == rows["qid"].tolist()
    assert got["figure"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
