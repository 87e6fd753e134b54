"""Access-vs-use quadrants with the offline local model on the demo bank and on HotpotQA, through the CLI.

    nice -n 19 python3 bench/bench_use_quadrants.py [WORKDIR] [--banks demo,hotpotqa] [--limit 80]

Per bank: import, ladder, ``eval bm25`` on the ``full`` rung, retrieve-then-generate QA on bm25's top-3 with
``local/smollm2-135m`` (``--max-tokens 64``), reference-match judging, then ``diagnose --access-run bm25 -k 3
--access-threshold 1.0 --score-threshold 4``. The workdir keeps the workspaces, so a rerun re-judges the same
answers (QA is resumable and cached; ``--skip-qa`` only judges and diagnoses). Prints the quadrant counts under the
reference rule v2 and, on the same answers and access, under rule v1 (containment alone), with every answer whose
credit changed (bench/RESULTS.md, "Access vs use").
"""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from emb_s_core.cli import main as cli  # noqa: E402

DATA = Path(os.environ.get("EMB_S_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
HOTPOT = DATA / "hotpotqa-dev-distractor-500" / "dev_subsampled.jsonl"
QA_RUN = "qa:local/smollm2-135m:rag[bm25]@3"


def step(label: str, argv: list[str], quiet: bool = False) -> tuple[float, str]:
    start = time.perf_counter()
    out = io.StringIO()
    if quiet:
        with redirect_stdout(out):
            rc = cli(argv)
    else:
        rc = cli(argv)
    took = time.perf_counter() - start
    print(f"## {label}: rc={rc}, {took:.0f} s", flush=True)
    if rc:
        print(out.getvalue())
        raise SystemExit(rc)
    return took, out.getvalue()


def prepare(bank: str, w: str, limit: int) -> dict[str, float]:
    times: dict[str, float] = {}
    if not (Path(w) / "workspace.json").exists():
        if bank == "demo":
            times["demo"] = step("demo 256K", ["demo", "-w", w, "--tokens", "256K", "--retrievers", "bm25"])[0]
        else:
            step("import", ["import", "--format", "hotpotqa", str(HOTPOT), "-w", w])
            step("ladder", ["ladder", "build", "-w", w])
            step("eval bm25", ["eval", "-w", w, "-r", "bm25", "--rungs", "full"])
    qa = ["qa", "-w", w, "--context-run", "bm25", "-k", "3", "--rungs", "full", "--max-tokens", "64"]
    if bank != "demo":
        qa += ["--limit", str(limit)]
    times["qa"] = step("qa rag bm25@3", qa)[0]
    return times


def quadrants(w: str) -> list[dict]:
    step("judge reference", ["judge", "-w", w, "--qa-run", QA_RUN], quiet=True)
    _, out = step("diagnose", ["diagnose", "-w", w, "--access-run", "bm25", "--qa-run", QA_RUN, "-k", "3",
                               "--access-threshold", "1.0", "--score-threshold", "4", "--json"], quiet=True)
    return json.loads(out)


def rule_v1_counts(w: str) -> tuple[dict, list[dict]]:
    """The same answers and access, answered-well by the judge rule before issue 16 (containment alone): the
    quadrant counts (plus how many answers each rule credits and how many are exact matches), and the answers
    whose credit the rule change flipped."""
    from bench_judge import v1_score

    from emb_s_core import answer_match, bank, diagnose
    from emb_s_core.store import Workspace

    ws = Workspace(w)
    df = diagnose.quadrants(ws, "bm25", QA_RUN, k=3, access_threshold=1.0, score_threshold=4)
    qs = bank.queries(ws).set_index("qid")
    counts = {q: 0 for q in diagnose.QUADRANTS}
    counts["em"] = counts["v2_credited"] = counts["v1_credited"] = 0
    flipped = []
    for row in df.itertuples():
        if row.quadrant is None:
            continue
        q = qs.loc[row.qid]
        aliases = q["answer_aliases"]
        good = v1_score(row.answer or "", q["answer"], [] if aliases is None else list(aliases)) >= 4
        counts["v1_credited"] += good
        counts["v2_credited"] += bool(row.answered_well)
        counts["em"] += row.score == 5 and any(
            answer_match.normalize(row.answer) == answer_match.normalize(t)
            for t in [q["answer"], *([] if aliases is None else list(aliases))])
        counts[{(True, True): diagnose.ACCESSED_GOOD, (True, False): diagnose.USE_FAILURE,
                (False, True): diagnose.UNACCESSED_GOOD, (False, False): diagnose.ACCESS_FAILURE}[
            (bool(row.accessed), good)]] += 1
        if good != bool(row.answered_well):
            flipped.append({"qid": row.qid, "question": q["text"], "answer": q["answer"], "reply": row.answer,
                            "v2_score": row.score})
    return counts, flipped


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("workdir", nargs="?", default=None)
    p.add_argument("--banks", default="demo,hotpotqa")
    p.add_argument("--limit", type=int, default=80)
    p.add_argument("--skip-qa", action="store_true", help="only re-judge and diagnose existing answers")
    args = p.parse_args()
    root = Path(args.workdir or tempfile.mkdtemp(prefix="use-quadrants-"))
    root.mkdir(parents=True, exist_ok=True)
    for bank in args.banks.split(","):
        if bank == "hotpotqa" and not HOTPOT.is_file():
            print(f"skip hotpotqa: {HOTPOT} not found")
            continue
        w = str(root / bank)
        times = {} if args.skip_qa else prepare(bank, w, args.limit)
        rows = quadrants(w)
        counts = {r["quadrant"]: r["n"] for r in rows}
        excluded = rows[0]["n_excluded"] if rows else 0
        v1, flipped = rule_v1_counts(w)
        print(json.dumps({"bank": bank, "counts_rule_v2": counts, "counts_rule_v1": v1,
                          "classified": rows[0]["n_classified"] if rows else 0, "excluded": excluded,
                          "credit_changed": len(flipped), "times_s": {k: round(v) for k, v in times.items()}}),
              flush=True)
        for f in flipped:
            print("  changed:", json.dumps(f))


if __name__ == "__main__":
    main()
