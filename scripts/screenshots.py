"""README pictures from a real workspace (not a test):

    python3 scripts/screenshots.py WORKSPACE [--run bm25 --from 512K --to full] [--b hybrid:bm25+dense:minilm-static]

Serves the dashboard on WORKSPACE and, in headless Chromium, writes to docs/screenshots/: overview_twin.png (benign
twin rows, dashed twin curves, effective-scale lines), explain.png ("Why did it move?" from --from to --to),
finder.png (the drill-down's landing view: queries --run gets at the base and loses at the largest rung),
reading.png (the first of them: its gold next to the document that took its place, what tells them apart marked) and
compare.png (--run against --b). Pictures are kept small: a 1400 px wide viewport, PNG with a 64-colour palette.
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHOTS = REPO / "docs" / "screenshots"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _shoot(base: str, pages: list[tuple]) -> None:
    """Each page: (file name, url, text to wait for, plotly figures to wait for[, text of the element to scroll to the
    top, viewport height])."""
    import choreographer as choreo

    async with choreo.Browser(headless=True) as browser:
        tab = await browser.create_tab(f"{base}/")  # the app's main page first: a deep link then resolves
        await asyncio.sleep(5.0)
        await tab.send_command("Emulation.setDeviceMetricsOverride",
                               params={"width": 1400, "height": 1700, "deviceScaleFactor": 1, "mobile": False})
        for name, url, text, n_plots, *more in pages:
            scroll_to, height = (more + [None, 1700])[:2]
            await tab.send_command("Emulation.setDeviceMetricsOverride",
                                   params={"width": 1400, "height": height, "deviceScaleFactor": 1, "mobile": False})
            await tab.send_command("Page.navigate", params={"url": f"{base}/{url}"})
            start = time.time()
            while time.time() - start < 240:
                r = await tab.send_command("Runtime.evaluate", params={"returnByValue": True, "expression": (
                    "JSON.stringify([document.body ? document.body.innerText : '', "
                    "document.querySelectorAll('.js-plotly-plot .main-svg').length, "
                    "document.querySelectorAll('[data-testid=stStatusWidget]').length])")})
                body, plots, running = json.loads(r["result"]["result"]["value"])
                if text in body and plots >= n_plots and not running:
                    break
                await asyncio.sleep(1.0)
            await asyncio.sleep(2.0)
            if scroll_to:  # the part of a long page the picture is about, at the top of the viewport
                await tab.send_command("Runtime.evaluate", params={"expression": (
                    f"[...document.querySelectorAll('p, strong')].find(e => e.innerText.startsWith({json.dumps(scroll_to)}))"
                    ".scrollIntoView({block: 'start'}); "
                    "document.querySelector('[data-testid=stMain]')?.scrollBy(0, -90)")})
                await asyncio.sleep(1.5)
            shot = await tab.send_command("Page.captureScreenshot", params={"format": "png"})
            _save_small(base64.b64decode(shot["result"]["data"]), SHOTS / name)
            print(f"wrote {SHOTS / name} ({(SHOTS / name).stat().st_size // 1024} KB)")


def _save_small(png: bytes, path: Path) -> None:
    """The screenshot as a 64-colour palette PNG: a quarter of the bytes, and text stays sharp."""
    import io

    from PIL import Image

    Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(
        path, format="PNG", optimize=True)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("workspace", type=Path)
    p.add_argument("--run", default="bm25")
    p.add_argument("--from", dest="rung_from", default="512K")
    p.add_argument("--to", dest="rung_to", default="full")
    p.add_argument("--b", default="hybrid:bm25+dense:minilm-static", help="the run compared with --run on Compare")
    p.add_argument("--pages", default="overview_twin,explain,finder,reading,compare",
                   help="which pictures to take (comma-separated file names without .png)")
    args = p.parse_args()
    data = Path(tempfile.mkdtemp(prefix="shots-"))
    (data / "demo").symlink_to(args.workspace.resolve())
    port = _port()
    sys.path[:0] = [str(REPO)]
    from ui import serve

    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"), "--server.port",
                             str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
                             "--browser.gatherUsageStats", "false"], cwd=REPO,
                            env=dict(os.environ, EMB_S_DATA=str(data), PYTHONPATH=str(REPO)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        serve.wait_ready(base, 60)
        ws = str(data / "demo")
        SHOTS.mkdir(parents=True, exist_ok=True)
        wanted = set(args.pages.split(","))
        asyncio.run(_shoot(base, [page for page in [
            ("overview_twin.png", f"overview?ws={ws}&x=scale&metric=SR%40K&k=10", "The illusion gap", 2),
            ("explain.png", f"why_did_it_move?ws={ws}&" + urllib.parse.urlencode(
                {"run": args.run, "from": args.rung_from, "to": args.rung_to, "k": 10}),
             "queries lost a gold document", 1),
            ("finder.png", f"query_drilldown?ws={ws}&" + urllib.parse.urlencode(
                {"run": args.run, "metric": "SR@K", "k": 10}), "went the other way", 0, None, 1000),
            ("reading.png", f"query_drilldown?ws={ws}&" + urllib.parse.urlencode(
                {"run": args.run, "metric": "SR@K", "k": 10}), "Underlined: names and numbers", 0, "Gold doc ", 900),
            ("compare.png", f"compare?ws={ws}&" + urllib.parse.urlencode(
                {"a": args.run, "b": args.b, "metric": "SR@K", "k": 10}),
             "Queries one run gets and the other misses", 2, None, 1500),
        ] if page[0].removesuffix(".png") in wanted]))
    finally:
        proc.terminate()
        proc.wait(timeout=20)


if __name__ == "__main__":
    main()
