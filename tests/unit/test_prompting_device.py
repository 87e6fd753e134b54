"""Prompts as part of the model (resolution order, presets as data, specs that carry them) and the device choice
(torch's availability mocked: no GPU here)."""
from __future__ import annotations

import types

import pytest

from emb_s_core import retrievers, runs
from emb_s_core.errors import EmbSError
from emb_s_core.llm.rerank import ServedReranker
from emb_s_core.retrievers import device, prompting
from emb_s_core.retrievers.prompting import PromptOptions, resolve


def test_resolution_order_given_then_own_config_then_preset_then_none():
    own = ("Q: ", "D: ")
    assert resolve("/models/mine", PromptOptions(), own) == prompting.Prompts("Q: ", "D: ", "model config")
    e5 = resolve("intfloat/e5-small-v2", PromptOptions())
    assert (e5.query, e5.document, e5.source) == ("query: ", "passage: ", "preset e5 (by model name)")
    # the model's own config wins over a name match; what the user gives wins over both
    assert resolve("intfloat/e5-small-v2", PromptOptions(), own).source == "model config"
    given = resolve("intfloat/e5-small-v2", PromptOptions(query="ask: "), own)
    assert (given.query, given.document, given.source) == ("ask: ", "", "given")
    assert resolve("intfloat/e5-small-v2", PromptOptions(preset="none"), own).empty
    assert resolve("/models/plain", PromptOptions()).empty and resolve("/models/plain", PromptOptions()).config() == {}
    # a preset with an explicit document prompt on top
    mixed = resolve("x", PromptOptions(preset="nomic", document=""))
    assert (mixed.query, mixed.document, mixed.source) == ("search_query: ", "", "preset nomic + given")


def test_presets_are_rows_of_data_and_instructions_fill_their_template():
    assert resolve("Qwen/Qwen3-Embedding-8B", PromptOptions()).query == \
        "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"
    q = resolve("Qwen/Qwen3-Embedding-8B", PromptOptions(preset="qwen3-embedding", instruction="Find the memory"))
    assert (q.query, q.document) == ("Instruct: Find the memory\nQuery:", "")
    assert resolve("m", PromptOptions(instruction="Find it")).query == "Instruct: Find it\nQuery: "
    assert resolve("BAAI/bge-small-en-v1.5", PromptOptions()).query.startswith("Represent this sentence")
    assert resolve("nomic-ai/nomic-embed-text-v1.5", PromptOptions()).document == "search_document: "
    assert resolve("intfloat/multilingual-e5-large-instruct", PromptOptions()).source.startswith("preset e5-instruct")
    assert resolve("thenlper/gte-base", PromptOptions()).empty  # GTE v1 takes no prompts (its row says so)
    with pytest.raises(EmbSError, match="unknown prompt preset 'e6'.*e5"):
        resolve("m", PromptOptions(preset="e6"))


def test_own_config_names_and_default_prompt():
    assert prompting.own_prompts({"query": "q: ", "passage": "p: "}, None) == ("q: ", "p: ")
    assert prompting.own_prompts({"search_query": "sq: ", "search_document": "sd: "}, None) == ("sq: ", "sd: ")
    assert prompting.own_prompts({"query": "", "document": ""}, None) is None  # sentence-transformers' empty slots
    assert prompting.own_prompts({"classification": "c: "}, "classification") == ("c: ", "c: ")
    assert prompting.own_prompts({}, None) is None


def test_served_models_get_input_type_not_a_guess():
    # a served model is never given a preset from its name: the server may prefix on its own
    assert resolve("openai/multilingual-e5-small-q4", PromptOptions(), served=True).empty
    p = resolve("openai/e5", PromptOptions(input_type="query,passage"), served=True)
    assert (p.query, p.document, p.query_input_type, p.document_input_type) == ("", "", "query", "passage")
    cohere = resolve("cohere/embed-english-v3.0", PromptOptions(preset="e5"), served=True)
    assert (cohere.query, cohere.query_input_type, cohere.document_input_type) == \
        ("", "search_query", "search_document")
    text = resolve("openai/e5", PromptOptions(preset="e5"), served=True)
    assert (text.query, text.document, text.query_input_type) == ("query: ", "passage: ", None)
    with pytest.raises(EmbSError, match="input type 'query'"):
        resolve("openai/e5", PromptOptions(input_type="query"), served=True)


