"""Every dashboard page, cold and warm, in one run (issue 24 §4): Streamlit's AppTest on a real workspace.

    python3 bench/bench_pages.py WORKSPACE [WORKSPACE ...] [--repeat 3] [--pages 'Compare,Query drilldown']

For each workspace and each page of the navigation (``ui.navigation.pages``, so a new page is measured without
editing this file), opened with only the workspace in its URL (the drill-down also with one query open, so its
what-if box runs): *cold* = every Streamlit cache and the live-retriever cache emptied first (imports already done:
a server's first visitor after a start pays imports once on top), *warm* = the same page again, median and max of
``--repeat``. AppTest rescans installed packages for component manifests on every run (a server does it once at
start); the warm runs leave that harness cost out, as bench/bench_dashboard.py does. Prints a Markdown table.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench_dashboard import run_page  # noqa: E402  (the same AppTest run: page file name, URL parameters)


def clear_caches() -> None:
    import streamlit as st

    from emb_s_core import evaluate

    st.cache_data.clear()
    st.cache_resource.clear()
    evaluate._LIVE.clear()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspaces", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pages", default=None, help="comma-separated page titles (default: every page)")
    args = ap.parse_args()
    from streamlit.components.v2 import component_manager

    from emb_s_core import bank, runs
    from emb_s_core.store import Workspace
    from ui import navigation

    scan = component_manager.BidiComponentManager.discover_and_register_components
    load0 = os.getloadavg()[0]
    tables = []
    for path in args.workspaces:
        folder = Path(path).resolve()
        os.environ["EMB_S_DATA"] = str(folder.parent)
        ws = Workspace(folder)
        docs = bank.documents(ws, ["n_tokens"])
        n_runs = len(runs.list_runs(ws))
        qid = bank.queries(ws)["qid"].iloc[0]
        rows = []
        for page in navigation.pages():
            if args.pages and page.title not in args.pages.split(","):
                continue
            params = {"ws": str(folder)}
            if page.path.name == "3_Query_drilldown.py":
                params.update(by="search", find=qid, q=qid)
            component_manager.BidiComponentManager.discover_and_register_components = scan
            run_page(navigation.pages()[0].path.name, {"ws": str(folder)})  # the harness's first-run costs, not the page's
            component_manager.BidiComponentManager.discover_and_register_components = lambda self, *a, **k: None
            clear_caches()
            cold = run_page(page.path.name, params)
            warm = [run_page(page.path.name, params) for _ in range(args.repeat)]
            rows.append((page.title, cold, statistics.median(warm), max(warm)))
            print(f"{folder.name} {page.title}: cold {cold:.2f} s, warm {statistics.median(warm):.3f} s", flush=True)
        tables.append((folder.name, len(docs), int(docs["n_tokens"].sum()), n_runs, rows))
    load1 = os.getloadavg()[0]
    print(f"\nMachine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; load average "
          f"{load0:.1f} at start, {load1:.1f} at end; warm = median (max) of {args.repeat}.\n")
    for name, n_docs, n_tokens, n_runs, rows in tables:
        print(f"\n`{name}`: {n_docs:,} documents, {n_tokens:,} tokens, {n_runs} runs\n")
        print("| page | cold s | warm s (median) | warm s (max) |\n|---|---|---|---|")
        for title, cold, med, mx in rows:
            print(f"| {title} | {cold:.2f} | {med:.3f} | {mx:.3f} |")


if __name__ == "__main__":
    main()
