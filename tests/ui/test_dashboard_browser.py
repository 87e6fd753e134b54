"""The real thing: ``streamlit run`` on a free localhost port, every page loaded in headless Chromium (driven over
the DevTools protocol by choreographer, which kaleido already ships), the rendered DOM text checked, and a
screenshot of each page (into docs/screenshots/ for the README when EMB_S_SCREENSHOTS=1, else a temp folder)."""
from __future__ import annotations

import asyncio
import base64
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import HERE, REPO
from emb_s_core import export

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(300),
              pytest.mark.skipif(export.find_browser() is None, reason="no Chromium/Chrome installed")]

# the README's pictures are refreshed on request (EMB_S_SCREENSHOTS=1), so an ordinary test run leaves the tree clean
SHOTS = REPO / "docs" / "screenshots"
# url path, texts that must be rendered, plotly figures expected, query string
PAGES = [
    ("home", ["EMB-S Diagnostics", "Documents", "Single / multi-source", "Runs", "Pages"], 0, ""),
    ("overview", ["Overview", "Degradation across the ladder", "shown in grey, never as zero"], 2, "&x=rung&k=1"),
    ("query_drilldown", ["Query drill-down", "Rank of each gold and hard-negative document", "Top-K at one rung"], 0,
     "&run=overlap&rung=full&metric=R%401"),
    ("compare", ["Compare two runs", "Queries one run gets and the other misses"], 2, "&a=overlap&b=overlap-idf&k=1"),
    ("ladder", ["Ladder", "Composition", "Source mixing in the top-10"], 2, "&run=overlap"),
    ("access_vs_use", ["Access vs use", "emb-s qa"], 0, ""),  # no QA run in this workspace: says what to run
    ("leaderboard", ["Leaderboard", "Multiple-testing correction", "corrected with Holm"], 1, "&base=overlap&k=1"),
]


def page_url(base: str, path: str) -> str:
    """Home is the default page, served at the root: ``/home`` is no page and opens a "Page not found" dialog."""
    return f"{base}/" if path == "home" else f"{base}/{path}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(dash_ws, payload_ws, tmp_path_factory):
    """One ``streamlit run`` for the module (a start costs 10-20 s on a loaded machine): its data folder holds the
    dashboard workspace as ``demo`` and the payload workspace as ``evil``; yields (base URL, data folder)."""
    data = tmp_path_factory.mktemp("browser_data")
    (data / "demo").symlink_to(dash_ws)
    (data / "evil").symlink_to(payload_ws[0])
    proc, base = _serve(data)
    yield base, data
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


async def _visit(base: str, ws: str, shots: Path = SHOTS) -> dict[str, str]:
    import choreographer as choreo

    texts: dict[str, str] = {}
    shots.mkdir(parents=True, exist_ok=True)
    async with choreo.Browser(headless=True) as browser:
        tab = await browser.create_tab("about:blank")
        await tab.send_command("Emulation.setDeviceMetricsOverride",
                               params={"width": 1400, "height": 1500, "deviceScaleFactor": 1, "mobile": False})
        for path, expected, n_plots, extra in PAGES:
            await tab.send_command("Page.navigate", params={"url": f"{page_url(base, path)}?ws={ws}{extra}"})
            text, start = "", time.time()
            while time.time() - start < 60:
                r = await tab.send_command("Runtime.evaluate", params={"returnByValue": True, "expression": (
                    "JSON.stringify([document.body ? document.body.innerText : '', "
                    "document.querySelectorAll('.js-plotly-plot .main-svg').length, "
                    "document.querySelectorAll('[data-testid=stStatusWidget]').length])")})
                import json

                text, plots, running = json.loads(r["result"]["result"]["value"])
                if all(e in text for e in expected) and plots >= n_plots and not running:
                    break
                await asyncio.sleep(0.5)
            await asyncio.sleep(1.0)  # let plotly finish drawing before the picture
            shot = await tab.send_command("Page.captureScreenshot", params={"format": "png"})
            (shots / f"{path}.png").write_bytes(base64.b64decode(shot["result"]["data"]))
            texts[path] = text
        texts["click"] = await _click_heatmap_cell(tab, base, ws)
    return texts


