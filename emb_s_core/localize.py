"""Long-context localization (paper §A.3): the model reads a whole rung and names the relevant document ids.

The rung's documents are serialized with ``[DocID=<id>]`` headers (sorted by id), the model is asked for the top-K
ids, and the reply is canonicalized: the integers in order of appearance, the first K unique ones (a decimal such
as "relevance 3.5" is one number and not an id). The cell is run only when ``prompt tokens + max_tokens ≤ window``;
otherwise it is stored as ``does_not_fit`` (never a zero).
Results are an ordinary run (kind ``localize``), so every metric, heatmap and comparison works on them.

Every call keeps an audit: the ids found, those that are not in the context (invented), what reading them dropped
(decimals, repeated ids, ids beyond K), and whether the reply had no ids at all or copied document text instead of
ids.
"""
from __future__ import annotations

import re
from typing import Any

import pandas as pd

from emb_s_core import ladder as ladder_mod
from emb_s_core import llm, protocol, provenance, runs
from emb_s_core.llm import structured
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

KIND = "localize"
_NUMBER = re.compile(r"\d+(?:\.\d+)*")  # "286", "3.5": a decimal is one number (and no id); "12,7" is two ids
_WORD = re.compile(r"\w+")
ECHO_NGRAM = 8  # a reply sharing an 8-word sequence with the context copied document text


RAW_INTEGERS = "raw_integers_v1"  # the paper's rule: every integer of the reply, in order (§A.3)
# DocID mentions and JSON lists first; numbering, counts, ranges, separators read (issue 22). v3: the blind rounds'
# classes (a revised or nested list, ids listed after "IDs", "1 through 3", "1 999", ids set aside as a group or by
# "so it is not relevant", ids settled on after others, an echoed "k = 2"); a run records the rule it was read by
DOCID = "docid_v4"
ID_RULES = (DOCID, RAW_INTEGERS)
MAX_RANGE = 50  # "3-6" expands; a longer span is two numbers, not a range
_JSON_LIST = re.compile(r"\[\s*\d[\d\s,]*\]")
_MENTION = re.compile(r"(?:\bdoc(?:ument)?s?\s*(?:ids?)?|\bids?)\s*[=:#]?\s*#?\s*"
                      r"(\d[\d,]*(?:(?:,\s*|\s+and\s+|\s*&\s*)\d+)*)"  # "IDs 1 and 10", "DocIDs 3, 7 and 9"
                      r"(?:\s*(?:-|–|to|through|thru)\s*(\d+))?|#(\d+)", re.I)
_NUMBERING = re.compile(r"^[ \t]*(?:[-*•][ \t]*)?\d+[.)](?=[ \t]+\S)", re.M)  # "1. ", "2) " opening a line
_COUNT_AFTER = re.compile(r"\s*(?:(?:are|is|were)\s+(?:needed|required|relevant|useful)\b|relevant\b|most\b|"
                          r"documents?\b|docs?\b|ids?\b|docids?\b|results?\b|ones?\b|items?\b|of\s+them\b|"
                          r"passages?\b|sources?\b|texts?\b|candidates?\b|chunks?\b|entries\b|records?\b)", re.I)
_COUNT_BEFORE = re.compile(r"(?:\btop|\bfound)\s*$", re.I)
# an id the reply sets aside: "not 12", "except Doc 3", "12 is irrelevant"
_SET_ASIDE = re.compile(r"\b(?:not|except|excluding|exclude|rather than|instead of|unlike|nor|ignore|ignoring|"
                        r"rule out|ruling out)\s+(?:doc(?:ument)?s?\s*(?:ids?)?\s*[=:#]?\s*)?#?(\d+)(?![\d.,]\d)|"
                        r"(?<![\d.,])(\d+)\s+(?:is|was|seems)\s+(?:not\b|irrelevant|unrelated|off[- ]topic)|"
                        r"(?<![\d.,])(\d+)\b[^.;\n\d]{0,80}?\b(?:so|and|,)\s+(?:(?:it|this one|that one)\s+)?"
                        r"(?:is|was|seems)\s+(?:(?:therefore|thus|hence|so|also)\s+)?"
                        r"(?:not\b|irrelevant|unrelated|off[- ]topic)", re.I)  # "DocID 1960 …, so it is not relevant",
