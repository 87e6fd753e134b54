"""The learned answer-equivalence judge (``emb_s_core/equivalence.py``) measured on blind rounds it never saw.

    nice python3 bench/bench_equivalence.py [--target 0.02] [--out FILE.json]

Leave one round out: for each blind round ``blind_r1`` … ``blind_r8`` of ``answers_blind.jsonl``, the model is
trained on the template set (``answers.jsonl``, tune and held-out) and the seven other blind rounds, and measured on
the held-out round only. Each round is reported overall and per dataset, beside ``reference_v*`` alone and token F1
≥ 0.5 (credited = score ≥ 4, as ``diagnose`` reads it), and again on the round's questions that appear in no
training item (the question text is new to the model; the rules were tuned on rounds 1-7, so for them only round 8
is unread). Features are computed once (paraphrase-MiniLM-L3 ONNX) and reused by every fold.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from emb_s_core import equivalence, judge, labels  # noqa: E402
from emb_s_core.answer_match import token_f1  # noqa: E402

DATASETS = ("hotpotqa", "musique", "2wiki", "locomo")
ROUNDS = tuple(f"blind_r{i}" for i in range(1, 9))


def rates(correct: list[bool], credited: list[bool]) -> dict:
    r = labels.rates(correct, credited)
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--target", type=float, default=equivalence.TARGET_FALSE_CREDIT)
    p.add_argument("--out", default=None)
    p.add_argument("--features", default=None, help="an .npy file to keep the features in between runs")
    p.add_argument("--write-figures", action="store_true",
                   help="store the pooled figures (credited = score ≥ 4) in emb_s_core/labelled/agreement.json")
    args = p.parse_args()
    t0 = time.time()
    template = labels.load_set("answers.jsonl")
    blind = labels.load_set("answers_blind.jsonl")
    rows = [*template, *blind]
    rule = [judge.reference_score(r["reply"], r["gold"], r["aliases"], question=r["question"]) for r in rows]
    items = [equivalence.Item.of(r) for r in rows]
    asked = [g["reason"] == equivalence.FALLBACK and equivalence.veto(it) is None for g, it in zip(rule, items)]
    idx = [i for i, a in enumerate(asked) if a]
    x = np.zeros((len(rows), len(equivalence.FEATURES)))
    if args.features and Path(args.features).is_file():
        x = np.load(args.features)
    else:
        x[idx] = equivalence.features([items[i] for i in idx], equivalence.default_encoder(), [rule[i] for i in idx])
        if args.features:
            np.save(args.features, x)
    t_features = time.time() - t0
    y = np.array([bool(r["correct"]) for r in rows])
    split = np.array([r["split"] for r in rows])
    ds = np.array([r["dataset"] for r in rows])
    base = np.array([g["score"] >= 4 for g in rule])
    f1 = np.array([max(token_f1(r["reply"], t) for t in [r["gold"], *r["aliases"]] if t) >= 0.5 for r in rows])
    out: dict = {"target": args.target, "rule": judge.REFERENCE_VERSION, "code": equivalence.CODE_VERSION,
                 "features": list(equivalence.FEATURES), "rounds": {}}
    asked = np.array(asked)
    for held in ROUNDS:
        test = split == held
        train = ~test & asked
        model = equivalence.fit(x[train], y[train], n_wrong=int((~test & ~y).sum()), target=args.target)
        learned = base.copy()
        learned[test & asked] = model.probability(x[test & asked]) >= model.threshold
        seen_q = {rows[i]["question"] for i in np.flatnonzero(~test)}
        new_q = np.array([rows[i]["question"] not in seen_q for i in range(len(rows))])
        entry = {"threshold": model.threshold, "n_train": int(train.sum()), "parts": {}}
        for part, mask in [("all", test), *((d, test & (ds == d)) for d in DATASETS),
                           ("new questions", test & new_q)]:
            entry["parts"][part] = {name: rates(list(y[mask]), list(c[mask]))
                                    for name, c in (("reference", base), ("learned", learned), ("token_f1", f1))}
        out["rounds"][held] = entry
    # pooled over the eight held-out rounds
    out["pooled"] = {}
    for part in ("all", *DATASETS, "new questions"):
        pooled = {}
        for name in ("reference", "learned", "token_f1"):
            nw = sum(out["rounds"][r]["parts"][part][name]["n_wrong"] for r in ROUNDS)
            nr = sum(out["rounds"][r]["parts"][part][name]["n_right"] for r in ROUNDS)
            fc = sum((out["rounds"][r]["parts"][part][name]["false_credit"] or 0) *
                     out["rounds"][r]["parts"][part][name]["n_wrong"] for r in ROUNDS)
            fr = sum((out["rounds"][r]["parts"][part][name]["false_reject"] or 0) *
                     out["rounds"][r]["parts"][part][name]["n_right"] for r in ROUNDS)
            pooled[name] = {"n_wrong": nw, "n_right": nr, "false_credit": fc / max(nw, 1),
                            "false_reject": fr / max(nr, 1), "false_credits": round(fc), "false_rejects": round(fr)}
        out["pooled"][part] = pooled
    out["machine"] = {"python": platform.python_version(), "cpu": platform.processor() or platform.machine(),
                      "seconds": round(time.time() - t0, 1), "feature_seconds": round(t_features, 1),
                      "n_asked": int(asked.sum())}
    text = json.dumps(out, indent=1)
    if args.out:
        Path(args.out).write_text(text)
    for r in ROUNDS:
        e = out["rounds"][r]
        cells = []
        for part in ("all", *DATASETS, "new questions"):
            d = e["parts"][part]
            cells.append(f"{part}: " + " ".join(f"{n[:3]} {fmt(d[n])}" for n in ("reference", "learned", "token_f1")))
        print(r, f"thr={e['threshold']:.2f}", " | ".join(cells))
    for part, d in out["pooled"].items():
        print("pooled", part, " ".join(f"{n} {fmt(v)} ({v['false_credits']}/{v['n_wrong']}, "
                                       f"{v['false_rejects']}/{v['n_right']})" for n, v in d.items()))
    print(out["machine"])
    if args.write_figures:
        write_figures(out)


def write_figures(out: dict) -> None:
    """The learned judge's pooled leave-one-round-out figures, overall and per dataset, under its rule name in
    ``agreement.json`` (beside the reference judge's), shown wherever its scores are."""
    path = ROOT / "emb_s_core" / "labelled" / labels.FIGURES
    stored = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    keep = ("n_wrong", "n_right", "false_credit", "false_reject")

    def rates_of(part: dict) -> dict:
        r = {k: part["learned"][k] for k in keep}
        return {"n": r["n_wrong"] + r["n_right"], **r}

    rule = judge.rule_version(judge.LEARNED)
    stored[rule] = {"blind_loo": {"rule": rule, "labelled_set": labels.LOO_SET,
                                  "thresholds": {"4": rates_of(out["pooled"]["all"])},
                                  "datasets": {d: {"4": rates_of(out["pooled"][d])} for d in DATASETS}}}
    path.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def fmt(r: dict) -> str:
    fc, fr = r["false_credit"], r["false_reject"]
    return f"{'-' if fc is None else f'{100 * fc:.1f}'}/{'-' if fr is None else f'{100 * fr:.1f}'}"


if __name__ == "__main__":
    main()
