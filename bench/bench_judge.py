"""How often the reference judge credits wrong replies, and how it agrees with exact match and an LLM judge.

    nice -n 19 python3 bench/bench_judge.py [--llm-sample 40] [--seed 0] [--out FILE.json]

Questions: the shared HotpotQA (500), MuSiQue (200) and 2Wiki (200) files, read with the project's importers.
Replies are constructed per question, labelled right or wrong by construction:

- right: the answer; "The answer is A."; "Based on the documents, A."; each alias;
- wrong: another question's answer (same dataset, seeded), verbose ("The answer is B."), the answer negated ("It is
  not A."); on "X or Y?" questions the competitor alone, "Y or A", "A and Y", "Y, not A"; on yes/no questions the
  opposite, "yes and no", "<opposite>, not <answer>";
- held-out phrasings, written after the rule was fixed and not tuned on (``held_out``), reported separately: the
  rule was designed with the templates above in view, so only these say how it does on phrasings it has not seen.

For the reference judge of rule v1 (containment without checks, re-implemented here for the comparison) and v2
(``judge.reference_score``): the credited rate (score ≥ 4, diagnose's "answered well") on right and wrong replies
per question kind; agreement with exact match (EM = 1 ⇔ score 5; credited vs EM) with Cohen's kappa; and on a
seeded sample (half right, half wrong) the offline LLM judge ``local/smollm2-135m`` through the gateway (judge
prompt v1, cache in a temporary folder): parse rate, agreement of its credited verdict with v2 and with the labels.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emb_s_core import answer_match, judge  # noqa: E402

DATA = Path(os.environ.get("EMB_S_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
FILES = {"hotpotqa": DATA / "hotpotqa-dev-distractor-500" / "dev_subsampled.jsonl",
         "musique": DATA / "musique-ans-200" / "musique.jsonl",
         "2wiki": DATA / "2wikimultihopqa-200" / "2wikimultihopqa.jsonl"}


def v1_score(prediction: str, answer: str, aliases: list[str]) -> int:
    """The rule before issue 16: exact 5, answer contained as a phrase 4, else min(3, round(5·F1))."""
    truths = [t for t in [answer, *aliases] if t]
    n = answer_match.normalize
    if any(n(prediction) == n(t) and n(t) for t in truths):
        return 5
    if any(n(t) and f" {n(t)} " in f" {n(prediction)} " for t in truths):
        return 4
    return min(3, int(round(5 * max(answer_match.token_f1(prediction, t) for t in truths))))


def load_questions() -> list[dict]:
    from emb_s_core.sources import musique, hotpotqa, twowiki

    readers = {"hotpotqa": hotpotqa.read, "musique": musique.read, "2wiki": twowiki.read}
    out = []
    for name, path in FILES.items():
        if not path.is_file():
            print(f"skip {name}: {path} not found")
            continue
        for q in readers[name](path).queries:
            out.append({"dataset": name, "qid": q.qid, "question": q.text, "answer": q.answer,
                        "aliases": list(q.answer_aliases or [])})
    return out


def kind_of(q: dict) -> tuple[str, answer_match.Alternatives]:
    alts = answer_match.alternatives_for(q["question"], [q["answer"], *q["aliases"]])
    if alts and alts.answer_side[0] in answer_match.YES_NO:
        return "yes/no", alts
    return ("comparison", alts) if alts else ("other", alts)


def replies(q: dict, other: str, kind: str, alts: answer_match.Alternatives) -> list[tuple[str, str, str]]:
    """(reply, label, template) triples for one question."""
    a = q["answer"]
    out = [(a, "right", "answer"), (f"The answer is {a}.", "right", "verbose"),
           (f"Based on the documents, {a}.", "right", "verbose2")]
    out += [(al, "right", "alias") for al in q["aliases"][:2]]
    out += [(other, "wrong", "other answer"), (f"The answer is {other}.", "wrong", "other verbose")]
    if kind == "yes/no":
        opp = alts.competitors[0]
        out += [(opp.capitalize(), "wrong", "competitor"), ("Yes and no.", "wrong", "both"),
                (f"{opp.capitalize()}, not {a}.", "wrong", "competitor, not answer")]
    else:
        out += [(f"It is not {a}.", "wrong", "negated")]
    if kind == "comparison":
        c = alts.competitors[0]
        out += [(c, "wrong", "competitor"), (f"{c} or {a}", "wrong", "both (or)"),
                (f"{a} and {c}", "wrong", "both (and)"), (f"{c}, not {a}", "wrong", "competitor, not answer")]
    return out + held_out(a, other, kind, alts)


def held_out(a: str, other: str, kind: str, alts: answer_match.Alternatives) -> list[tuple[str, str, str]]:
    """Phrasings written after the rule was fixed and never tuned on (labelled ``held-out: ...``)."""
    out = [(f"{a}, I believe.", "right", "held-out: hedged"),
           # tuned on after its first run (860 of 864 credited): "is incorrect/wrong/false" became a denial
           (f"{a} is incorrect; it is {other}.", "wrong", "denied in words (was held out)"),
           (f"Not sure, but not {a}.", "wrong", "held-out: hedged negation")]
    if kind in ("comparison", "yes/no"):
        c = alts.competitors[0]
        out += [(f"Definitely not {c}; it is {a}.", "right", "held-out: not competitor; answer"),
                (f"{a}? No, {c}.", "wrong", "held-out: answer then corrected"),
                (f"I think {c}, but {a} is also possible.", "wrong", "held-out: both, hedged"),
                (f"Either {a} or {c}.", "wrong", "held-out: either"),
                (f"{c} rather than {a}.", "wrong", "held-out: rather than")]
    return out


def kappa(a: list[bool], b: list[bool]) -> float:
    import numpy as np

    return judge.cohen_kappa(np.asarray(a, int), np.asarray(b, int), labels=range(2))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--llm-sample", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    rng = random.Random(args.seed)
    questions = load_questions()
    by_dataset = defaultdict(list)
    for q in questions:
        by_dataset[q["dataset"]].append(q)
    rows = []
    start = time.perf_counter()
    for dataset, qs in by_dataset.items():
        answers = [q["answer"] for q in qs]
        for q in qs:
            kind, alts = kind_of(q)
            other = rng.choice(answers)
            while answer_match.normalize(other) == answer_match.normalize(q["answer"]):
                other = rng.choice(answers)
            for reply, label, template in replies(q, other, kind, alts):
                v2 = judge.reference_score(reply, q["answer"], q["aliases"], question=q["question"])
                rows.append({"dataset": dataset, "kind": kind, "label": label, "template": template,
                             "question": q["question"], "answer": q["answer"], "reply": reply,
                             "em": bool(v2["em"]), "v1": v1_score(reply, q["answer"], q["aliases"]),
                             "v2": v2["score"], "reason": v2["reason"]})
    took = time.perf_counter() - start
    print(f"{len(questions)} questions, {len(rows)} replies, judged twice in {took:.2f} s")
    kinds = sorted({r["kind"] for r in rows})
    print("\ncredited (score >= 4) rate by question kind, rule v1 -> v2")
    print("| kind | questions | right replies | right credited v1 | v2 | wrong replies | wrong credited v1 | v2 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    summary = {}
    for kind in [*kinds, "all"]:
        sel = [r for r in rows if kind in ("all", r["kind"])]
        right = [r for r in sel if r["label"] == "right"]
        wrong = [r for r in sel if r["label"] == "wrong"]
        nq = len({(r["dataset"], r["question"]) for r in sel})
        cell = {f"{lab}_{v}": sum(r[v] >= 4 for r in grp) / max(1, len(grp))
                for lab, grp in (("right", right), ("wrong", wrong)) for v in ("v1", "v2")}
        summary[kind] = dict(cell, questions=nq, right=len(right), wrong=len(wrong))
        print(f"| {kind} | {nq} | {len(right)} | {cell['right_v1']:.3f} | {cell['right_v2']:.3f} | {len(wrong)} | "
              f"{cell['wrong_v1']:.3f} | {cell['wrong_v2']:.3f} |")
    print("\ncredited replies by template (v1 -> v2)")
    print("| template | label | n | credited v1 | credited v2 |")
    print("|---|---|---:|---:|---:|")
    for template in sorted({r["template"] for r in rows}, key=lambda t: (t.startswith("held-out"), t)):
        grp = [r for r in rows if r["template"] == template]
        print(f"| {template} | {grp[0]['label']} | {len(grp)} | {sum(r['v1'] >= 4 for r in grp)} | "
              f"{sum(r['v2'] >= 4 for r in grp)} |")
    print("\nagreement with exact match (all replies)")
    agree = {}
    for v in ("v1", "v2"):
        five = sum((r[v] == 5) == r["em"] for r in rows) / len(rows)
        cred = sum((r[v] >= 4) == r["em"] for r in rows) / len(rows)
        k = kappa([r[v] >= 4 for r in rows], [r["em"] for r in rows])
        agree[v] = {"score5_eq_em": five, "credited_eq_em": cred, "kappa_credited_em": k}
        print(f"  {v}: score==5 iff EM {five:.3f}; credited iff EM {cred:.3f} (kappa {k:.3f})")
    label_acc = {v: sum((r[v] >= 4) == (r["label"] == "right") for r in rows) / len(rows) for v in ("v1", "v2")}
    em_acc = sum(r["em"] == (r["label"] == "right") for r in rows) / len(rows)
    print(f"  agreement with the construction labels: EM {em_acc:.3f}, v1 {label_acc['v1']:.3f}, "
          f"v2 {label_acc['v2']:.3f}")
    result = {"questions": len(questions), "replies": len(rows), "by_kind": summary, "em_agreement": agree,
              "label_accuracy": dict(label_acc, em=em_acc)}
    if args.llm_sample:
        result["llm"] = llm_sample(rows, args.llm_sample, rng)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2))


def llm_sample(rows: list[dict], n: int, rng: random.Random) -> dict:
    """The offline LLM judge on a stratified sample: half right, half wrong replies (comparison ones first)."""
    from emb_s_core import llm, protocol

    right = [r for r in rows if r["label"] == "right"]
    wrong = [r for r in rows if r["label"] == "wrong"]
    sample = rng.sample(right, n // 2) + rng.sample(wrong, n - n // 2)
    prompt = protocol.load_prompt("judge")
    with tempfile.TemporaryDirectory() as tmp:
        gw = llm.Gateway(llm.LOCAL_MODEL, cache_path=Path(tmp) / "cache.sqlite", max_tokens=8)
        start = time.perf_counter()
        results = gw.complete_many([judge.judge_messages(prompt, r["question"], r["answer"], r["reply"])
                                    for r in sample])
        took = time.perf_counter() - start
    parsed = [judge.parse_score(res.text) if res.status == llm.OK else None for res in results]
    ok = [(r, s) for r, s in zip(sample, parsed) if s is not None]
    out = {"n": len(sample), "parsed": len(ok), "seconds": round(took, 1),
           "llm_credited_eq_v2": sum((s >= 4) == (r["v2"] >= 4) for r, s in ok) / max(1, len(ok)),
           "llm_credited_eq_label": sum((s >= 4) == (r["label"] == "right") for r, s in ok) / max(1, len(ok)),
           "v2_credited_eq_label": sum((r["v2"] >= 4) == (r["label"] == "right") for r, _ in ok) / max(1, len(ok)),
           "kappa_llm_v2": kappa([s >= 4 for _, s in ok], [r["v2"] >= 4 for r, _ in ok]),
           "llm_score_counts": {str(k): sum(s == k for _, s in ok) for k in range(6)},
           "replies": [res.text for res in results]}
    print(f"\nLLM judge {llm.LOCAL_MODEL} on {len(sample)} sampled replies ({took:.0f} s): parsed {len(ok)}; "
          f"credited agrees with v2 {out['llm_credited_eq_v2']:.3f} (kappa {out['kappa_llm_v2']:.3f}), with the "
          f"labels {out['llm_credited_eq_label']:.3f} (v2 on the same: {out['v2_credited_eq_label']:.3f}); "
          f"scores {out['llm_score_counts']}")
    print("  replies:", json.dumps(out["replies"][:12]))
    return out


if __name__ == "__main__":
    main()