# "DocID 77 is about a different film and is not relevant"
# "1 999" with 1999 shown: a space as thousands separator
_SPACED_THOUSANDS = re.compile(r"(?<![\d,.])(\d{1,3})[ \u00a0\u202f](\d{3})(?![\d,.])")
# the ids a reply settles on after weighing others: "the two needed are …", "so the relevant ones are …", "Answer:"
_FINAL_IDS = re.compile(r"\b(?:(?:so\s+)?the\s+(?:\w+\s+){0,2}(?:needed|relevant|required|right|correct)(?:\s+(?:ones|"
                        r"documents|docs|ids|docids))?\s+(?:are|is)|(?:the\s+)?(?:documents|docs|ids|docids)(?:\s+"
                        r"(?:needed|used|required))?\s+(?:are|is)|final (?:answer|list|ids)|answer)\b\s*:?", re.I)
# docid_v4 (issue 34): a "Not relevant:" section sets its ids aside (to the next "Relevant:" header or the end);
# documents the reply says it checked are no answer ("None. (I checked documents 1 through 40.)"); inline numbering
# counting up from 1 ("1) 2950 2) 2951"); what the reply says before a self-correction ("wait, I meant DocID 404");
# the two candidates "between 400 and 403"; prose numbers ("with 4 members", "sessions 3 and 4", "(1946)")
_NOT_RELEVANT_SECTION = re.compile(r"\b(?:not\s+relevant|irrelevant|unrelated|excluded|rejected|ruled\s+out|"
                                   r"discarded)(?:\s+(?:documents?|docs|docids|ids))?\s*:(?P<ids>.*?)"
                                   r"(?=(?<!not\s)\brelevant(?:\s+(?:documents?|docs|docids|ids))?\s*:|$)",
                                   re.I | re.S)
_CHECKED = re.compile(r"\b(?:checked|looked\s+(?:at|through)|went\s+through|reviewed|searched|scanned|read)\b"
                      r"[^.;\n]{0,40}?\d[^.;\n)]*", re.I)
_NONE = re.compile(r"^\W*(?:none|nothing|no\s+(?:relevant\s+)?(?:documents?|docs|ids|docids|matches))\b", re.I)
_INLINE_NUMBERING = re.compile(r"(?<![\w(])\(?(\d{1,2})\)(?=\s*\S)")
_SELF_CORRECTION = re.compile(r"\b(?:wait|sorry|scratch that|i\s+meant|i\s+mean|correction|no,\s*actually)\b",
                              re.I)
_BETWEEN = re.compile(r"\bbetween\s+(?:doc(?:ument)?s?\s*(?:ids?)?\s*)?#?(\d+)\s+and\s+(?:doc(?:ument)?\s*(?:id)?\s*)?"
                      r"#?(\d+)", re.I)
_PROSE_NUMBERS = re.compile(r"\b(?:sessions?|seasons?|episodes?|chapters?|pages?|volumes?|parts?|acts?|scenes?|"
                            r"rounds?|steps?|levels?|tracks?|issues?|games?|books?|weeks?|days?|months?)\s+"
                            r"(?P<ids>\d+(?:\s*(?:,|and|&|or)\s*\d+)*)|\b(?:with|has|had|have|of|about|around|"
                            r"over|nearly|almost|only)\s+(?P<count>\d+)\s+[a-z]+s\b|\((?P<year>(?:1[0-9]|20)\d\d)\)",
                            re.I)
_K_ECHO = re.compile(r"\bk\s*=\s*\d+", re.I)  # "k = 2": the question's parameter, no id
# several ids set aside at once: "DocIDs 5, 9 and 12 are unrelated", "(5 and 9 are not relevant)"
_SET_ASIDE_GROUP = re.compile(r"(?P<ids>\d+(?:\s*(?:,|and|&)\s*\d+)+)\s+(?:are|were|seem)\s+(?:not\b|irrelevant|"
                              r"unrelated|off[- ]topic)", re.I)
