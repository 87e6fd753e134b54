"""The demo bank generator: deterministic, eight domains, adversarial hard negatives, multi-source queries, honest
filler, natural-looking prose, and a clean import into a real workspace."""
from __future__ import annotations

import collections
import json
import os
import re

import numpy as np
import pytest

from emb_s_core import bank as bank_mod
from emb_s_core import tokens
from emb_s_core.errors import EmbSError
from emb_s_core.schema import render_document
from emb_s_core.sources import FORMATS, read_bank
from emb_s_core.sources import synthetic as syn
from emb_s_core.sources import synthetic_lexicon as L
from emb_s_core.store import Workspace

SIZE = 150_000


@pytest.fixture(scope="module")
def demo():
    return syn.generate(SIZE, seed=0)


def _fingerprint(b):
    return ([(d.doc_id, d.title, d.text, d.domain, d.n_tokens) for d in b.documents],
            [(q.qid, q.text, q.answer, q.ref_ids, q.hard_negative_ids, q.task_type) for q in b.queries])


def test_same_seed_same_bank_other_seed_other_bank(demo):
    again = syn.generate(SIZE, seed=0)
    assert _fingerprint(again) == _fingerprint(demo)
    other = syn.generate(SIZE, seed=1)
    texts, other_texts = {d.text for d in demo.documents}, {d.text for d in other.documents}
    assert len(texts & other_texts) == 0
    assert {q.text for q in demo.queries}.isdisjoint(q.text for q in other.queries)


def test_size_domains_and_validity(demo):
    demo.validate()
    total = sum(d.n_tokens for d in demo.documents)
    assert abs(total - SIZE) / SIZE < 0.01
    assert {d.domain for d in demo.documents} == set(syn.DOMAIN_NAMES)
    assert set(syn.DOMAIN_NAMES) == {"medical", "history", "education", "math", "literature", "law", "technology",
                                     "finance"}
    per_domain = collections.Counter(q.domain for q in demo.queries)
    assert set(per_domain) == set(syn.DOMAIN_NAMES)
    assert min(per_domain.values()) == syn.queries_per_domain(SIZE)
    # documents are shuffled: gold documents are not the lowest ids
    gold = sorted({i for q in demo.queries for i in q.ref_ids})
    assert gold[-1] > len(demo.documents) * 0.8


def test_length_distribution(demo):
    n = np.array([d.n_tokens for d in demo.documents])
    assert n.min() >= 60 and n.max() <= 700
    p5, p50, p95 = np.percentile(n, [5, 50, 95])
    assert 80 <= p5 < 160 and 180 <= p50 <= 350 and 400 <= p95 <= 620


def test_task_mix_and_gold_counts(demo):
    types = collections.Counter(q.task_type for q in demo.queries)
    assert set(types) == set(syn.TASK_TYPES)
    multi = [q for q in demo.queries if len(q.ref_ids) > 1]
    assert 0.28 <= len(multi) / len(demo.queries) <= 0.4
    assert all(2 <= len(q.ref_ids) <= 4 for q in multi)
    assert {q.task_type for q in multi} == {"multi-split", "comparison", "bridge"}
    assert all(len(q.ref_ids) == 1 for q in demo.queries if q.task_type == "single-fact")
    assert collections.Counter(len(q.ref_ids) for q in multi).keys() >= {2, 3}


def _entity(title: str) -> str:
    return title.split(":")[0].lower()


def _related(a: str, b: str) -> bool:
    """Same subject, a sibling sharing its stem, or a namesake sharing the surname."""
    return bool(set(a.split()) & set(b.split())) or len(os.path.commonprefix([a, b])) >= 4


def test_every_query_has_near_miss_hard_negatives_without_the_answer(demo):
    docs = demo.documents
    for q in demo.queries:
        assert q.hard_negative_ids, q.qid
        pattern = syn.answer_pattern(q.answer)
        gold_entities = [_entity(docs[i].title) for i in q.ref_ids]
        for i in q.hard_negative_ids:
            hn = docs[i]
            assert not pattern.search(render_document(hn.title, hn.text)), (q.qid, i)
            assert any(_related(_entity(hn.title), g) for g in gold_entities), (q.qid, hn.title, gold_entities)
            assert hn.domain == q.domain
            if ":" not in hn.title:  # a person's profile: the namesake is another person
                assert hn.title not in {docs[g].title for g in q.ref_ids}
        stated = [i for i in q.ref_ids if pattern.search(docs[i].text)]
        if q.task_type == "multi-split":  # a sum: no single document states it
            assert stated == []
        else:
            assert len(stated) == 1


