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


#: which group registers each command, so a command builds only its own group's parsers (argparse's per-parser
#: set-up, gettext lookups included, was a tenth of a short command's time beyond the bare imports). A command not
#: named here (a new one) still works: the whole parser is built. tests/unit/test_cli_startup.py checks the table.
OWNER = {"import": "bank", "info": "bank", "ladder": "ladder", "demo": "demo", "embed": "embed", "eval": "eval",
         "runs": "runs", "report": "report", "compare": "report", "localize": "use", "qa": "use", "judge": "use",
         "diagnose": "use", "figure": "figure", "history": "collide", "collide": "collide", "domains": "domains",
         "leaderboard": "leaderboard", "notes": "notes", "cases": "cases", "explain": "explain"}


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The ``emb-s`` parser; given ``argv``, only the group of the command it names (all groups for ``--help``,
    no command, or a name not in :data:`OWNER`)."""
    parser = argparse.ArgumentParser(
        prog="emb-s",
        description="EMB-S Diagnostics: evidence access under semantic interference (EverMemBench-S).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    first = next((a for a in (argv or []) if not a.startswith("-")), None)
    only = OWNER.get(first) if first is not None and not (argv or [""])[0].startswith("-") else None
    for group in [only] if only else GROUPS:
        importlib.import_module(f"emb_s_core.cli.{group}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(argv).parse_args(argv)
    from emb_s_core.store import writer_settings

    try:
        with writer_settings(wait=not getattr(args, "no_wait", False)):
            result = args.func(args)
    except EmbSError as exc:
        from emb_s_core.llm.secrets import redact  # the last net: no secret-shaped string in any error line

        print(f"emb-s: error: {redact(exc)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head/less that closed early
        return 0
    except Exception as exc:  # a full disk, a damaged or unwritable table or cache: one line too
        from emb_s_core.store import disk_full_error, is_disk_full

        workspace = getattr(args, "workspace", None)
        if not workspace:
            raise
        if is_disk_full(exc):
            print(f"emb-s: error: {disk_full_error(workspace)}", file=sys.stderr)
            return 2
        from emb_s_core.damage import explain
        from emb_s_core.llm.secrets import redact

        damage = explain(workspace, exc)
        if damage is None:
            raise
        print(f"emb-s: error: {redact(damage)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("emb-s: interrupted; finished work is kept and the next run resumes.", file=sys.stderr)
        return 130
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
