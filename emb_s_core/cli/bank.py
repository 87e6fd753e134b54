"""``emb-s import`` and ``emb-s info``."""
from __future__ import annotations

import argparse

from emb_s_core.cli.common import add_workspace, print_json, print_table


def register(sub: argparse._SubParsersAction) -> None:
    from emb_s_core.sources import FORMATS

    p = sub.add_parser("import", help="import a bank (documents + queries) into a workspace")
    p.add_argument("path", help="file or folder to import")
    p.add_argument("--format", "-f", required=True, choices=sorted(FORMATS), dest="fmt")
    p.add_argument("--source", help="name recorded as the documents' source (default: the format)")
    p.add_argument("--domain", help="domain set on every imported document and query that has none")
    p.add_argument("--split", default=None,
                   help="emb-s-release: which qar/<split>.jsonl to read (test by default, train_sft, all)")
    add_workspace(p, writes=True)
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("info", help="summary of a workspace's bank")
    add_workspace(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_info)


def cmd_import(args: argparse.Namespace) -> int:
    from emb_s_core.bank import import_path
    from emb_s_core.store import Workspace

    report = import_path(args.workspace, args.fmt, args.path, source=args.source, domain=args.domain,
                         progress=True, split=args.split)
    ws = Workspace(args.workspace)
    if report.already_imported:
        print(f"{args.path} is already in the workspace as source {report.source!r}; nothing changed.")
        return 0
    print(f"imported {report.n_documents:,} documents and {report.n_queries:,} queries as source {report.source!r}"
          f" into {ws.path} (version {ws.version})")
    _print_details(report.details)
    for reason, n in report.skipped.items():
        print(f"  skipped {n:,}: {reason}")
    for note in report.notes[:10]:
        print(f"  note: {note}")
    if len(report.notes) > 10:
        print(f"  ... and {len(report.notes) - 10} more notes")
    return 0


def _print_details(details: dict) -> None:
    """The release summary: scales and their sizes, where queries came from, references matched."""
    if "scales" in details:
        scales = ", ".join(f"{s['scale']} ({s['documents']:,} documents)" for s in details["scales"])
        print(f"  scales: {scales}")
    if "queries_from" in details:
        print(f"  queries from {details['queries_from']}; qar splits found: "
              f"{', '.join(details.get('splits_found') or []) or 'none'}")
    if "matched_references" in details:
        print(f"  references matched {details['matched_references']:,}, unmatched "
              f"{details['unmatched_references']:,}; record keys: {', '.join(details.get('keys_found', {}))}")


def cmd_info(args: argparse.Namespace) -> int:
    from emb_s_core import ladder
    from emb_s_core.analysis.bank_summary import SERIALIZED_TOKENS, TEXT_TOKENS, TOKENS_NOTE, serialized_total
    from emb_s_core.bank import info
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    summary = info(ws)
    if args.json:
        print_json(summary)
        return 0
    serialized = serialized_total(summary, ladder.load_all(ws, allow_stale=True))
    print(f"workspace {summary['workspace']} (version {summary['version']}, tokens: {summary['encoding']})")
    print(f"documents {summary['documents']:,}  {TEXT_TOKENS} {summary['tokens']:,}"
          + (f"  {SERIALIZED_TOKENS} {serialized:,} (the full rung)" if serialized is not None else "")
          + f"  queries {summary['queries']:,} (single-source {summary['single_source_queries']:,}, "
          f"multi-source {summary['multi_source_queries']:,})")
    print(f"({TOKENS_NOTE})")
    print()
    print_table([{"source": s, "documents": summary["documents_per_source"].get(s, 0),
                  TEXT_TOKENS: t, "queries": summary["queries_per_source"].get(s, 0)}
                 for s, t in summary["tokens_per_source"].items()])
    print()
    print_table([{"domain": d, TEXT_TOKENS: t, "queries": summary["queries_per_domain"].get(d, 0)}
                 for d, t in summary["tokens_per_domain"].items()])
    for source in summary["sources"]:
        if source.get("details"):
            print(f"\nsource {source['source']!r} ({source['format']}):")
            _print_details(source["details"])
    return 0