# a year or an ordinal in prose, not an id: "the 1999 film", "in 1987", "released 1958"
_PROSE_YEAR = re.compile(r"\b(?:the|in|since|from|until|during|released|published|founded|born|circa|of)\s+"
                         r"((?:1[0-9]|20)\d\d)\b(?!\s*(?:[-–]|to)\s*\d)", re.I)
_RAW_NUMBER = re.compile(r"\d+(?:,\d{3})+(?![\d.])|\d+(?:\.\d+)+|\d+")
_RANGE = re.compile(r"(\d+)\s*(?:-|–|\bto\b|\bthrough\b|\bthru\b)\s*(\d+)", re.I)


def canonicalize(reply: str | None, k: int, context_ids: set[int] | None = None, rule: str = DOCID) -> list[int]:
    """The first ``k`` unique ids a localization reply names (see :func:`read_ids`)."""
    return read_ids(reply, k, context_ids, rule)[0]


def _empty_dropped() -> dict[str, list]:
    return {"decimals": [], "repeated": [], "beyond_k": [], "not_in_context": [], "numbering": [], "counts": [],
            "set_aside": [], "prose_years": []}


def _numbers(text: str, context_ids: set[int] | None, dropped: dict) -> list[int]:
    """Bare numbers in order: ranges expanded, decimals dropped, "1,234" one number when it is an id of the context
    (or no context is known), else its parts."""
    out: list[int] = []
    pos = 0
    for m in _RAW_NUMBER.finditer(text):
        if m.start() < pos:
            continue
        token = m.group()
        if "." in token:
            dropped["decimals"].append(token)
            continue
        rng = _RANGE.match(text, m.start())
        if rng and "," not in token:
            a, b = int(rng.group(1)), int(rng.group(2))
            if 0 < abs(b - a) <= MAX_RANGE:
                out += list(range(a, b + 1)) if b > a else list(range(a, b - 1, -1))
                pos = rng.end()
                continue
        if "," in token:
            whole = int(token.replace(",", ""))
            parts = [int(p) for p in token.split(",")]
            if context_ids is None or whole in context_ids or not any(p in context_ids for p in parts):
                out.append(whole)
            else:
                out += parts
            continue
        out.append(int(token))
    return out