def _constraint_words(question: str) -> set[str]:
    """The words of a question that come from the bank, not from the question templates: subject, year, place."""
    template_words = set()
    for lex in L.DOMAINS:
        for t in (*lex.role_asks, *lex.attrs[0].asks, *lex.attrs[1].asks):
            template_words.update(re.findall(r"[\w'-]+", t.lower()))
    return {w for w in re.findall(r"[\w'-]+", question) if w.lower() not in template_words and not w.startswith("{")}


def test_hard_negatives_differ_from_gold_by_one_constraint(demo):
    """A single-fact question names subject, year and place; the gold document has all of them, each hard negative
    all but (at most) one: lexically it is as close to the question as the gold."""
    docs = demo.documents
    checked = 0
    for q in demo.queries:
        if q.task_type != "single-fact":
            continue
        words = _constraint_words(q.text)
        assert 3 <= len(words) <= 5, (q.text, words)
        words = {w.lower().removesuffix("'s") for w in words}
        gold = docs[q.ref_ids[0]].text.lower()
        assert all(w in gold for w in words), (q.text, words)
        for i in q.hard_negative_ids:
            hn = render_document(docs[i].title, docs[i].text).lower()
            assert sum(w in hn for w in words) >= len(words) - 1, (q.text, words, hn)
            checked += 1
    assert checked > 50


def test_no_answer_leaks_into_other_documents(demo):
    """An answer string appears only in gold documents (of this or another question), never in filler or in this
    question's hard negatives."""
    used = {i for q in demo.queries for i in q.ref_ids} | {i for q in demo.queries for i in q.hard_negative_ids}
    filler = [d for d in demo.documents if d.doc_id not in used]
    assert len(filler) > len(demo.documents) / 3
    blob = "\n".join(render_document(d.title, d.text) for d in filler)
    for q in demo.queries:
        for ans in [q.answer, *q.answer_aliases]:
            assert not syn.answer_pattern(ans).search(blob), (q.qid, ans)


def test_vocabulary_and_sentence_variety(demo):
    words = collections.Counter(w.lower() for d in demo.documents for w in re.findall(r"[A-Za-z][A-Za-z'-]+", d.text))
    assert len(words) > 2500
    sentences = [s for d in demo.documents for s in re.split(r"(?<=[.?!])\s+", d.text.replace("\n\n", " "))]
    counts = collections.Counter(sentences)
    assert 1 - len(counts) / len(sentences) < 0.05  # duplicated sentence occurrences
    assert counts.most_common(1)[0][1] <= 0.002 * len(sentences) + 3
    first_words = collections.Counter(s.split(" ", 1)[0] for s in sentences)
    assert first_words.most_common(1)[0][1] < 0.3 * len(sentences) and len(first_words) > 200
    questions = collections.Counter(re.sub(r"[A-Z][\w'-]*|\d[\d,]*", "X", q.text) for q in demo.queries)
    assert len(questions) > len(demo.queries) / 3  # many distinct question shapes


def test_query_count_scales_with_size():
    assert syn.queries_per_domain(syn.DEFAULT_TOKENS) == syn.QUERIES_PER_DOMAIN
    assert syn.queries_per_domain(10 * syn.DEFAULT_TOKENS) == 10 * syn.QUERIES_PER_DOMAIN
    assert syn.queries_per_domain(syn.MIN_TOKENS) == 3


@pytest.mark.parametrize("args,message", [
    ({"tokens": 1000}, r"too small"),
    ({"tokens": 1.5e6}, r"not a whole number"),
    ({"seed": "x"}, r"seed 'x' is not an integer"),
    ({"encoding": "latin-1"}, r"unknown token encoding 'latin-1'"),
])
def test_bad_arguments(args, message):
    with pytest.raises(EmbSError, match=message):
        syn.generate(**{"tokens": SIZE, **args})


def test_imports_into_a_workspace(tmp_path, demo):
    ws = Workspace(tmp_path / "ws", create=True)
    report = bank_mod.add_bank(ws, demo, fmt="demo", path="generated", sha256="demo-seed-0")
    assert (report.n_documents, report.n_queries) == (len(demo.documents), len(demo.queries))
    summary = bank_mod.info(ws)
    assert set(summary["queries_per_domain"]) == set(syn.DOMAIN_NAMES)
    assert abs(summary["tokens"] - SIZE) / SIZE < 0.01
    assert summary["multi_source_queries"] == sum(len(q.ref_ids) > 1 for q in demo.queries)
    qs = bank_mod.queries(ws)
    assert set(qs["task_type"]) == set(syn.TASK_TYPES)
    # the generator's own counts are stored, not counted again, and they are the true counts
    docs = bank_mod.documents(ws, ["title", "text", "n_tokens"]).sample(50, random_state=0)
    assert docs["n_tokens"].tolist() == tokens.count_batch(
        [render_document(t, x) for t, x in zip(docs["title"], docs["text"])])


