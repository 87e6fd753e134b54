"""Domain labeling on real banks: the four shared datasets in one workspace, and the demo bank (true domains known).

Zero-shot with dense:minilm-l6 (the paper's 8 domain descriptions), then `emb-s ladder build` on the labeled bank.
Prints markdown for bench/RESULTS.md: wall times, domain distribution per source, agreement on the demo bank, and
the resulting ladder. Usage: python3 bench/domains_bench.py [--data ../shared/data] [--demo-tokens 524288] OUT_DIR
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emb_s_core import bank, domains, ladder  # noqa: E402
from emb_s_core.store import Workspace  # noqa: E402

DATASETS = [("hotpotqa", "hotpotqa-dev-distractor-500"), ("musique", "musique-ans-200"),
            ("2wiki", "2wikimultihopqa-200"), ("locomo", "locomo10")]


def md(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else f"{v}" for v in row) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--demo-tokens", type=int, default=512 * 1024)
    args = ap.parse_args()

    real = args.out / "real"
    t0 = time.perf_counter()
    for fmt, folder in DATASETS:
        bank.import_path(real, fmt, args.data / folder)
    t_import = time.perf_counter() - t0
    ws = Workspace(real)
    t0 = time.perf_counter()
    lab = domains.label(ws)
    t_label = time.perf_counter() - t0
    t0 = time.perf_counter()
    lab2 = domains.label(Workspace(real))  # second call: embeddings come from the cache
    t_label_cached = time.perf_counter() - t0
    assert lab2.documents["domain"].equals(lab.documents["domain"])
    domains.apply(Workspace(real), lab)
    t0 = time.perf_counter()
    lad = ladder.build(Workspace(real))
    t_ladder = time.perf_counter() - t0
    docs = bank.documents(Workspace(real), ["doc_id", "domain", "source", "n_tokens"])
    qs = bank.queries(Workspace(real))
    print(f"### Four shared datasets in one workspace ({len(docs):,} documents, {int(docs.n_tokens.sum()):,} tokens,"
          f" {len(qs):,} queries)\n")
    print(f"import {t_import:.1f} s; zero-shot labeling with dense:minilm-l6 {t_label:.1f} s (embedding every "
          f"document once), again from the embedding cache {t_label_cached:.1f} s; ladder build {t_ladder:.1f} s.\n")
    print("Documents per (source, new domain):\n")
    print(md(pd.crosstab(docs["source"], docs["domain"]).reset_index()))
    print("\nQueries per (source, new domain):\n")
    print(md(pd.crosstab(qs["source"], qs["domain"]).reset_index()))
    margin = lab.documents["margin"]
    print(f"\nMargin between the best and second domain similarity: median {margin.median():.3f}, "
          f"share below 0.02: {(margin < 0.02).mean():.1%}.\n")
    print("Ladder built from the labeled bank:\n")
    print(md(lad.table().drop(columns=["hash"])))
    for m in lad.messages:
        print(f"\n- {m}")

    from emb_s_core.sources import synthetic

    demo = args.out / "demo"
    dws = Workspace(demo, create=True)
    bank.add_bank(dws, synthetic.generate(args.demo_tokens, 0), fmt="demo", path="bench", sha256="bench")
    t0 = time.perf_counter()
    dl = domains.label(Workspace(demo))
    t_demo = time.perf_counter() - t0
    a, qa = dl.document_agreement, dl.query_agreement
    print(f"\n### Demo bank ({args.demo_tokens:,} tokens, {a['n']:,} documents, true domains known)\n")
    print(f"zero-shot labeling {t_demo:.1f} s. Documents: accuracy {a['accuracy']:.3f}, Cohen's kappa "
          f"{a['kappa']:.3f} (n={a['n']:,}); queries (gold majority): accuracy {qa['accuracy']:.3f}, kappa "
          f"{qa['kappa']:.3f} (n={qa['n']:,}).\n")
    print("Confusion (rows: true domain, columns: zero-shot label):\n")
    print(md(a["confusion"].reset_index()))


if __name__ == "__main__":
    main()
