"""``emb-s collide``: label each query's nearest non-reference documents with an LLM; ``--apply`` edits the bank."""
from __future__ import annotations

import argparse
import sys

from emb_s_core.cli.common import add_workspace, print_table


def register(sub: argparse._SubParsersAction) -> None:
    h = sub.add_parser("history", help="the workspace's committed versions: which tables each one changed, and the "
                                       "bank edits (collide/domains --apply); old versions stay readable")
    add_workspace(h)
    h.add_argument("--version", type=int, default=None, metavar="N",
                   help="print the bank summary of version N (read-only view)")
    h.add_argument("--restore", type=int, default=None, metavar="N",
                   help="make a new version with the content of version N (the way back from a damaged table; "
                        "later versions stay in the history)")
    h.set_defaults(func=cmd_history)

    from emb_s_core.cli.common import add_model_options

    p = sub.add_parser("collide", help="collision testing: an LLM labels each query's nearest non-reference "
                                       "documents Conflict / Hard Negative / False Negative")
    add_workspace(p, writes=True)
    p.add_argument("--embedder", default="dense:minilm-l6", metavar="SPEC",
                   help="dense retriever spec whose cached vectors find the candidates (default dense:minilm-l6)")
    add_model_options(p)
    p.add_argument("--k", "-k", type=int, default=10, help="candidates per query (default 10)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N queries (by qid)")
    p.add_argument("--prompt-version", type=int, default=1, help="prompt file collide_v<N>.txt (default 1)")
    p.add_argument("--apply", action="store_true",
                   help="write the verdicts into the bank as a new workspace version (the ladder must be rebuilt)")
    p.add_argument("--show", type=int, default=10, metavar="N", help="print the first N verdicts (default 10)")
    p.set_defaults(func=cmd_collide, default_max_tokens=96)


def cmd_collide(args: argparse.Namespace) -> int:
    from emb_s_core import collide
    from emb_s_core.cli.common import gateway_from_args, print_progress
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    gw = gateway_from_args(args, ws, args.model)
    if args.estimate:
        from emb_s_core.cli.common import print_estimate

        est = collide.estimate(ws, gw, args.embedder, args.k, args.limit, prompt_version=args.prompt_version)
        print_estimate(est)
        print(f"({est['already_done']:,} candidates already have a stored verdict and are not counted)")
        return 0
    report = collide.run(ws, gw, args.embedder, args.k, args.limit, prompt_version=args.prompt_version,
                         progress=print_progress)
    print(f"\ncollision test: {report.queries:,} queries, {report.candidates:,} candidates "
          f"(embedder {report.embedder}, model {report.model}, prompt {report.prompt_version}); "
          f"labeled now {report.labeled_now:,}, already stored {report.already_done:,}")
    print_table([{"verdict": k, "candidates": v} for k, v in report.counts.items()])
    shown = collide.verdicts(ws, model=report.model, prompt_version=report.prompt_version).head(args.show)
    if len(shown):
        print()
        print_table(shown[["qid", "rank", "doc_id", "similarity", "label", "status", "rationale"]]
                    .assign(similarity=shown["similarity"].astype(float),
                            rationale=shown["rationale"].fillna("").str.slice(0, 70)).to_dict("records"))
    if args.apply:
        applied = collide.apply(Workspace(args.workspace), model=report.model, prompt_version=report.prompt_version)
        print()
        if applied.changed:
            print(f"applied as workspace version {applied.version_after}: {applied.hard_negatives_added} hard "
                  f"negatives added, {applied.false_negatives_added} false negatives added to RefLists, "
                  f"{len(applied.retired)} queries retired (Conflict)")
        for message in applied.messages:
            print(message)
    elif report.counts.get("Conflict") or report.counts.get("Hard Negative") or report.counts.get("False Negative"):
        print("\nnothing changed in the bank; pass --apply to write these verdicts as a new workspace version",
              file=sys.stderr)
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    from emb_s_core.store import Workspace

    if args.restore is not None:
        ws = Workspace(args.workspace)
        new = ws.restore(args.restore)
        print(f"restored version {args.restore} of {ws.path} as version {new}", file=sys.stderr)
        return 0
    if args.version is not None:
        from emb_s_core.bank import info

        summary = info(Workspace(args.workspace, version=args.version))
        print(f"version {args.version} (read-only): {summary['documents']:,} documents, {summary['queries']:,} "
              f"queries, {summary['tokens']:,} tokens")
        print_table([{"domain": d, "tokens": t, "queries": summary["queries_per_domain"].get(d, 0)}
                     for d, t in summary["tokens_per_domain"].items()])
        return 0
    rows, previous, edits_seen = [], {}, 0
    for entry in Workspace(args.workspace).history():
        tables = entry.get("tables", {})
        changed = sorted(t for t, tv in tables.items() if previous.get(t) != tv)
        edits = entry.get("settings", {}).get("bank_edits", [])
        note = ""
        if len(edits) > edits_seen:
            e = edits[-1]
            note = (f"{e['kind']} --apply " + (f"({e.get('model')})" if e["kind"] == "collide" else
                                                f"({e.get('method')})"))
        edits_seen = len(edits)
        rows.append({"version": int(entry["version"]), "tables changed": ", ".join(changed), "bank edit": note})
        previous = tables
    print_table(rows)
    return 0