def test_demo_format_reads_an_options_file(tmp_path):
    assert FORMATS["demo"] == "synthetic"
    opts = tmp_path / "demo.json"
    opts.write_text(json.dumps({"tokens": "64K", "seed": 3}))
    ws_dir = tmp_path / "ws"
    report = bank_mod.import_path(ws_dir, "demo", opts)
    direct = syn.generate(64 * 1024, seed=3)
    assert report.n_documents == len(direct.documents) and report.source == "demo"
    docs = bank_mod.documents(Workspace(ws_dir), ["text"])
    assert docs["text"].tolist() == [d.text for d in direct.documents]
    again = bank_mod.import_path(ws_dir, "demo", opts)  # same options file: nothing to do
    assert again.already_imported


@pytest.mark.parametrize("content,message", [
    ('{"tokens": "lots"}', r"cannot read token size 'lots'"),
    ('{"size": "1M"}', r"demo.json: unknown demo option\(s\) \['size'\]"),
    ('[1, 2]', r"demo.json: the demo options must be a JSON object"),
    ('{"tokens": ', r"demo.json line 1: malformed JSON"),
    ('{"tokens": 100}', r"too small"),
])
def test_bad_options_leave_the_workspace_unchanged(tmp_path, content, message):
    good = tmp_path / "good.json"
    good.write_text('{"tokens": "64K"}')
    ws_dir = tmp_path / "ws"
    bank_mod.import_path(ws_dir, "demo", good)
    version = Workspace(ws_dir).version
    bad = tmp_path / "demo.json"
    bad.write_text(content)
    with pytest.raises(EmbSError, match=message):
        bank_mod.import_path(ws_dir, "demo", bad)
    assert Workspace(ws_dir).version == version
    with pytest.raises(EmbSError, match=r"demo options file is a folder, expected a file"):
        read_bank("demo", tmp_path)


def test_answer_pattern_matches_whole_values_only():
    pat = syn.answer_pattern("412")
    assert pat.search("The trial enrolled 412 participants.")
    assert pat.search("It had 412.")
    for text in ("It enrolled 1,412 people.", "about 4125 people", "412,000 euros", "version 3.412"):
        assert not pat.search(text), text
    assert syn.answer_pattern("Ilse Varga").search("led by Ilse Varga, its principal investigator")
    assert not syn.answer_pattern("Ilse Varga").search("led by Ilse Vargason")


def test_generator_self_check_rejects_a_leaking_hard_negative(demo):
    """_verify is what makes the hard negatives 'verified': it must fail when one states the answer."""
    from emb_s_core.schema import Document, Query

    q = next(q for q in demo.queries if q.task_type == "single-fact")
    docs = {i: demo.documents[i] for i in q.ref_ids + q.hard_negative_ids}
    syn._verify(q, docs)  # the real query passes
    hn = q.hard_negative_ids[0]
    leaky = dict(docs)
    leaky[hn] = Document(doc_id=hn, text=docs[hn].text + f" In fact the answer was {q.answer}.", title=docs[hn].title)
    with pytest.raises(RuntimeError, match="states the answer"):
        syn._verify(q, leaky)
    no_hn = Query(qid="x", text=q.text, answer=q.answer, ref_ids=q.ref_ids, task_type="single-fact")
    with pytest.raises(RuntimeError, match="no hard negative"):
        syn._verify(no_hn, docs)


def test_cli_imports_the_demo_bank(tmp_path, capsys):
    from emb_s_core.cli import main

    opts = tmp_path / "demo.json"
    opts.write_text('{"tokens": "64K", "seed": 7}')
    assert main(["import", "--format", "demo", str(opts), "--workspace", str(tmp_path / "ws")]) == 0
    out = capsys.readouterr().out
    assert "queries as source 'demo'" in out
    assert main(["info", "--workspace", str(tmp_path / "ws"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert set(summary["queries_per_domain"]) == set(syn.DOMAIN_NAMES)
    assert summary["queries"] == 8 * syn.queries_per_domain(64 * 1024)


def test_a_crowded_value_range_stays_widened():
    """Once an attribute's range is full, it is widened for every later draw (generation stays linear in size)."""
    import random

    from emb_s_core.sources.synthetic import _Numbers
    from emb_s_core.sources.synthetic_lexicon import Attr

    attr = Attr(key="k", unit="u", lo=100, hi=199, facts=(), asks=(), total="")
    numbers = _Numbers(random.Random(0))
    numbers.used.update(range(100, 200))  # every value of the range is taken
    first = numbers.draw(attr)
    assert first >= 200 and numbers.hi["k"] >= 398
    calls = 0
    rng_randint = numbers.rng.randint

    def counting(a, b):
        nonlocal calls
        calls += 1
        return rng_randint(a, b)

    numbers.rng.randint = counting
    for _ in range(20):
        numbers.draw(attr)
    assert calls < 60  # about 2 tries per draw from the widened range, not 20+ from the full one
