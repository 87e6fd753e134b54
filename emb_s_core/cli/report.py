"""``emb-s report`` (the score table, exported) and ``emb-s compare`` (paired test of two runs per rung)."""
from __future__ import annotations

import argparse
import sys

from emb_s_core.cli.common import add_workspace, print_table


def register(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("report", help="metrics of every run on every rung, with n and 95%% intervals (Wilson score "
                       "for binary cells: R@1, FR@K, HN-intrusion, SR@K when every gold set has one document; else "
                       "bootstrap; column ci_method)")
    add_workspace(r)
    r.add_argument("--format", choices=["table", "csv", "json", "markdown", "latex"], default=None,
                   help="output format (default: from --out's suffix, else an aligned text table)")
    r.add_argument("--metrics", default=None,
                   help="comma-separated, e.g. R@1,SR@10,FR@10,MRR,nDCG@10,HN-intrusion; SR@K = every K (default all)")
    r.add_argument("--by", default="",
                   help="breakdown columns, comma-separated: domain,task_type,source,multi_source,tag")
    r.add_argument("--runs", default=None, help="comma-separated run names (default: every run)")
    r.add_argument("--hn-provenance", default=None, metavar="LIST",
                   help="count only these hard negatives in HN-intrusion: comma-separated dataset, collision, "
                        "synthetic (default: all)")
    r.add_argument("--n-boot", type=int, default=1000,
                   help="bootstrap replicates for the intervals of non-binary cells (binary cells get the Wilson "
                        "score interval; 0: no intervals)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--out", default=None, metavar="FILE", help="write to FILE (.csv .json .md .tex) instead of stdout")
    r.add_argument("--paper-table", action="store_true",
                   help="the paper's Table 3: one row per run (reranking under its base), R@1/SR@10/FR@10 per scale, "
                        "n per cell (markdown, csv or latex)")
    r.add_argument("--scales", "--rungs", dest="rungs", default=None, metavar="SCALES",
                   help="--paper-table: comma-separated scales (default: every scale of the ladder, e.g. a release's "
                        "published scales or the built ladder's rungs; domain rungs pooled)")
    r.add_argument("--ladder", choices=["built", "official", "benign"], default=None,
                   help="--paper-table: which ladder's rungs (default: built when results cover it, else official)")
    r.add_argument("--wide", action="store_true", help="one row per run (and metric), one column per rung: values only")
    r.add_argument("--keep-undefined", action="store_true",
                   help="also list metrics no query of a cell defines (e.g. R@1 without single-source queries)")
    r.add_argument("--illusion", action="store_true",
                   help="print the illusion gap (benign twin − adversarial ladder: SR@10, FR@10, R@1 with paired "
                        "interval and p) and the effective scale per run and domain instead of the score table")
    r.add_argument("--fraction", type=float, default=0.85,
                   help="--illusion: effective scale keeps SR@10 >= FRACTION x its base value (default 0.85)")
    r.set_defaults(func=cmd_report)
    c = sub.add_parser("compare", help="paired test of two runs on every rung both have")
    add_workspace(c)
    c.add_argument("run_a", metavar="RUN_A")
    c.add_argument("run_b", metavar="RUN_B")
    c.add_argument("--metric", default="SR@10", help="one metric (default SR@10)")
    c.add_argument("--rungs", default=None, help="comma-separated rung (or with --columns scale, scale) names "
                                                 "(default: every one both runs have)")
    c.add_argument("--columns", choices=["rung", "scale"], default="rung",
                   help="rung: every rung (default); scale: domain rungs of one size pooled, as the Overview and "
                        "the Compare page do")
    c.add_argument("--no-twin", action="store_true", help="leave the benign twin's rungs out")
    c.add_argument("--n-resamples", type=int, default=10000)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--format", choices=["table", "csv", "json", "markdown", "latex"], default="table")
    c.set_defaults(func=cmd_compare)


def _split(value: str | None) -> list[str] | None:
    return None if value is None else [v.strip() for v in value.split(",") if v.strip()]


def _open(path: str):
    from emb_s_core.store import Workspace

    return Workspace(path)  # raises EmbSError naming the folder when it is no workspace


def _emit(df, fmt: str | None, out: str | None) -> None:
    from emb_s_core import export

    if out is not None:
        path = export.write_table(df, out, None if fmt in (None, "table") else fmt)
        print(f"wrote {len(df)} rows to {path}", file=sys.stderr)
    elif fmt in (None, "table"):
        print_table(df.to_dict("records"))
    else:
        sys.stdout.write(export.table_to(df, fmt))


def cmd_paper_table(args: argparse.Namespace) -> int:
    from pathlib import Path

    from emb_s_core.analysis import paper_table
    from emb_s_core.errors import EmbSError

    fmt = args.format
    if fmt in (None, "table") and args.out:
        fmt = {".csv": "csv", ".md": "markdown", ".tex": "latex"}.get(Path(args.out).suffix.lower(), "markdown")
    fmt = "markdown" if fmt in (None, "table") else fmt
    if fmt not in paper_table.FORMATS:
        raise EmbSError(f"the paper table is written as markdown, csv or latex, not {fmt}",
                        fix="pass --format markdown, csv or latex.")
    table = paper_table.build(_open(args.workspace), _split(args.rungs),
                              runs=_split(args.runs), kind=args.ladder)
    text = paper_table.render(table, fmt)
    if args.out:
        path = Path(args.out)
        if not path.parent.is_dir():
            raise EmbSError("the output folder does not exist", where=str(path.parent), fix="create it first.")
        path.write_text(text, encoding="utf-8")
        print(f"wrote the paper table ({len(table.rows)} runs) to {path}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from emb_s_core.analysis import report

    if args.paper_table:
        return cmd_paper_table(args)
    ws = _open(args.workspace)
    if args.illusion:
        return _illusion(ws, args)
    every = report.rows(ws, runs=_split(args.runs), metric_names=_split(args.metrics), by=_split(args.by) or [],
                        n_boot=0 if args.wide else args.n_boot, seed=args.seed, keep_undefined=True,
                        hn_provenance=_split(args.hn_provenance))
    df = every if args.keep_undefined else report.drop_undefined(every)
    if args.wide:
        df = report.wide(df, list(dict.fromkeys(df["rung"])))
    _emit(df, args.format, args.out)
    _approximate_notes(ws, list(dict.fromkeys(df["run"])) if "run" in df else [],
                       sys.stdout if args.format in (None, "table") and args.out is None else sys.stderr)
    for line in report.left_out_metrics(df, every) + report.bank_notes(ws, _split(args.runs)):
        print(f"note: {line}", file=sys.stderr)
    shown = list(dict.fromkeys(every["run"])) if "run" in every else []
    for line in report.incomplete_notes(ws, shown):  # beside the table when it is printed, else on stderr
        print(f"note: {line}", file=sys.stdout if args.format in (None, "table") and args.out is None else sys.stderr)
    return 0


def _approximate_notes(ws, run_names: list[str], stream) -> None:
    """A run scored approximately says so, with its measured recall, wherever its scores are printed; a run whose
    model took query/document prompts names them (they are part of the model it measured)."""
    from emb_s_core import runs

    measured = runs.measurements(ws)
    for run in run_names:
        note = runs.approximate_summary(measured.get(run, {}))
        if note:
            print(f"note: run {run!r} is approximate — {note}", file=stream)
    for run in run_names:
        stored = runs.get_run(ws, run)
        prompts = runs.prompt_summary(stored["config"]) if stored else ""
        if prompts:
            print(f"note: run {run!r} prompts — {prompts}", file=stream)


def _illusion(ws, args: argparse.Namespace) -> int:
    """The illusion report: printed, or written to ``--out`` (its suffix or ``--format`` picks the format: json and
    markdown/latex hold the twin, gap and effective-scale tables with their notes; csv holds the gap table, whose
    rows carry the twin's references and short-rung marks)."""
    import json
    from pathlib import Path

    from emb_s_core import export, ladder
    from emb_s_core.analysis import illusion
    from emb_s_core.evaluate import stale_twin_runs

    gaps, eff, notes = illusion.report(ws, runs=_split(args.runs), fraction=args.fraction, by_domain=True,
                                       n_boot=args.n_boot or 1000, seed=args.seed)
    eff = eff.drop(columns=["values"])
    fill = illusion.twin_fill(ladder.load_all(ws, allow_stale=True))
    stale = illusion.stale_note(stale_twin_runs(ws))
    references = illusion.references_note(ws)
    if stale:
        print(f"note: {stale}", file=sys.stderr)
    fmt = args.format
    if args.out and fmt in (None, "table"):
        fmt = export.table_format(args.out)
    fmt = "table" if fmt is None else fmt
    headings = ("benign twin: pools, fill (smallest query's pool tokens ÷ the built rung's; mean) and each query's "
                "own near misses left in its pool (0 by construction)",
                "illusion gap = benign twin − adversarial ladder, same queries (paired bootstrap 95% interval, p)",
                f"effective scale: largest scale whose SR@10 stays >= {args.fraction} x its base value (domain rungs "
                "pooled; '≥ full' = never falls below)")
    if fmt == "json":
        refs = illusion.twin_references(ws)
        text = json.dumps({"gap": json.loads(export.table_to(gaps, "json")),
                           "effective_scale": json.loads(export.table_to(eff, "json")), "notes": notes,
                           "twin": json.loads(export.table_to(fill, "json")),
                           "references": {"retrievers": refs[0], "top_n": refs[1], "note": references}
                           if refs else None}, indent=2, ensure_ascii=False) + "\n"
    elif fmt == "csv":
        text = export.table_to(gaps, "csv")
        if not args.out:
            sys.stdout.write(text)
            return 0
    elif fmt in ("markdown", "latex"):
        def para(line: str) -> str:  # LaTeX: escaped to ASCII, its own paragraph, so the whole output compiles
            return export.latex_escape(line) + r"\par" if fmt == "latex" else line

        parts = [para(references) if references else ""]
        for heading, table, note in zip(headings, (fill, gaps.drop(columns=["test"]), eff),
                                        (None, " ".join(f"{n.rstrip('.')}." for n in notes) or None, None)):
            parts.append(f"{para(heading)}\n\n" + export.table_to(table, fmt, note=note))
        text = "\n".join(p for p in parts if p) + "\n"
    else:
        if references:
            print(references)
            print()
        for i, (heading, table) in enumerate(zip(headings, (fill, gaps.drop(columns=["test"]), eff))):
            print(heading)
            print_table(table.to_dict("records"))
            for note in notes if i == 1 else []:
                print(f"note: {note.rstrip('.')}.")
            if i < 2:
                print()
        return 0
    if not args.out:
        sys.stdout.write(text)
        return 0
    path = Path(args.out)
    if not path.parent.is_dir():
        from emb_s_core.errors import EmbSError

        raise EmbSError("the output folder does not exist", where=str(path.parent), fix="create it first.")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)  # never a half-written file
    what = "the gap table" if fmt == "csv" else "the twin, gap and effective-scale tables"
    print(f"wrote {what} ({len(gaps)} gap rows) to {path}", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from emb_s_core.analysis import report

    ws = _open(args.workspace)
    x = args.columns
    df = report.compare_by(ws, args.run_a, args.run_b, args.metric, _split(args.rungs), x=x, twin=not args.no_twin,
                           n_resamples=args.n_resamples, seed=args.seed)  # what the Compare page tests
    cols = [x, "metric", "n", "mean_a", "mean_b", "delta", "ci_low", "ci_high", "p_value", "wins", "losses",
            "ties"]
    _emit(df[cols], args.format, None)
    if args.format == "table":
        print(f"\ndelta = {args.run_a} − {args.run_b} over the queries both scored (n = 0: none, e.g. does not fit)")
        for test in dict.fromkeys(df["test"]):
            print(f"test: {test}")
    from emb_s_core.analysis import run_state

    pq = report.pooled(report.views.per_query(ws, [args.run_a, args.run_b]), x, not args.no_twin)
    note = report.compare_note(pq, args.run_a, args.run_b, df[x].tolist())  # what the Compare page says
    for line in [*([note] if note else []), *run_state.run_notes(run_state.for_workspace(ws), [args.run_a, args.run_b])]:
        print(f"note: {line}", file=sys.stdout if args.format == "table" else sys.stderr)
    return 0
