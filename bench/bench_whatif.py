"""The what-if box (issue 24 §3): time from an edited query to the redrawn table, warm, on a real workspace.

    python3 bench/bench_whatif.py WORKSPACE [--queries 20] [--specs bm25,dense:minilm-l3,...] [--apptest]
        [--browser N] [--dump FRAMES.parquet]

For each of ``--queries`` seeded bank queries with a hard negative, three edits (a word dropped, a word added, the
words reversed) are re-ranked by ``analysis.whatif.what_if`` with every live retriever (the workspace's retriever runs
plus BM25, or ``--specs``) on all the query's rungs, then drawn into the page's table (``whatif.table``). Measured
separately: embedding the edited text with each dense model (the floor: one ``encode`` call), the rest of the
re-ranking, and the table. Preparing each retriever (first use in a process: BM25 indexes, vectors read) is reported
apart: the dashboard pays it once per server. ``--apptest`` also times the drill-down page's rerun after a
``set_value`` on the box in Streamlit's AppTest (the whole script; a browser reruns only the box's fragment);
``--browser N`` types N edits (a word added, key by key) into the box of a served dashboard in headless Chromium and
times the last key to the redrawn table, with the box's own milliseconds (its caption) apart (the first redrawn
table, which prepares each retriever in the server, is not counted). ``--dump`` writes every
what-if frame, so two checkouts' ranks can be compared.
Prints Markdown for bench/RESULTS.md with the machine and load average.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAUSE = "300ms"  # ui.whatif.PAUSE (not imported: it imports streamlit)
sys.path[:0] = [str(REPO)]
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def edits(text: str) -> list[str]:
    words = text.split()
    return [" ".join(words[:-1]) or text, text + " exactly", " ".join(reversed(words))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--specs", default=None, help="comma-separated retriever specs (default: the workspace's)")
    ap.add_argument("--apptest", action="store_true")
    ap.add_argument("--browser", type=int, default=0, metavar="N",
                    help="also time N edits typed into the box in headless Chromium (last key to redrawn table)")
    ap.add_argument("--dump", default=None, help="write every what-if frame here (parquet): two checkouts' ranks compared")
    args = ap.parse_args()

    import numpy as np

    from emb_s_core import bank, evaluate, ladder, runs
    from emb_s_core.analysis import whatif
    from emb_s_core.errors import EmbSError
    from emb_s_core.retrievers.base import EMBEDDINGS
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    load0 = os.getloadavg()[0]
    lad = ladder.load(ws)
    results = runs.load_results(ws)
    specs = whatif.specs_of(runs.list_runs(ws))
    if args.specs:
        specs = {s: specs.get(s, []) for s in args.specs.split(",")}
    qs = bank.queries(ws)
    qs = qs[qs["hard_negative_ids"].map(lambda h: h is not None and len(h) > 0)]
    kept = set().union(*(set(r.qids) for r in lad.rungs))
    qs = qs[qs["qid"].isin(kept)].sample(min(args.queries, len(qs)), random_state=0)

    prepare_s, live = {}, {}
    for spec, run_names in specs.items():
        t0 = time.perf_counter()
        try:
            evaluate.prepared(ws, spec)
        except EmbSError as exc:  # reported, then left out as the page does
            print(f"{spec}: left out ({exc})")
            continue
        prepare_s[spec] = time.perf_counter() - t0
        live[spec] = run_names
    dense = {s: evaluate.prepared(ws, s) for s in live if evaluate.prepared(ws, s).can(EMBEDDINGS)}

    embed_ms, whatif_ms, table_ms, total_ms, per_spec = [], [], [], [], {s: [] for s in live}
    frames = []
    n_rungs = []
    for q in qs.itertuples(index=False):
        pools = {r.name: r.doc_ids for r in lad.rungs if q.qid in set(r.qids)}
        n_rungs.append(len(pools))
        mine = results[results["qid"] == q.qid]
        for text in edits(q.text):
            t0 = time.perf_counter()
            for r in dense.values():
                r.embedder.encode([text])
            embed_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            out = whatif.what_if(lambda s: evaluate.prepared(ws, s), text, list(q.ref_ids),
                                 list(q.hard_negative_ids), pools, live, mine)
            t1 = time.perf_counter()
            whatif.table(out)
            t2 = time.perf_counter()
            whatif_ms.append((t1 - t0) * 1000)
            table_ms.append((t2 - t1) * 1000)
            total_ms.append((t2 - t0) * 1000)
            if args.dump:
                frames.append(out.frame.assign(qid=q.qid, text=text))
            for s, sec in out.seconds.items():
                per_spec[s].append(sec * 1000)

    if args.dump:
        import pandas as pd

        pd.concat(frames, ignore_index=True).to_parquet(args.dump)
    page_ms = _apptest(args.workspace, qs.iloc[0], edits(qs.iloc[0]["text"])) if args.apptest else []
    browser_ms = _browser(args.workspace, qs.iloc[0]["qid"], args.browser) if args.browser else []
    if browser_ms:
        print("browser (last key to table, box's own) ms: " + ", ".join(f"{a:.0f}/{b:.0f}" for a, b in browser_ms))
    load1 = os.getloadavg()[0]
    docs = len(bank.documents(ws, ["doc_id"]))
    tokens = int(bank.documents(ws, ["n_tokens"])["n_tokens"].sum())

    def p(xs, q):
        return float(np.percentile(xs, q)) if xs else float("nan")

    print(f"\nMachine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; load "
          f"average {load0:.1f} at start, {load1:.1f} at end. Workspace: {docs:,} documents, {tokens:,} tokens; "
          f"{len(qs)} queries × 3 edits, {statistics.median(n_rungs):.0f} rungs per query (median); "
          f"retrievers: {', '.join(live)}.\n")
    print("| step | median ms | p90 ms | max ms |\n|---|---|---|---|")
    rows = [("embed the edited text (every dense model; the floor)", embed_ms),
            ("what_if: all retrievers × all rungs (embedding included)", whatif_ms),
            ("table for the page", table_ms),
            ("keystroke to table: what_if + table (the box's work per edit)", total_ms)]
    rows += [(f"  of which {s}", v) for s, v in per_spec.items()]
    if page_ms:
        rows.append(("AppTest: drill-down page rerun after typing (whole script)", page_ms))
    if browser_ms:
        rows.append((f"browser: last key to redrawn table (includes the box's {PAUSE} typing pause)",
                     [a for a, _ in browser_ms]))
        rows.append(("  of which the box's own re-ranking and table (the ms its caption shows)", [b for _, b in browser_ms]))
    for name, xs in rows:
        print(f"| {name} | {p(xs, 50):.1f} | {p(xs, 90):.1f} | {max(xs) if xs else float('nan'):.1f} |")
    print("\nFirst use per process (not per keystroke): " + ", ".join(f"{s} {v:.1f} s" for s, v in prepare_s.items()))


def _apptest(workspace: str, q, texts: list[str]) -> list[float]:
    from streamlit.testing.v1 import AppTest

    folder = Path(workspace).resolve()
    os.environ["EMB_S_DATA"] = str(folder.parent)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600)
    for k, v in {"ws": str(folder), "by": "search", "find": q["qid"], "q": q["qid"]}.items():
        at.query_params[k] = v
    at.switch_page("pages/3_Query_drilldown.py")
    at.run()
    out = []
    for text in texts * 2:
        box = at.text_input(key=f"whatif_drill_{q['qid']}")
        t0 = time.perf_counter()
        box.set_value(text).run()
        out.append((time.perf_counter() - t0) * 1000)
        if at.exception:
            raise RuntimeError(at.exception[0].message)
    return out


LABEL = "Query text (edited)"
PROBE = """JSON.stringify((() => {
  const caption = [...document.querySelectorAll('p')].map(e => e.innerText)
                  .find(t => t.startsWith('Ranks under the edited text')) || '';
  return {caption: caption, running: document.querySelectorAll('[data-testid=stStatusWidget]').length,
          box: [...document.querySelectorAll('input')].some(e => e.getAttribute('aria-label') === %s),
          text: document.body ? document.body.innerText.slice(0, 20000) : ''};
})())""" % json.dumps(LABEL)


def _browser(workspace: str, qid: str, n: int) -> list[tuple[float, float]]:
    """Type ``n`` edits into the drill-down's box in headless Chromium against ``ui.serve``; each is timed from its
    last key event to the box's caption (which carries the re-ranking's own milliseconds) being redrawn. The first
    edit prepares the retrievers (the server's first use) and is not counted."""
    import asyncio
    import subprocess

    from emb_s_core import export
    from ui import serve

    folder = Path(workspace).resolve()
    with __import__("socket").socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = dict(os.environ, EMB_S_DATA=str(folder.parent))
    proc = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port", str(port), "--server.address",
                             "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    os.environ.setdefault("BROWSER_PATH", export.find_browser() or "")
    try:
        if not serve.wait_ready(base, 60):
            raise RuntimeError("the dashboard's server did not start")
        return asyncio.run(_type(base, str(folder), qid, n))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def _type(base: str, ws: str, qid: str, n: int) -> list[tuple[float, float]]:
    import asyncio

    import choreographer as choreo

    async def probe(tab) -> dict:
        r = await tab.send_command("Runtime.evaluate", params={"expression": PROBE, "returnByValue": True})
        return json.loads(r["result"]["result"]["value"])

    async def until(tab, done, seconds: float) -> dict:
        start, got = time.perf_counter(), {}
        while time.perf_counter() - start < seconds:
            got = await probe(tab)
            if done(got):
                return got
            await asyncio.sleep(0.02)
        return got

    async with choreo.Browser(headless=True) as browser:
        tab = await browser.create_tab("about:blank")
        await tab.send_command("Emulation.setDeviceMetricsOverride",
                               params={"width": 1400, "height": 2400, "deviceScaleFactor": 1, "mobile": False})
        await tab.send_command("Page.bringToFront")
        await tab.send_command("Emulation.setFocusEmulationEnabled", params={"enabled": True})
        await tab.send_command("Page.navigate", params={"url": f"{base}/?ws={ws}"})
        # Home first: a fresh server's first load of another page's URL opens a "Page not found" dialog
        await until(tab, lambda g: "EMB-S Diagnostics" in g["text"] and not g["running"], 120)
        await tab.send_command("Page.navigate",
                               params={"url": f"{base}/query_drilldown?ws={ws}&by=search&find={qid}&q={qid}"})
        got = await until(tab, lambda g: "Edit the text above" in g["text"] and not g["running"], 300)
        if "Edit the text above" not in got["text"]:
            raise RuntimeError("the drill-down's box did not appear: " + got["text"][:300])
        focus = (f"(() => {{ const e = [...document.querySelectorAll('input')].find(e => e.getAttribute('aria-label')"
                 f" === {json.dumps(LABEL)}); e.focus(); e.setSelectionRange(e.value.length, e.value.length); }})()")
        out, warm = [], False
        for i in range(n + 1):
            await tab.send_command("Runtime.evaluate", params={"expression": focus})
            before = (await probe(tab))["caption"]
            t0 = time.perf_counter()
            for ch in f" w{i}":  # a word added at the end, key by key as a person types
                await tab.send_command("Input.dispatchKeyEvent", params={"type": "keyDown", "key": ch, "text": ch,
                                                                         "unmodifiedText": ch})
                await tab.send_command("Input.dispatchKeyEvent", params={"type": "keyUp", "key": ch})
                t0 = time.perf_counter()
                await asyncio.sleep(0.05)
            got = await until(tab, lambda g: g["caption"] and g["caption"] != before,
                              180 if i == 0 else 20)
            if not (got.get("caption") and got["caption"] != before):
                print(f"browser edit {i}: no redrawn table ({got.get('text', '')[:300]!r})", file=sys.stderr)
            elif not warm:  # the first redrawn table paid the server's first use of each retriever
                warm = True
            else:
                took = re.search(r"· (\d+) ms", got["caption"])
                out.append(((time.perf_counter() - t0) * 1000, float(took.group(1)) if took else float("nan")))
        return out


if __name__ == "__main__":
    main()
