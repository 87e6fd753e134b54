"""The static embedder distilled from MiniLM-L6 (``dense:minilm-static``) against MiniLM-L6 itself: speed and
retrieval quality. A benchmark, not a test; results go into bench/RESULTS.md.

    python3 bench/bench_static.py shared --queries 40   # a seeded subset of each shared dataset, one workspace each
    python3 bench/bench_static.py demo                  # the default demo bank (static and L3 only, see RESULTS)

Per dataset: the first ``--queries`` questions of the file (with their paragraphs) are imported, the default ladder
is built, and every spec is evaluated on it; SR@10 and FR@10 on the base and the largest rung come from the
project's own metrics (``analysis.views.per_query`` + ``metrics.aggregate``). Speed: documents per second of each
spec's embedding step (``Dense.prepare`` of the whole bank: chunking, encoding, cache write), measured in the same
run one after the other; the one-time distillation is timed apart (with an empty model cache).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from emb_s_core import bank, evaluate, ladder, metrics, retrievers, runs  # noqa: E402
from emb_s_core.analysis import views  # noqa: E402
from emb_s_core.store import Workspace  # noqa: E402

SHARED = Path(os.environ.get("EMB_S_SHARED_DATA", REPO.parent / "shared" / "data"))
# (format, folder, file, how many records one query takes: the JSONL formats are one question per line)
DATASETS = [("hotpotqa", "hotpotqa-dev-distractor-500", "dev_subsampled.jsonl"),
            ("musique", "musique-ans-200", "musique.jsonl"),
            ("2wiki", "2wikimultihopqa-200", "2wikimultihopqa.jsonl"),
            ("locomo", "locomo10", "locomo10.json")]
SPECS = ["dense:minilm-static", "dense:minilm-l6"]


def subset(root: Path, folder: str, file: str, n: int) -> Path:
    """The first ``n`` questions of a JSONL dataset (LoCoMo: the first conversation, its own ~200 questions)."""
    out = root / "subsets" / folder
    out.mkdir(parents=True, exist_ok=True)
    src = SHARED / folder / file
    if file.endswith(".json"):
        (out / file).write_text(json.dumps(json.loads(src.read_text())[:1]))
    else:
        with open(src) as f:
            (out / file).write_text("".join(line for _, line in zip(range(n), f)))
    return out


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def score(ws: Workspace, specs: list[str]) -> dict:
    lad = ladder.load(ws)
    base, top = lad.names[0], lad.names[-1]
    out: dict = {"documents": int(lad.rung(top).n_documents), "rungs": lad.names,
                 "queries": len(lad.rung(top).qids), "specs": {}}
    for spec in specs:
        r = retrievers.get(spec)
        r.check()
        old = runs.get_run(ws, spec)
        if old is not None and old["config"]["retriever"] != r.config():  # another recipe: score it again
            runs.delete_run(ws, spec)
        doc_ids = bank.documents(ws, ["doc_id"])["doc_id"].to_numpy()
        _, t_embed = timed(lambda: r.prepare(ws, doc_ids))
        _, t_eval = timed(lambda: evaluate.evaluate(ws, spec, name=spec, k=100))
        agg = metrics.aggregate(views.per_query(ws, [spec]), metrics=["SR@10", "FR@10"], n_boot=200)
        row = {"embed_s": round(t_embed, 1), "docs_per_s": round(len(doc_ids) / t_embed, 1),
               "eval_s_after_embedding": round(t_eval, 1)}
        for rung in (base, top):
            for m in ("SR@10", "FR@10"):
                cell = agg[(agg["rung"] == rung) & (agg["metric"] == m)]
                if len(cell):
                    c = cell.iloc[0]
                    row[f"{m} {rung}"] = f"{c['value']:.3f} [{c['ci_low']:.3f}, {c['ci_high']:.3f}] n={int(c['n'])}"
        out["specs"][spec] = row
        print(json.dumps({spec: row}), file=sys.stderr, flush=True)
    return out


def bench_distill() -> dict:
    """The one-time distillation into an empty model cache (what a fresh machine pays once)."""
    from emb_s_core.retrievers import static

    with tempfile.TemporaryDirectory() as cache:
        os.environ["EMB_S_MODEL_CACHE"] = cache
        _, t = timed(lambda: static.load_table())
        size = sum(f.stat().st_size for f in Path(cache).iterdir())
    del os.environ["EMB_S_MODEL_CACHE"]
    return {"distill_s": round(t, 1), "table_mib": round(size / 2**20, 1)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("section", choices=["shared", "demo", "distill"])
    p.add_argument("--queries", type=int, default=40)
    p.add_argument("--datasets", default="hotpotqa,musique,2wiki,locomo")
    p.add_argument("--specs", default=",".join(SPECS))
    p.add_argument("--keep", type=Path, default=None)
    args = p.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-static-"))
    specs = args.specs.split(",")
    out: dict = {"load_start": os.getloadavg()}
    if args.section == "distill":
        out["distill"] = bench_distill()
    elif args.section == "shared":
        for fmt, folder, file in DATASETS:
            if fmt not in args.datasets.split(","):
                continue
            path = root / fmt
            if not (path / "workspace.json").exists():
                bank.import_path(path, fmt, subset(root, folder, file, args.queries))
            ws = Workspace(path)
            if not ladder.exists(ws):
                ladder.build(ws)
            out[fmt] = score(ws, specs)
    else:
        from emb_s_core import demo

        path = root / "demo"
        demo.build(path, retrievers=("bm25",))
        out["demo"] = score(Workspace(path), specs)
    out["load_end"] = os.getloadavg()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
