"""README pictures of the illusion diagnostics from a real workspace (not a test):

    python3 scripts/screenshots_illusion.py WORKSPACE [--run bm25 --from 512K --to full]

Serves the dashboard on WORKSPACE, opens the Overview (benign twin rows, dashed twin curves, effective-scale lines)
and the "Why did it move?" page in headless Chromium, and writes docs/screenshots/overview_twin.png and explain.png.
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


async def _shoot(base: str, pages: list[tuple[str, str, str, int]]) -> None:
    import choreographer as choreo

    async with choreo.Browser(headless=True) as browser:
        tab = await browser.create_tab(f"{base}/")  # the app's main page first: a deep link then resolves
        await asyncio.sleep(5.0)
        await tab.send_command("Emulation.setDeviceMetricsOverride",
                               params={"width": 1400, "height": 1700, "deviceScaleFactor": 1, "mobile": False})
        for name, url, text, n_plots in pages:
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
            shot = await tab.send_command("Page.captureScreenshot", params={"format": "png"})
            (SHOTS / name).write_bytes(base64.b64decode(shot["result"]["data"]))
            print(f"wrote {SHOTS / name}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("workspace", type=Path)
    p.add_argument("--run", default="bm25")
    p.add_argument("--from", dest="rung_from", default="512K")
    p.add_argument("--to", dest="rung_to", default="full")
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
        asyncio.run(_shoot(base, [
            ("overview_twin.png", f"overview?ws={ws}&x=scale&metric=SR%40K&k=10", "The illusion gap", 2),
            ("explain.png", f"why_did_it_move?ws={ws}&" + urllib.parse.urlencode(
                {"run": args.run, "from": args.rung_from, "to": args.rung_to, "k": 10}),
             "queries lost a gold document", 1),
        ]))
    finally:
        proc.terminate()
        proc.wait(timeout=20)


if __name__ == "__main__":
    main()