def read_ids(reply: str | None, k: int, context_ids: set[int] | None = None, rule: str = DOCID
             ) -> tuple[list[int], dict]:
    """The ids a reply names, first ``k`` unique, and what reading them dropped.

    ``docid_v4`` (default): a JSON list of integers if the reply holds one (the later one when the reply revises it;
    a nested list flattened); else, after what the reply settles on ("the two needed are …") when it says so, the
    ``DocID N`` / ``#N`` mentions if there are any; else the bare numbers, skipping list numbering ("1. 40" → 40),
    counts ("Top 2: …", "2 documents", "2 are needed") and an echoed "k = 2", expanding ranges ("3-6", "1 through
    3"), reading thousands separators ("1,234", "1 234" when 1234 is shown). Numbers that are not ids of the context
    shown (``context_ids``) are dropped. ``raw_integers_v1``: the paper's rule, every integer in order.
    Ids the reply sets aside ("not 12", "except Doc 3", "12 is irrelevant", "5, 9 and 12 are unrelated") and years
    in prose ("the 1999 film", "in 1987") are no answer either. Dropped (for the audit): ``decimals``,
    ``repeated``, ``beyond_k``, ``not_in_context``, ``numbering``, ``counts``, ``set_aside``, ``prose_years``.
    """
    if rule not in ID_RULES:
        raise EmbSError(f"unknown id rule {rule!r}", fix=f"use one of: {', '.join(ID_RULES)}.")
    text = reply or ""
    dropped = _empty_dropped()
    if rule == RAW_INTEGERS:
        found = []
        for match in _NUMBER.finditer(text):
            if match.group().isdigit():
                found.append(int(match.group()))
            else:
                dropped["decimals"].append(match.group())
    else:
        if context_ids is not None:  # "DocID 1 999": a thousands separator when 1999 is shown and 1, 999 are not
            text = _SPACED_THOUSANDS.sub(lambda m: m.group(1) + m.group(2) if int(m.group(1) + m.group(2)) in
                                         context_ids and (m.group(2).startswith("0") or not
                                                          {int(m.group(1)), int(m.group(2))} <= context_ids)
                                         else m.group(), text)
        text = _K_ECHO.sub(" ", text)
        text, prose_aside = _prose_cleared(text, dropped)
        if final := list(_FINAL_IDS.finditer(text)):  # "… but I think the two needed are DocID 3 and DocID 27."
            tail = text[final[-1].end():]
            if re.search(r"\d", tail):
                text = tail
        found = _docid_numbers(text, context_ids, dropped)
        aside = {int(next(g for g in groups if g)) for groups in _SET_ASIDE.findall(text)}
        for group in _SET_ASIDE_GROUP.finditer(text):
            aside.update(int(x) for x in re.findall(r"\d+", group.group("ids")))
        aside |= prose_aside
        dropped["set_aside"] = [v for v in found if v in aside]
        found = [v for v in found if v not in aside]
    out: list[int] = []
    seen: set[int] = set()
    for value in found:
        if context_ids is not None and rule == DOCID and value not in context_ids:
            dropped["not_in_context"].append(value)
        elif value in seen:
            dropped["repeated"].append(value)
        elif len(out) == k:
            dropped["beyond_k"].append(value)
            seen.add(value)
        else:
            seen.add(value)
            out.append(value)
    return out, dropped


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def _prose_cleared(text: str, dropped: dict) -> tuple[str, set[int]]:
    """The reply with what names no chosen id blanked out (docid_v4), and the ids it sets aside by a section."""
    aside: set[int] = set()
    for m in _NOT_RELEVANT_SECTION.finditer(text):  # "Relevant: 501, 502\nNot relevant: 503, 504"
        aside.update(int(x) for x in re.findall(r"\d+", m.group("ids")))
        text = _blank(text, m.start(), m.end())
    if _NONE.match(text):  # "None. (I checked documents 1 through 40.)"
        for m in _CHECKED.finditer(text):
            text = _blank(text, m.start(), m.end())
    marks = list(_INLINE_NUMBERING.finditer(text))  # "1) 2950 2) 2951 3) 10": markers counting up from 1
    if len(marks) >= 2 and [int(m.group(1)) for m in marks] == list(range(1, len(marks) + 1)):
        for m in marks:
            dropped["numbering"].append(int(m.group(1)))
            text = _blank(text, m.start(), m.end())
    if (cues := list(_SELF_CORRECTION.finditer(text))) and re.search(r"\d", text[cues[-1].end():]):
        text = " " * cues[-1].end() + text[cues[-1].end():]  # "DocID 400 — wait, I meant DocID 404"
    between = list(_BETWEEN.finditer(text))
    rest = text
    for m in between:
        rest = _blank(rest, m.start(), m.end())
    if between and re.search(r"\d", rest):  # "torn between 400 and 403; I'll go with 403"
        text = rest
    for m in _PROSE_NUMBERS.finditer(text):  # "with 4 members", "sessions 3 and 4", "(1946)"
        group = next(g for g in ("ids", "count", "year") if m.group(g))
        dropped["prose_years" if group == "year" else "counts"] += [int(x) for x in re.findall(r"\d+", m.group(group))]
        text = _blank(text, m.start(group), m.end(group))
    return text, aside


_NESTED_LIST = re.compile(r"\[\s*(?:\[\s*\d[\d\s,]*\]\s*,?\s*)+\]")
_REVISED_LIST = re.compile(r"\b(?:wait|actually|correct(?:ed|ion)?|revis\w*|updat\w*|instead|rather|final|"
                           r"on (?:second thought|reflection)|scratch that|fix\w*)\b", re.I)


