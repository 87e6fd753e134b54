"""Evidence use: ``emb-s localize``, ``emb-s qa``, ``emb-s judge``, ``emb-s diagnose``.

Every LLM command prints its cost estimate before it starts (``--estimate`` prints it and stops), runs through the
one gateway (cache in the workspace, retries, window check) and resumes when run again. localize, qa and judge
exit 1 when model calls failed and none succeeded (the error counts by kind are printed), 2 on a user error.
"""
from __future__ import annotations

import argparse
import sys

from emb_s_core.cli.common import (add_model_options, add_workspace, gateway_from_args, print_estimate,
                                   print_json, print_progress, print_table)


def _add_scope(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rungs", default=None, help="comma-separated rung names (default: all)")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="N queries per rung, in one seeded order shared by localize/qa/judge (default: all)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("localize", help="long-context localization: the model names the relevant DocIDs of a rung")
    add_workspace(p, writes=True)
    add_model_options(p)
    _add_scope(p)
    p.add_argument("-k", type=int, default=10, help="ids asked for and kept (default 10)")
    p.add_argument("--name", default=None, help="run name (default localize:MODEL@K)")
    p.add_argument("--id-rule", choices=("docid_v4", "raw_integers_v1"), default="docid_v4",
                   help="how replies are read: docid_v4 (DocID mentions / JSON list first, numbering and counts "
                        "skipped, ids not shown dropped; default) or raw_integers_v1 (the paper's: every integer)")
    p.set_defaults(func=cmd_localize, default_max_tokens=64)

    p = sub.add_parser("qa", help="generative QA: GLOBAL (whole rung) or retrieve-then-generate (top-K of a run)")
    add_workspace(p, writes=True)
    add_model_options(p)
    _add_scope(p)
    p.add_argument("--setting", choices=("rag", "global"), default="rag")
    p.add_argument("--context-run", default=None, help="run whose top-K documents are the context (rag)")
    p.add_argument("-k", type=int, default=5, help="documents of the context run shown (default 5)")
    p.add_argument("--name", default=None, help="QA run name (default qa:MODEL:SETTING...)")
    p.add_argument("--list", action="store_true", help="list the QA runs and stop")
    p.set_defaults(func=cmd_qa, default_max_tokens=32)

    p = sub.add_parser("judge", help="score QA answers 0-5 (reference match or the learned judge offline, or an LLM judge)")
    add_workspace(p, writes=True)
    p.add_argument("--qa-run", required=True)
    add_model_options(p, default="reference", flag="--judge")
    _add_scope(p)
    p.add_argument("--repeats", type=int, default=1, help="judge each answer N times (LLM judge)")
    p.add_argument("--agreement", default=None, metavar="JUDGE",
                   help="also print agreement with this judge (e.g. reference or llm:MODEL)")
    p.set_defaults(func=cmd_judge, default_max_tokens=16)  # "Score: N" first, then a short reason (judge_v2)

    p = sub.add_parser("diagnose", help="access vs use: quadrant shares per rung (and other breakdowns)")
    add_workspace(p)
    p.add_argument("--access-run", required=True, help="retrieval or localization run")
    p.add_argument("--qa-run", required=True)
    p.add_argument("--judge", default="reference", help="judge name (reference, learned or llm:MODEL)")
    p.add_argument("-k", type=int, default=10, help="K of SR@K for access (default 10)")
    p.add_argument("--access-threshold", type=float, default=1.0, help="accessed iff SR@K >= this (default 1.0)")
    p.add_argument("--score-threshold", type=float, default=4, help="answered well iff score >= this (default 4)")
    p.add_argument("--by", default="rung", help="comma-separated breakdown (rung, domain, task_type, source, "
                                               "multi_source)")
    p.add_argument("--rungs", default=None)
    p.add_argument("--cases", default=None, metavar="QUADRANT",
                   help="list the queries of one quadrant (use_failure, access_failure, ...), or 'excluded': the "
                        "cells in no quadrant, with the reason")
    p.add_argument("--figure", default=None, metavar="FILE.html", help="write the quadrant-share figure; the suffix picks the format (.html .png .svg .pdf)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_diagnose)


def _say_empty_rungs(ws, rungs: list[str] | None) -> None:
    """A rung without queries gets no cell: say so instead of skipping it silently."""
    from emb_s_core import ladder, protocol

    empty = protocol.rungs_without_queries(protocol.select_rungs(ladder.load(ws), rungs))
    if empty:
        print(f"note: {len(empty)} rung(s) hold no queries and get no cells: {', '.join(empty)}", file=sys.stderr)


def _usage(gw) -> int:
    """Print the gateway's totals; the exit status: 1 when calls failed and none succeeded, else 0."""
    u = gw.usage
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(u.error_kinds.items(), key=lambda kv: (-kv[1], kv[0])))
    print(f"calls: {u.calls} sent ({u.retries} retries), {u.cache_hits} from cache, {u.does_not_fit} did not fit, "
          f"{u.errors} errors{f' ({kinds})' if kinds else ''}; tokens {u.prompt_tokens:,} in / "
          f"{u.completion_tokens:,} out; cost ${u.cost:.4f}")
    if u.errors and not u.ok:
        print(f"emb-s: error: nothing succeeded: all {u.errors} model calls failed ({kinds}); the cells are stored "
              "as error and retried on the next run", file=sys.stderr)
        return 1
    return 0


def cmd_localize(args: argparse.Namespace) -> int:
    from emb_s_core import localize
    from emb_s_core.protocol import parse_list
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    gw = gateway_from_args(args, ws, args.model)
    rungs = parse_list(args.rungs)
    print_estimate(localize.estimate(ws, gw, args.k, rungs, args.limit, args.name))
    _say_empty_rungs(ws, rungs)
    if args.estimate:
        return 0
    name = localize.localize(ws, gw, args.k, args.name, rungs, args.limit, progress=print_progress,
                             id_rule=args.id_rule)
    status = _usage(gw)
    print(f"run: {name}")
    print_table(localize.audit_summary(ws, name).to_dict("records"))
    return status


def cmd_qa(args: argparse.Namespace) -> int:
    from emb_s_core import qa
    from emb_s_core.protocol import parse_list
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    if args.list:
        print_table(qa.list_qa_runs(ws).drop(columns=["config"]).to_dict("records"))
        return 0
    gw = gateway_from_args(args, ws, args.model)
    rungs = parse_list(args.rungs)
    print_estimate(qa.estimate(ws, gw, args.setting, args.context_run, args.k, rungs, args.limit, args.name))
    _say_empty_rungs(ws, rungs)
    if args.estimate:
        return 0
    name = qa.answer(ws, gw, args.setting, args.context_run, args.k, args.name, rungs, args.limit,
                     progress=print_progress)
    status = _usage(gw)
    print(f"QA run: {name}")
    answers = qa.load_answers(ws, [name])
    counts = answers.groupby(["rung", "status"], sort=False).size().unstack(fill_value=0).reset_index()
    print_table(counts.to_dict("records"))
    return status


def cmd_judge(args: argparse.Namespace) -> int:
    from emb_s_core import judge, protocol
    from emb_s_core.protocol import parse_list
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    rungs = parse_list(args.rungs)
    gw = None
    if args.judge not in judge.OFFLINE:
        gw = gateway_from_args(args, ws, args.judge)
        todo = judge.pending(ws, args.qa_run, args.judge, args.repeats, rungs, args.limit)
        prompt = protocol.load_prompt("judge")
        batch = [judge.judge_messages(prompt, q, t, a) for q, t, a in
                 zip(todo["question"], todo["true_answer"], todo["answer"])]
        from emb_s_core.llm import structured

        asking, _ = structured.asking(gw, structured.JUDGE)  # the calls the run will make (and their cache)
        print_estimate(asking.estimate(batch, salts=[int(r) or None for r in todo["repeat"]]))
    elif args.estimate:
        print(f"estimate: the {args.judge} judge makes no model call (cost $0)")
    if args.estimate:
        return 0
    name = judge.judge(ws, args.qa_run, args.judge, gw, args.repeats, rungs, args.limit, progress=print_progress)
    status = _usage(gw) if gw is not None else 0
    print(f"judge: {name}")
    print_table(judge.summary(ws, args.qa_run).query("judge == @name").to_dict("records"))
    if args.repeats > 1:
        print_json(judge.agreement(ws, args.qa_run, name))
    if args.agreement:
        print_json(judge.agreement(ws, args.qa_run, name, args.agreement))
    return status


def cmd_diagnose(args: argparse.Namespace) -> int:
    from emb_s_core import diagnose
    from emb_s_core.protocol import parse_list
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    df = diagnose.quadrants(ws, args.access_run, args.qa_run, args.judge, k=args.k,
                            access_threshold=args.access_threshold, score_threshold=args.score_threshold,
                            rungs=parse_list(args.rungs))
    from emb_s_core.analysis import run_state

    for line in [*diagnose.bank_notes(ws, args.access_run, args.qa_run),
                 *run_state.run_notes(run_state.for_workspace(ws), [args.access_run])]:
        print(f"note: {line}", file=sys.stderr)
    from emb_s_core.analysis import access_use

    for line in access_use.plumbing_checks(ws, args.access_run, args.qa_run, args.judge):
        print(f"warning: {line}", file=sys.stderr)
    by = parse_list(args.by) or ["rung"]
    summ = diagnose.summary(df, by)
    if args.figure:
        from pathlib import Path

        from emb_s_core import export
        from emb_s_core.analysis import access_use

        fig = access_use.figure(df, summ, bank=Path(ws.path).name, access_run=args.access_run, qa_run=args.qa_run,
                                judge=args.judge, k=args.k, access_threshold=args.access_threshold,
                                score_threshold=args.score_threshold, by=by[0])
        for path in export.figures_to_files([(fig, args.figure)]):
            print(f"figure: {path}", file=sys.stderr)
    if args.cases:
        rows = diagnose.cases(df, args.cases)
        cols = ["rung", "qid", "sr", "score", "answer", "domain", "task_type"]
        if args.cases == diagnose.EXCLUDED:
            cols = ["rung", "qid", "reason", "access_status", "sr", "score", "domain", "task_type"]
        if args.json:
            print_json(rows[cols].to_dict("records"))
        else:
            print_table(rows[cols].to_dict("records"))
        return 0
    agreement = diagnose.agreement_lines(ws, args.judge, args.score_threshold)
    if args.json:
        print_json(summ.to_dict("records"))
        for line in agreement:  # beside the scores, without changing the JSON's shape
            print(f"agreement: {line}", file=sys.stderr)
        return 0
    from emb_s_core.analysis import access_use

    print_table(access_use.wide(summ, by).to_dict("records"))
    for line in agreement:
        print(f"agreement: {line}")
    return 0
