"""``emb-s domains label``: zero-shot (offline embedder) or LLM domain labels; ``--apply`` edits the bank."""
from __future__ import annotations

import argparse

from emb_s_core.cli.common import add_workspace, print_json, print_table


def register(sub: argparse._SubParsersAction) -> None:
    from emb_s_core.cli.common import add_model_options

    p = sub.add_parser("domains", help="label documents (and so queries) with at most 8 broad domains")
    dsub = p.add_subparsers(dest="domains_command", metavar="ACTION", required=True)
    lab = dsub.add_parser("label", help="zero-shot by an offline embedder (default) or by an LLM (--model)")
    add_workspace(lab, writes=True)
    lab.add_argument("--embedder", default="dense:minilm-l6", metavar="SPEC",
                     help="dense retriever spec for zero-shot labeling (default dense:minilm-l6)")
    add_model_options(lab, default=None)
    lab.add_argument("--domains", default=None, help="comma-separated subset of the domains (default: all eight, "
                                                     "or all in --descriptions)")
    lab.add_argument("--descriptions", default=None, metavar="FILE.json",
                     help='JSON object {"domain": "one-sentence description", ...} (at most 8)')
    lab.add_argument("--apply", action="store_true", help="write the new domains as a new workspace version")
    lab.add_argument("--json", action="store_true", help="machine-readable summary")
    lab.set_defaults(func=cmd_label, default_max_tokens=16)


def summary(labeling) -> dict:
    """JSON-able summary: distribution, agreement (accuracy, κ, confusion) and messages."""
    def agree(a):
        if a is None:
            return None
        return {"n": a["n"], "accuracy": a["accuracy"], "kappa": a["kappa"],
                "confusion": {str(k): {str(c): int(v) for c, v in row.items()}
                              for k, row in a["confusion"].iterrows()}}

    return {"method": labeling.method, "domains": list(labeling.domains), "confidence": labeling.confidence(),
            "distribution": labeling.distribution().to_dict("records"),
            "documents_unlabeled": labeling.unlabeled,
            "document_agreement": agree(labeling.document_agreement),
            "query_agreement": agree(labeling.query_agreement), "messages": labeling.messages}


def _print_confidence(labeling) -> None:
    import sys

    conf = labeling.confidence()
    if conf is None:
        return
    print(f"label confidence (best minus second domain similarity, {conf['n']:,} documents): p10 {conf['p10']:.3f}"
          f"  p25 {conf['p25']:.3f}  median {conf['median']:.3f}  p75 {conf['p75']:.3f}  p90 {conf['p90']:.3f}; "
          f"{conf['share_close']:.1%} within {conf['close_margin']} of their second domain")
    for message in labeling.messages:
        if message.startswith("warning:"):
            print(message, file=sys.stderr)


def cmd_label(args: argparse.Namespace) -> int:
    from emb_s_core import domains
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    descriptions = domains.load_descriptions(args.descriptions) if args.descriptions else None
    chosen = [d.strip() for d in args.domains.split(",") if d.strip()] if args.domains else None
    descriptions = domains.resolve(chosen, descriptions)
    gateway = None
    if args.model:
        from emb_s_core.cli.common import gateway_from_args

        gateway = gateway_from_args(args, ws, args.model)
        if args.estimate:
            from emb_s_core.cli.common import print_estimate

            print_estimate(domains.estimate(ws, gateway, descriptions))
            return 0
    from emb_s_core.cli.use import print_progress

    labeling = domains.label(ws, descriptions, args.embedder, gateway, progress=print_progress)
    out = summary(labeling)
    if not args.json:  # what the labels are worth, before anything is applied
        _print_confidence(labeling)
    report = domains.apply(Workspace(args.workspace), labeling) if args.apply else None
    if args.json:
        if report is not None:
            out["applied"] = {"version_before": report.version_before, "version_after": report.version_after,
                              "documents_changed": report.documents_changed,
                              "queries_changed": report.queries_changed, "messages": report.messages}
        print_json(out)
        return 0
    print(f"domain labels by {labeling.method}")
    print_table(out["distribution"])
    for name, a in (("documents", labeling.document_agreement), ("queries", labeling.query_agreement)):
        if a is not None:
            print(f"\nagreement with the existing {name} labels: n={a['n']:,}  accuracy={a['accuracy']:.3f}  "
                  f"Cohen's kappa={a['kappa']:.3f}  (rows: existing, columns: new)")
            print(a["confusion"].to_string())
    for message in labeling.messages:
        print(f"note: {message}")
    if report is None:
        print("\nnothing changed in the bank; pass --apply to write these domains as a new workspace version")
    elif report.version_after == report.version_before:
        print(f"\n{report.messages[0]}")
    else:
        print(f"\napplied as workspace version {report.version_after}: {report.documents_changed:,} documents and "
              f"{report.queries_changed:,} queries changed domain")
        for message in report.messages:
            print(message)
    return 0