def _list_numbers(listed: str, context_ids: set[int] | None) -> list[int]:
    """The integers of a JSON list; "1,204" with no space is one id where the context shows 1204 and not 1 or
    204 ("[1,204, 77]"), and "2,031" always (no id is written "031")."""
    out: list[int] = []
    for m in re.finditer(r"\d+(?:,\d{3})*", listed):
        joined = int(m.group().replace(",", ""))
        parts = [int(x) for x in m.group().split(",")]
        pieces = m.group().split(",")
        if len(parts) > 1 and (any(x.startswith("0") for x in pieces[1:]) or context_ids is not None and
                               joined in context_ids and not all(x in context_ids for x in parts)):
            out.append(joined)
        else:
            out += parts
    return out


def _docid_numbers(text: str, context_ids: set[int] | None, dropped: dict) -> list[int]:
    if nested := _NESTED_LIST.search(text):  # "[[3], [11]]"
        return [int(x) for x in re.findall(r"\d+", nested.group())]
    lists = list(_JSON_LIST.finditer(text))
    if lists:
        chosen = lists[0]
        for later in lists[1:]:  # "[7, 8] Wait, 8 is about the sequel. Correct list: [7, 10]": the revised list
            if _REVISED_LIST.search(text[chosen.end():later.start()]):
                chosen = later
        return _list_numbers(chosen.group(), context_ids)
    out: list[int] = []
    for m in _MENTION.finditer(text):
        if m.group(3):
            out.append(int(m.group(3)))
            continue
        out += _numbers(m.group(1).rstrip(","), context_ids, dropped)
        if m.group(2):
            start, stop = out[-1], int(m.group(2))
            if 0 < abs(stop - start) <= MAX_RANGE:
                step = 1 if stop > start else -1
                out += list(range(start + step, stop + step, step))
    text = _MENTION.sub(lambda m: "~" * len(m.group()), text)  # then the numbers outside the mentions
    for m in _NUMBERING.finditer(text):
        dropped["numbering"].append(int(re.search(r"\d+", m.group()).group()))
    text = _NUMBERING.sub(lambda m: " " * len(m.group()), text)
    for m in _PROSE_YEAR.finditer(text):
        dropped["prose_years"].append(int(m.group(1)))
        text = text[:m.start(1)] + " " * len(m.group(1)) + text[m.end(1):]
    for m in _RAW_NUMBER.finditer(text):
        if m.group().isdigit() and (_COUNT_AFTER.match(text, m.end()) or _COUNT_BEFORE.search(text[:m.start()])):
            dropped["counts"].append(int(m.group()))
            text = text[:m.start()] + " " * len(m.group()) + text[m.end():]
    return out + _numbers(text, context_ids, dropped)


def _ngrams(text: str, n: int = ECHO_NGRAM) -> set[tuple[str, ...]]:
    words = [w for w in _WORD.findall(text.lower()) if not w.isdigit()]
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def audit(reply: str | None, ids: list[int], context_ids: set[int], context_text: str | None = None,
          dropped: dict | None = None) -> dict:
    """What the reply contained: ids found, ids not in the context, no ids, document text instead of ids, and
    what reading the ids dropped (decimals, repeated ids, ids beyond K; see :func:`read_ids`)."""
    reply = reply or ""
    echoed = bool(context_text) and bool(_ngrams(reply) & _ngrams(context_text or ""))
    not_in = [i for i in ids if i not in context_ids]
    dropped = {**_empty_dropped(), **(dropped or {})}
    invented = not_in + [i for i in dropped["not_in_context"] if i not in not_in]
    return {"n_ids": len(ids), "ids_not_in_context": invented, "n_not_in_context": len(invented),
            "no_ids": not ids, "document_text": echoed, "dropped_decimals": dropped["decimals"][:50],
            "n_repeated": len(dropped["repeated"]), "dropped_beyond_k": dropped["beyond_k"][:50],
            "dropped_numbering": dropped["numbering"][:50], "dropped_counts": dropped["counts"][:50],
            "dropped_set_aside": dropped["set_aside"][:50], "dropped_prose_years": dropped["prose_years"][:50]}


def messages_for(prompt: protocol.Prompt, question: str, context: str, k: int) -> llm.Messages:
    return [{"role": "user", "content": prompt.render(context=context, question=question, k=k)}]


