"""The built ladder on the four shared real datasets (issue 20): rung sizes and hard-negative coverage, and the
retrieval scores on every rung.

Usage:
    python3 bench/bench_ladder_real.py ladder OUT.json [--base 64K]      # import each dataset, build, describe
    python3 bench/bench_ladder_real.py eval OUT.json [--base 64K] [--retrievers bm25,dense:minilm-l6]
    python3 bench/bench_ladder_real.py prepare OUT.json                   # BM25 prepare: one rung vs the bank

``ladder`` only uses ``bank.import_path``, ``ladder.build`` and the rung attributes every version has, so running it
with ``PYTHONPATH`` set to another checkout (main) gives the "before" table of the same banks. Each dataset is its
own one-domain bank (``--domain <name>``); ``all-4`` holds the four datasets as four domains. ``eval`` runs each
retriever on every rung and writes SR@10, FR@10 and HN-intrusion per rung (no bootstrap: n is given). ``prepare``
times BM25's prepare on the all-4 bank for its first base rung and for the whole bank (best of 3, alternating).
Data: ../shared/data (EMB_S_SHARED_DATA); workspaces under a temp folder.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.environ.get("BENCH_CODE", str(Path(__file__).resolve().parents[1])))

from emb_s_core import bank, ladder  # noqa: E402
from emb_s_core.store import Workspace  # noqa: E402

DATA = Path(os.environ.get("EMB_S_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
DATASETS = {"hotpotqa": "hotpotqa-dev-distractor-500", "musique": "musique-ans-200",
            "2wiki": "2wikimultihopqa-200", "locomo": "locomo10"}
METRICS = ["SR@10", "FR@10", "HN-intrusion"]


def banks(root: Path) -> dict[str, Path]:
    out = {}
    for name, folder in DATASETS.items():
        out[name] = root / name
        bank.import_path(out[name], name, DATA / folder, domain=name)
    out["all-4"] = root / "all-4"
    for name, folder in DATASETS.items():
        bank.import_path(out["all-4"], name, DATA / folder, domain=name)
    return out


def describe(lad) -> list[dict]:
    rows = []
    for r in lad.rungs:
        cov = r.composition.get("hard_negative_coverage", {})
        rows.append({"rung": r.name, "kind": r.kind, "tokens": int(r.n_tokens), "documents": int(r.n_documents),
                     "queries": len(r.qids), "hn_coverage": cov.get("mean"), "hash": r.membership_hash[:12]})
    return rows


def time_prepare(ws: Workspace, rung_ids) -> dict:
    """BM25 prepare for one rung's documents and for the whole bank, best of 3 each, alternating."""
    from emb_s_core import retrievers

    best = {"rung": float("inf"), "bank": float("inf")}
    rows = {}
    for _ in range(3):
        for label, ids in (("rung", rung_ids), ("bank", None)):
            r = retrievers.get("bm25")
            t0 = time.perf_counter()
            r.prepare(ws, ids)
            best[label] = min(best[label], time.perf_counter() - t0)
            rows[label] = getattr(r, "rows_read", None)  # main has no counter
    return {"rung_s": round(best["rung"], 3), "bank_s": round(best["bank"], 3), "rows_read": rows}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("phase", choices=["ladder", "eval", "prepare"])
    parser.add_argument("out")
    parser.add_argument("--base", default="64K")
    parser.add_argument("--retrievers", default="bm25")
    parser.add_argument("--only", default=None, help="comma-separated bank names (default: all)")
    args = parser.parse_args()
    result: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        made = banks(Path(tmp))
        for name, path in made.items():
            if args.only and name not in args.only.split(","):
                continue
            ws = Workspace(path)
            t0 = time.perf_counter()
            lad = ladder.build(ws, ladder.LadderOptions(base=args.base))
            entry = {"build_s": round(time.perf_counter() - t0, 2), "kept": int(lad.kept["kept"].sum()),
                     "queries": len(lad.kept), "rungs": describe(lad), "messages": lad.messages}
            if args.phase == "prepare":
                entry["prepare"] = time_prepare(ws, lad.rungs[0].doc_ids)
            if args.phase == "eval":
                from emb_s_core import evaluate
                from emb_s_core.analysis import report

                entry["scores"] = {}
                for spec in args.retrievers.split(","):
                    t0 = time.perf_counter()
                    run = evaluate.evaluate(ws, spec, k=10)
                    took = time.perf_counter() - t0
                    rows = report.rows(Workspace(path), runs=[run], metric_names=METRICS, n_boot=0)
                    entry["scores"][spec] = {"eval_s": round(took, 1), "rows": rows[["rung", "metric", "value", "n"]]
                                             .to_dict("records")}
                    print(f"{name} {spec}: {took:.1f} s", file=sys.stderr)
            result[name] = entry
            print(f"{name}: {len(lad.rungs)} rungs, kept {entry['kept']}/{entry['queries']}", file=sys.stderr)
    Path(args.out).write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