def test_document_prompt_keys_the_cache_and_prompts_are_the_runs_identity():
    a, b = prompting.Prompts("q: ", "p: ", "given"), prompting.Prompts("other: ", "p: ", "given")
    assert a.cache_tag() == b.cache_tag() != "" and prompting.Prompts("q: ", "", "given").cache_tag() == ""
    assert prompting.Prompts("q: ", "x: ").cache_tag() != a.cache_tag()
    assert a.config() != b.config()
    summary = runs.prompt_summary({"retriever": {"spec": "dense:m", **a.config()}})
    assert summary == "query 'q: ', document 'p: ' (given)"
    assert runs.prompt_summary({"retriever": {"spec": "bm25"}}) == ""


def test_prompt_options_fold_into_the_spec_and_read_back():
    spec, rest = retrievers.fold_options("dense:/m/e5", {"prompts": "e5", "query_prompt": "a b+c:d\n", "k": 1})
    assert rest == {"k": 1} and " " not in spec and "\n" not in spec
    model, opts = prompting.split_options(spec[len("dense:"):], retrievers.PROMPT_KEYS)
    assert (model, opts) == ("/m/e5", {"prompts": "e5", "query_prompt": "a b+c:d\n"})
    hybrid, _ = retrievers.fold_options("hybrid:bm25+dense:/m/e5", {"prompts": "e5"})
    assert hybrid == "hybrid:bm25+dense:/m/e5?prompts=e5"
    assert retrievers.get(hybrid).parts[1].spec == "dense:/m/e5?prompts=e5"
    reranked, _ = retrievers.fold_options("rerank:litellm/q3:dense:/m/e5", {"prompts": "e5",
                                                                           "rerank_instruction": "Find: it"})
    assert reranked == "rerank:litellm/q3?rerank_instruction=Find%3A%20it:dense:/m/e5?prompts=e5"
    r = retrievers.get(reranked, api_base="http://127.0.0.1:9")
    assert r.served.instruction == "Find: it" and r.base.spec == "dense:/m/e5?prompts=e5"
    assert retrievers.fold_options("bm25", {"prompts": "e5"})[0] == "bm25"
    with pytest.raises(EmbSError, match="cannot read the options after"):
        retrievers.get("dense:/m/e5?colour=red")
    with pytest.raises(EmbSError, match="takes no prompts"):
        retrievers.get("dense:minilm-l3?prompts=e5")
    with pytest.raises(EmbSError, match="unknown prompt preset 'e6'"):
        retrievers.get("dense:/no/such/model", prompts="e6")  # before any model is looked for
    with pytest.raises(EmbSError, match="input_type applies to served embedders"):
        retrievers.get("dense:/m/e5", input_type="query,passage")


def test_llm_reranker_templates_are_data():
    qwen = ServedReranker("Qwen/Qwen3-Reranker-8B", api_base="http://x")
    q, docs = qwen.formatted("who?", ["a {b}"])
    assert q.endswith("<Instruct>: Given a web search query, retrieve relevant passages that answer the query\n"
                      "<Query>: who?\n") and q.startswith("<|im_start|>system")
    assert docs == ["<Document>: a {b}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"]
    assert qwen.config() == {"template": "qwen3", "instruction": qwen.instruction}
    plain = ServedReranker("bge-reranker-v2-m3", api_base="http://x")
    assert plain.formatted("who?", ["a"]) == ("who?", ["a"]) and plain.config() == {}
    told = ServedReranker("bge-reranker-v2-m3", api_base="http://x", instruction="Find the memory")
    assert told.formatted("who?", ["a"])[0] == "<Instruct>: Find the memory\n<Query>: who?"
    with pytest.raises(EmbSError, match="unknown reranker template"):
        ServedReranker("m", api_base="http://x", template="qwen4")


# ------------------------------------------------------------------------------------------------ device
def _fake_torch(cuda: bool, mps: bool = False, count: int = 1, gib: float = 16):
    props = types.SimpleNamespace(total_memory=int(gib * 2 ** 30))
    return types.SimpleNamespace(
        cuda=types.SimpleNamespace(is_available=lambda: cuda, device_count=lambda: count if cuda else 0,
                                   get_device_properties=lambda i: props),
        backends=types.SimpleNamespace(mps=types.SimpleNamespace(is_available=lambda: mps)))