def default_name(model: str, k: int) -> str:
    return f"localize:{model}@{k}"


def _plan(ws: Workspace, gateway: llm.Gateway, k: int, rungs: list[str] | None, limit: int | None,
          run: str | None, prompt: protocol.Prompt) -> list[dict[str, Any]]:
    """One entry per (rung, qid) still to do: messages + prompt tokens, or a does-not-fit marker."""
    lad = ladder_mod.load(ws)
    protocol.check_limit(limit)
    done = _done(ws, run) if run else set()
    qs = ws.read_pandas("queries", ["qid", "text"]).set_index("qid")["text"]
    docs = protocol.documents_by_id(ws)
    plan: list[dict[str, Any]] = []
    for rung in protocol.select_rungs(lad, rungs):
        qids = [q for q in protocol.rung_queries(rung, limit) if (rung.name, q) not in done]
        if not qids:
            continue
        context = protocol.context_of(docs, rung.doc_ids)
        # the context alone is a lower bound on the prompt: a rung it overflows is skipped without building prompts
        base = gateway.count_tokens([{"role": "user", "content": context}])
        ids = set(rung.doc_ids.tolist())
        for qid in qids:
            entry = {"rung": rung.name, "qid": qid, "context_ids": ids, "context": context}
            if not gateway.fits(base):
                entry.update(messages=None, prompt_tokens=base)
            else:
                entry["messages"] = messages_for(prompt, qs[qid], context, k)
                entry["prompt_tokens"] = gateway.count_tokens(entry["messages"])
            plan.append(entry)
    return plan


def _done(ws: Workspace, run: str) -> set[tuple[str, str]]:
    """Finished cells; ``error`` cells are retried on resume (their new row replaces the old one)."""
    res = runs.load_results(ws, runs=[run])
    res = res[res["status"] != runs.ERROR]
    return set(zip(res["rung"], res["qid"]))


def estimate(ws: Workspace, gateway: llm.Gateway, k: int = 10, rungs: list[str] | None = None,
             limit: int | None = None, name: str | None = None) -> dict:  # the id rule costs nothing
    """Calls, tokens and the cost upper bound of a localization run, before it starts."""
    gateway, _ = structured.asking(gateway, structured.LOCALIZE)  # the calls the run will make (and their cache)
    prompt = protocol.load_prompt("localize")
    plan = _plan(ws, gateway, k, rungs, limit, name or default_name(gateway.model, k), prompt)
    dnf = [p for p in plan if p["messages"] is None]
    est = gateway.estimate([p["messages"] for p in plan if p["messages"] is not None],
                           prompt_tokens=[p["prompt_tokens"] for p in plan if p["messages"] is not None])
    est["calls"] += len(dnf)
    est["does_not_fit"] += len(dnf)
    return est


def localize(ws: Workspace, gateway: llm.Gateway, k: int = 10, name: str | None = None,
             rungs: list[str] | None = None, limit: int | None = None, batch_size: int = 8,
             progress: llm.ProgressFn | None = None, id_rule: str = DOCID) -> str:
    """Run localization over the ladder and store it as run ``name`` (kind ``localize``); resumable. ``id_rule``
    (recorded in the run's config and each row's detail) says how replies are read: see :func:`read_ids`."""
    if id_rule not in ID_RULES:
        raise EmbSError(f"unknown id rule {id_rule!r}", fix=f"use one of: {', '.join(ID_RULES)}.")
    gateway.check_credentials()
    gateway, asked = structured.asking(gateway, structured.LOCALIZE)  # ids under a JSON schema where supported
    prompt = protocol.load_prompt("localize")
    name = name or default_name(gateway.model, k)
    config = {"model": gateway.model, "k": k, "prompt_version": prompt.version, "prompt_sha": prompt.digest,
              "id_rule": id_rule, **({"structured": True} if asked else {}),
              "window": gateway.window,
              "max_tokens": gateway.max_tokens, "temperature": gateway.temperature,
              provenance.LADDER_KEY: provenance.ladder_hashes(ladder_mod.load(ws))}
    existing = runs.get_run(ws, name)  # checked before planning so a changed config or ladder fails fast
    if existing is not None:
        provenance.check_resume("localization", name, existing["config"], config,
                                fix=f"pass a new --name, or delete the old run first (`emb-s runs delete {name}`).")
    plan = _plan(ws, gateway, k, rungs, limit, name, prompt)  # bad rungs / limit raise before anything is written
    if existing is None:
        runs.create_run(ws, name, KIND, gateway.model, config)
    for start in range(0, len(plan), batch_size):
        chunk = plan[start:start + batch_size]
        send = [p for p in chunk if p["messages"] is not None]
        gateway.usage.does_not_fit += len(chunk) - len(send)  # cells the plan found too big are never sent
        replies = dict(zip((id(p) for p in send),
                           gateway.complete_many([p["messages"] for p in send],
                                                 prompt_tokens=[p["prompt_tokens"] for p in send])))
        rows = []
        for p in chunk:
            result = replies.get(id(p)) or llm.CallResult(
                llm.DOES_NOT_FIT, prompt_tokens=p["prompt_tokens"],
                error=f"context {p['prompt_tokens']} tokens + {gateway.max_tokens} reply > window {gateway.window}")
            rows.append(_row(p, result, k, prompt.version, id_rule))
        runs.save_results(ws, name, rows)
        if progress:
            progress("localize", min(1.0, (start + len(chunk)) / len(plan)))
    return name


