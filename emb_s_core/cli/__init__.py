"""The ``emb-s`` command. Each command group is one module here with ``register(subparsers)``.

Add a group by writing its module and naming it in ``GROUPS``; modules import heavy libraries inside their
handlers, so ``emb-s --help`` stays fast. Errors a user can cause print one line and exit with status 2.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from emb_s_core.errors import EmbSError

GROUPS = ["bank", "ladder", "demo", "embed", "eval", "runs", "report", "use", "figure", "collide", "domains",
          "leaderboard", "notes", "cases", "explain"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="emb-s",
        description="EMB-S Diagnostics: evidence access under semantic interference (EverMemBench-S).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in GROUPS:
        importlib.import_module(f"emb_s_core.cli.{group}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from emb_s_core.store import writer_settings

    try:
        with writer_settings(wait=not getattr(args, "no_wait", False)):
            result = args.func(args)
    except EmbSError as exc:
        print(f"emb-s: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head/less that closed early
        return 0
    except Exception as exc:  # a full disk outside a transaction (e.g. SQLite's LLM cache): one line too
        from emb_s_core.store import disk_full_error, is_disk_full

        if not is_disk_full(exc) or not getattr(args, "workspace", None):
            raise
        print(f"emb-s: error: {disk_full_error(args.workspace)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("emb-s: interrupted; finished work is kept and the next run resumes.", file=sys.stderr)
        return 130
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