def test_device_choice_follows_what_torch_reports(monkeypatch):
    monkeypatch.delenv(device.ENV, raising=False)
    monkeypatch.setattr(device, "_torch", lambda: _fake_torch(cuda=True))
    assert device.choose() == "cuda" and device.choose("cpu") == "cpu" and device.choose("cuda:0") == "cuda:0"
    assert device.half_precision("cuda") and not device.half_precision("cpu")
    assert device.batch_size("cuda") == 512 and device.batch_size("cpu") == 64
    with pytest.raises(EmbSError, match="sees 1 CUDA device"):
        device.choose("cuda:1")
    monkeypatch.setattr(device, "_torch", lambda: _fake_torch(cuda=False, mps=True))
    assert device.choose() == "mps"
    monkeypatch.setattr(device, "_torch", lambda: _fake_torch(cuda=False))
    assert device.choose() == "cpu"  # the fallback
    with pytest.raises(EmbSError, match="torch reports no CUDA device.*--device cpu"):
        device.choose("cuda")
    monkeypatch.setenv(device.ENV, "gpu")
    with pytest.raises(EmbSError, match="unknown device 'gpu'"):
        device.choose()


def test_local_models_load_on_the_chosen_device(monkeypatch):
    """With CUDA reported, the embedder loads on cuda (half precision, device-sized batches) and its progress says
    so; the load itself is redirected to the CPU, since this machine has no GPU."""
    from emb_s_core.retrievers import embedders

    monkeypatch.delenv(device.ENV, raising=False)
    monkeypatch.setattr(device, "_torch", lambda: _fake_torch(cuda=True, gib=8))
    asked = []
    real = embedders._load_st

    def load(name, where="cpu"):
        asked.append(where)
        return real(name, "cpu")

    monkeypatch.setattr(embedders, "_load_st", load)
    e = embedders.SentenceTransformerEmbedder(str(embedders.minilm_l6_path()))
    assert asked == ["cuda"] and e.device == "cuda" and e.batch_size == 256 and e.encode_step == 1024
    cpu = embedders.SentenceTransformerEmbedder(str(embedders.minilm_l6_path()), device="cpu")
    assert asked[-1] == "cpu" and cpu.batch_size == 64
    # half precision is other numbers: its own cache table and a run identity that says so; float32 keeps its key
    assert e.precision == "float16" and e.key == cpu.key + "@fp16" and cpu.precision == "float32"
    gpu_run, cpu_run = retrievers.get("dense:minilm-l6"), retrievers.get("dense:minilm-l6", device="cpu")
    assert gpu_run.config()["precision"] == "float16" and "precision" not in cpu_run.config()
    assert gpu_run.table != cpu_run.table
    assert runs.prompt_summary({"retriever": gpu_run.config()}) == "embedder in half precision (float16)"
    assert runs.prompt_summary({"retriever": cpu_run.config()}) == ""
    # a Ray actor on a GPU computes in the driver's precision (what the cache key it writes under says)
    e.use_device("cpu", "float32")
    assert e.precision == "float32" and e.device == "cpu" and next(e.model.parameters()).dtype.is_floating_point

    from emb_s_core.retrievers import rerank

    seen = []
    monkeypatch.setattr(rerank, "_load_cross_encoder", lambda path, where="cpu": seen.append(where))
    r = retrievers.get(f"rerank:{embedders.minilm_l6_path()}:bm25")
    r.check()
    assert seen == ["cuda"] and r.device == "cuda" and r.config()["precision"] == "float16"
    cpu_rerank = retrievers.get(f"rerank:{embedders.minilm_l6_path()}:bm25", device="cpu")
    cpu_rerank.check()
    assert "precision" not in cpu_rerank.config()


def test_home_runs_table_shows_prompts_only_when_a_run_has_them():
    import json

    import pandas as pd

    from emb_s_core.analysis import run_state

    cfg = {"retriever": {"spec": "dense:m", "query_prompt": "query: ", "document_prompt": "passage: ",
                         "prompt_source": "preset e5 (by model name)"}}
    table = pd.DataFrame({"run": ["e5", "bm25"], "kind": "retriever", "system": ["dense:m", "bm25"],
                          "created_at": "", "config": [json.dumps(cfg), json.dumps({"retriever": {"spec": "bm25"}})]})
    states = pd.DataFrame({"run": ["e5", "bm25"], "label": "complete"})
    out = run_state.annotate(table, states).set_index("run")
    assert out.loc["e5", "prompts"] == "query 'query: ', document 'passage: ' (preset e5 (by model name))"
    assert out.loc["bm25", "prompts"] == ""
    assert "prompts" not in run_state.annotate(table.iloc[1:], states).columns