async def _eval(tab, expr: str):
    r = await tab.send_command("Runtime.evaluate", params={"expression": expr, "returnByValue": True})
    return r["result"]["result"].get("value")


async def _click_heatmap_cell(tab, base: str, ws: str) -> str:
    """Click the (overlap, full) cell of the Overview heatmap; the page should switch to that cell's finder (the
    queries overlap gets at the base and loses at full)."""
    await tab.send_command("Page.navigate", params={"url": f"{base}/overview?ws={ws}&x=rung&runs=overlap,partial"})
    start = time.time()
    while time.time() - start < 60 and (await _eval(tab, "document.querySelectorAll('.js-plotly-plot .main-svg')"
                                                        ".length") or 0) < 2:
        await asyncio.sleep(0.5)
    await asyncio.sleep(1.5)
    import json

    box = json.loads(await _eval(tab, "JSON.stringify(document.querySelector('.js-plotly-plot .nsewdrag')"
                                      ".getBoundingClientRect())"))
    x, y = box["x"] + box["width"] * 11.5 / 12, box["y"] + box["height"] * 0.25  # last column, first of 2 rows
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        await tab.send_command("Input.dispatchMouseEvent",
                               params={"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})
        await asyncio.sleep(0.2)
    start = time.time()
    url = ""
    while time.time() - start < 30:
        url = await _eval(tab, "location.href") or ""
        if "query_drilldown" in url and " fail at full" in (await _eval(tab, "document.body.innerText") or ""):
            break
        await asyncio.sleep(0.5)
    return url


def test_every_page_renders_in_chromium(server, tmp_path):
    base, _ = server
    ws = "demo"  # as a user types it: a name under the data folder
    os.environ.setdefault("BROWSER_PATH", export.find_browser() or "")
    shots = SHOTS if os.environ.get("EMB_S_SCREENSHOTS") else tmp_path / "screenshots"
    texts = asyncio.run(_visit(base, ws, shots))
    for path, expected, _, _ in PAGES:
        text = texts[path]
        missing = [e for e in expected if e not in text]
        assert not missing, f"{path}: {missing} not rendered; got {text[:400]!r}"
        assert "Traceback" not in text and "Error" not in text.replace("Errors", ""), path
        assert "Page not found" not in text, path  # every page opens from its own URL
        png = (shots / f"{path}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000, path
    url = texts["click"]  # clicking a heatmap cell opens the drill-down's finder on that run and rung
    assert "/query_drilldown?" in url and "run=overlap" in url and "rung=full" in url and "by=finder" in url, url


# ------------------------------------------------------------------------------ data never rendered as markup
class _Trap:
    """An HTTP server on the payload's port that records every request (there must be none)."""

    def __init__(self, port: int) -> None:
        import http.server
        import threading

        self.requests: list[str] = []
        trap = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                trap.requests.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def _serve(data: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = dict(os.environ, EMB_S_DATA=str(data), HF_HUB_OFFLINE="1")
    env.pop("EMB_S_ALLOW_ANY_WORKSPACE", None)
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "serve_dashboard.py"), "--server.port", str(port), "--server.address",
         "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{base}/_stcore/health", timeout=2).read() == b"ok":
                return proc, base
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    pytest.fail("streamlit did not start: " + (proc.stdout.read() if proc.stdout else ""))


PROBE = r"""JSON.stringify((() => {
  const port = ':%d';
  const attr = (e, n) => e.getAttribute(n) || e.getAttribute('xlink:' + n) || '';
  return {
    text: document.body ? document.body.innerText : '',
    running: document.querySelectorAll('[data-testid=stStatusWidget]').length,
    imgs: [...document.querySelectorAll('img, image, source, video, iframe')].map(e => attr(e, 'src') + attr(e, 'href'))
          .filter(s => s.includes(port)),
    links: [...document.querySelectorAll('a')].filter(e => attr(e, 'href').includes(port))
           .map(e => attr(e, 'href') + ' in ' + (e.closest('[data-testid]') || {getAttribute: () => '?'})
                .getAttribute('data-testid')),
    scripts: [...document.querySelectorAll('script')].filter(e => e.textContent.includes('pwned')).length,
    pwned: window.pwned === 1,
    bold: [...document.querySelectorAll('strong, b')].filter(e => /^bold|^b$/.test(e.textContent)).length,
    html: [...document.querySelectorAll('*')].flatMap(e => [...e.attributes]
          .filter(a => /^(src|srcset|href|xlink:href|poster|action|formaction|data|background|style|on.*)$/i
                       .test(a.name))
          .map(a => e.tagName + ' ' + a.name + '=' + a.value))
          .filter(v => v.includes('127.0.0.1' + port) || / on\w+=/i.test(' ' + v.split(' ')[1])).slice(0, 3),
  };
})())"""


async def _visit_payload(base: str, urls: list[tuple[str, str, str]], port: int) -> dict[str, dict]:
    import json

    import choreographer as choreo

    seen: dict[str, dict] = {}
    async with choreo.Browser(headless=True) as browser:
        tab = await browser.create_tab("about:blank")
        for path, query, expected in urls:
            await tab.send_command("Page.navigate", params={"url": f"{page_url(base, path)}?{query}"})
            start, probe = time.time(), {}
            while time.time() - start < 60:
                probe = json.loads(await _eval(tab, PROBE % port) or "{}")
                if expected in probe.get("text", "") and not probe.get("running"):
                    break
                await asyncio.sleep(0.5)
            await asyncio.sleep(1.5)  # plotly and late elements
            probe = json.loads(await _eval(tab, PROBE % port) or "{}")
            seen[f"{path}?{query[:80]}#{len(seen)}"] = probe
    return seen


def test_no_markup_from_data_or_url_in_the_real_browser(server, payload_ws):
    """Every page on the payload bank: no <img>, link, script or bold from the data exists in the DOM, and the trap
    server the payload points at receives no request."""
    from urllib.parse import urlencode

    from emb_s_core import runs
    from emb_s_core.store import Workspace

    ws, port = payload_ws
    base, data = server
    w = Workspace(ws)
    evil = next(r for r in runs.list_runs(w)["run"] if r.startswith("run "))
    res = runs.load_results(w, runs=["overlap"])
    qid, rung = str(res["qid"].iloc[0]), str(res["rung"].iloc[-1])
    common = {"ws": str(data / "evil"), "run": evil, "rung": rung, "a": evil, "b": "overlap", "x": "rung",
              "metric": "R@1"}
    urls = [("home", common, "Documents"), ("overview", common, "Degradation"),
            ("query_drilldown", {**common, "by": "search", "find": qid, "q": qid}, "Top-K at one rung"),
            ("query_drilldown", {**common, "by": "failures", "run": "overlap", "q": qid}, "Query drill-down"),
            ("compare", common, "Queries one run gets"), ("ladder", common, "Composition"),
            ("access_vs_use", common, "Access vs use"), ("bank_audit", common, "Bank audit"),
            ("leaderboard", common, "Leaderboard"),
            ("overview", {"ws": "/etc/passwd", "k": "abc"}, "outside the data folder")]
    trap = _Trap(port)
    try:
        os.environ.setdefault("BROWSER_PATH", export.find_browser() or "")
        seen = asyncio.run(_visit_payload(base, [(p, urlencode(q), e) for p, q, e in urls], port))
    finally:
        trap.close()
    for (path, _q, expected), (key, probe) in zip(urls, seen.items()):
        assert expected in probe["text"], f"{key}: {expected!r} not rendered; got {probe['text'][:300]!r}"
        assert "Traceback" not in probe["text"], key
        assert not probe["imgs"] and not probe["links"] and not probe["html"], (key, probe["imgs"], probe["links"],
                                                                               probe["html"])
        assert probe["scripts"] == 0 and not probe["pwned"] and probe["bold"] == 0, (key, probe)
    drill = list(seen.values())[2]  # the drill-down in search mode shows the documents' text
    assert f"![q](http://127.0.0.1:{port}/p-img)" in drill["text"]  # the query text is shown, literally
    assert trap.requests == [], trap.requests
