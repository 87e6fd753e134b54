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
                         progress=True)
    ws = Workspace(args.workspace)
    if report.already_imported:
        print(f"{args.path} is already in the workspace as source {report.source!r}; nothing changed.")
        return 0
    print(f"imported {report.n_documents:,} documents and {report.n_queries:,} queries as source {report.source!r}"
          f" into {ws.path} (version {ws.version})")
    for reason, n in report.skipped.items():
        print(f"  skipped {n:,}: {reason}")
    for note in report.notes[:10]:
        print(f"  note: {note}")
    if len(report.notes) > 10:
        print(f"  ... and {len(report.notes) - 10} more notes")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from emb_s_core.bank import info
    from emb_s_core.store import Workspace

    summary = info(Workspace(args.workspace))
    if args.json:
        print_json(summary)
        return 0
    print(f"workspace {summary['workspace']} (version {summary['version']}, tokens: {summary['encoding']})")
    print(f"documents {summary['documents']:,}  tokens {summary['tokens']:,}  queries {summary['queries']:,} "
          f"(single-source {summary['single_source_queries']:,}, multi-source {summary['multi_source_queries']:,})")
    print()
    print_table([{"source": s, "documents": summary["documents_per_source"].get(s, 0),
                  "tokens": t, "queries": summary["queries_per_source"].get(s, 0)}
                 for s, t in summary["tokens_per_source"].items()])
    print()
    print_table([{"domain": d, "tokens": t, "queries": summary["queries_per_domain"].get(d, 0)}
                 for d, t in summary["tokens_per_domain"].items()])
    return 0