def _row(entry: dict, result: llm.CallResult, k: int, prompt_version: str, id_rule: str) -> dict:
    detail: dict[str, Any] = {"prompt_version": prompt_version, "id_rule": id_rule, **result.to_detail()}
    if result.status != llm.OK:
        status = runs.DOES_NOT_FIT if result.status == llm.DOES_NOT_FIT else runs.ERROR
        return {"rung": entry["rung"], "qid": entry["qid"], "doc_ids": [], "scores": None, "status": status,
                "detail": detail}
    ids, dropped = read_ids(structured.unwrap(structured.LOCALIZE, result.text), k, entry["context_ids"], id_rule)
    detail["audit"] = audit(result.text, ids, entry["context_ids"], entry["context"], dropped)
    detail["reply"] = (result.text or "")[:2000]
    return {"rung": entry["rung"], "qid": entry["qid"], "doc_ids": ids, "scores": None, "status": runs.OK,
            "detail": detail}


def audit_summary(ws: Workspace, run: str) -> pd.DataFrame:
    """Per rung: calls, does-not-fit, errors, replies without ids, with document text, with invented ids."""
    import json

    res = runs.load_results(ws, runs=[run])
    details = [json.loads(d) if isinstance(d, str) else {} for d in res["detail"]]
    audits = [d.get("audit") or {} for d in details]
    df = pd.DataFrame({
        "rung": res["rung"], "status": res["status"],
        "no_ids": [bool(a.get("no_ids")) for a in audits],
        "document_text": [bool(a.get("document_text")) for a in audits],
        "invented_ids": [int(a.get("n_not_in_context", 0)) > 0 for a in audits],
        "decimals_dropped": [bool(a.get("dropped_decimals")) for a in audits],
        "prompt_tokens": [int(d.get("prompt_tokens") or 0) for d in details],
        "cost": [float(d.get("cost") or 0.0) for d in details],
    })
    if df.empty:
        return pd.DataFrame(columns=["rung", "calls", "ok", "does_not_fit", "error", "no_ids", "document_text",
                                     "invented_ids", "decimals_dropped", "prompt_tokens", "cost"])
    out = df.groupby("rung", sort=False).agg(
        calls=("status", "size"), ok=("status", lambda s: int((s == runs.OK).sum())),
        does_not_fit=("status", lambda s: int((s == runs.DOES_NOT_FIT).sum())),
        error=("status", lambda s: int((s == runs.ERROR).sum())),
        no_ids=("no_ids", "sum"), document_text=("document_text", "sum"), invented_ids=("invented_ids", "sum"),
        decimals_dropped=("decimals_dropped", "sum"), prompt_tokens=("prompt_tokens", "sum"), cost=("cost", "sum"))
    return out.reset_index()
