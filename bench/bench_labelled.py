"""The judges and parsers measured against the labelled sets of ``emb_s_core/labelled/`` (issue 22).

    nice python3 bench/bench_labelled.py [--code DIR] [--out FILE.json] [--write-figures]

``--code DIR`` measures the judge and parser code of another checkout (e.g. ``/work/main`` for the figures before
this change) against this checkout's labelled sets. For each split (``tune``; ``held_out``; within held-out the
``unseen`` phrasings, written after tuning; and the *blind* set ``answers_blind.jsonl``, replies written by hand
by writers who never saw the judge's code, in eight rounds: ``blind_r1`` and ``blind_r2``, each measured once and
then tuned on for ``reference_v4``, ``blind_r3`` to ``blind_r7``, each measured once and then tuned on for
``reference_v5``, ``v6``, ``v8``, ``v9`` and ``v10``, and ``blind_r8``, never looked at):

- reference judge: credited = score ≥ 4 (diagnose's "answered well"); false credit = wrong replies credited /
  wrong replies, false reject = right replies not credited / right replies;
- token F1 (SQuAD, best over gold and aliases) at thresholds 0.3 … 1.0, and exact match, read the same way;
- LLM-judge parser: replies whose parsed score differs from the label (a score where none is given counts);
- localization parser: replies whose ids differ from the label (context ids given when the code accepts them);
  both also on their blind sets (``*_blind.jsonl``, split ``blind``).

``--write-figures`` also stores the reference judge's held-out and ``blind_r8`` figures (every threshold) in
``emb_s_core/labelled/agreement.json``, which ``emb-s diagnose`` and the Access-vs-use page show beside its scores.
"""
from __future__ import annotations

import argparse
import inspect
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LABELLED = ROOT / "emb_s_core" / "labelled"
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0)


def read(name: str) -> list[dict]:
    return [json.loads(line) for line in (LABELLED / name).read_text(encoding="utf-8").splitlines() if line]


def rates(items: list[dict], credited: list[bool]) -> dict:
    wrong = [c for it, c in zip(items, credited) if not it["correct"]]
    right = [c for it, c in zip(items, credited) if it["correct"]]
    return {"false_credit": sum(wrong) / max(1, len(wrong)), "false_reject": 1 - sum(right) / max(1, len(right)),
            "n_wrong": len(wrong), "n_right": len(right)}


def parts(items: list[dict]) -> dict[str, list[int]]:
    out = {"tune": [], "held_out": [], "held_out_unseen": [], "blind_r1": [], "blind_r2": [], "blind_r3": [],
           "blind_r4": [], "blind_r5": [], "blind_r6": [], "blind_r7": [], "blind_r8": []}
    for i, it in enumerate(items):
        out[it["split"]].append(i)
        if it["split"] == "held_out" and it.get("style", "").startswith("unseen:"):
            out["held_out_unseen"].append(i)
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--code", default=str(ROOT), help="checkout whose emb_s_core is measured (default: this one)")
    p.add_argument("--out", default=None)
    p.add_argument("--write-figures", action="store_true", help="store the held-out figures shown by diagnose")
    args = p.parse_args()
    sys.path.insert(0, str(Path(args.code).resolve()))
    from emb_s_core import answer_match, judge, localize

    answers = read("answers.jsonl") + read("answers_blind.jsonl")
    t0 = time.perf_counter()
    ref = []
    for it in answers:
        ref.append(judge.reference_score(it["reply"], it["gold"], it["aliases"], question=it["question"])["score"])
    ref_s = time.perf_counter() - t0
    f1 = [max(answer_match.token_f1(it["reply"], t) for t in [it["gold"], *it["aliases"]]) for it in answers]
    em = [max(answer_match.normalize(it["reply"]) == answer_match.normalize(t) for t in [it["gold"], *it["aliases"]])
          for it in answers]
    judges = read("judge_replies.jsonl") + read("judge_replies_blind.jsonl")
    parsed = [judge.parse_score(it["reply"]) for it in judges]
    locs = read("localize_replies.jsonl") + read("localize_replies_blind.jsonl")
    takes_context = "context_ids" in inspect.signature(localize.read_ids).parameters
    ids = [localize.read_ids(it["reply"], it["k"], set(it["context_ids"]))[0] if takes_context
           else localize.read_ids(it["reply"], it["k"])[0] for it in locs]

    report: dict = {"code": str(Path(args.code).resolve()), "machine": platform.platform(),
                    "reference_ms_per_item": 1000 * ref_s / len(answers), "answers": {}, "judge_parser": {},
                    "localize_parser": {}}
    for split, idx in parts(answers).items():
        items = [answers[i] for i in idx]
        row = {"n": len(items), "reference": rates(items, [ref[i] >= 4 for i in idx]),
               "exact_match": rates(items, [bool(em[i]) for i in idx])}
        for t in THRESHOLDS:
            row[f"token_f1>={t}"] = rates(items, [f1[i] >= t for i in idx])
        report["answers"][split] = row
    for name, items, got, key in (("judge_parser", judges, parsed, "score"), ("localize_parser", locs, ids, "ids")):
        for split in ("tune", "held_out", "blind", "blind_r4", "blind_r5", "blind_r6", "blind_r7", "blind_r8"):
            idx = [i for i, it in enumerate(items) if it["split"] == split]
            bad = [items[i]["reply"] for i in idx if got[i] != items[i][key]]
            report[name][split] = {"n": len(idx), "misparsed": len(bad), "examples": bad[:5]}
    text = json.dumps(report, indent=1, ensure_ascii=False)
    if args.out:
        Path(args.out).write_text(text)
    print_summary(report)
    if args.write_figures:
        from emb_s_core import labels

        figures = {split: labels.reference_figures(split) for split in labels.MEASURED_SPLITS}
        rule = figures["held_out"]["rule"]
        path = LABELLED / labels.FIGURES  # other judges' figures (the learned judge's) are kept
        stored = {k: v for k, v in json.loads(path.read_text()).items() if not k.startswith("reference_")} \
            if path.is_file() else {}
        path.write_text(json.dumps({rule: figures, **stored}, indent=1) + "\n")
        print(f"wrote {LABELLED / labels.FIGURES}")


def print_summary(report: dict) -> None:
    print(f"code: {report['code']}  ({report['reference_ms_per_item']:.2f} ms per reference judgment)")
    for split, row in report["answers"].items():
        print(f"[{split}] n={row['n']}")
        for key in ["reference", "exact_match", *(f"token_f1>={t}" for t in THRESHOLDS)]:
            r = row[key]
            print(f"  {key:16s} false credit {r['false_credit']:6.1%} ({r['n_wrong']} wrong)   "
                  f"false reject {r['false_reject']:6.1%} ({r['n_right']} right)")
    for name in ("judge_parser", "localize_parser"):
        for split, r in report[name].items():
            print(f"{name} [{split}]: {r['misparsed']} of {r['n']} mis-parsed")


if __name__ == "__main__":
    main()
