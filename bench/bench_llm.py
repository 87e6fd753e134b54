"""Evidence-use benchmarks: gateway overhead (cache hits, mocked calls), window-check token counting, and the
offline local model (load, localization with and without prefix reuse, retrieve-then-generate QA).

    python3 bench/bench_llm.py            # prints a Markdown block for bench/RESULTS.md

Not part of the test suite. Uses the tiny fact bank of the tests (base rung 2K tokens).
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from emb_s_core import ladder, llm, localize, protocol  # noqa: E402
from testkit.use_bank import make_workspace  # noqa: E402


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main() -> None:
    rows: list[tuple[str, str]] = []
    tmp = Path(tempfile.mkdtemp(prefix="bench-llm-"))
    ws = make_workspace(tmp)

    # gateway: mocked calls and cache hits (what a rerun costs)
    _, t_import = timed(llm.load_litellm)
    rows.append(("litellm import (once per process)", f"{t_import:.1f} s"))
    gw = llm.Gateway("gpt-4o-mini", cache_path=tmp / "c.sqlite", params={"mock_response": "12, 7"}, concurrency=4)
    batch = [[{"role": "user", "content": f"question {i}"}] for i in range(200)]
    _, t_mock = timed(lambda: gw.complete_many(batch))
    rows.append(("mocked litellm calls, 4 threads (gateway + litellm overhead)", f"{1000 * t_mock / 200:.1f} ms/call"))
    _, t_hit = timed(lambda: gw.complete_many(batch))
    rows.append(("cache hits (a rerun)", f"{1000 * t_hit / 200:.2f} ms/call"))

    # window check: counting an 8K-token rung context
    docs = protocol.documents_by_id(ws)
    lad = ladder.load(ws)
    ctx8 = protocol.context_of(docs, lad.rung("8K").doc_ids)
    msg8 = [{"role": "user", "content": ctx8}]
    n8, t_count = timed(lambda: gw.count_tokens(msg8))
    rows.append((f"token count, litellm counter, {n8:,}-token context", f"{1000 * t_count:.0f} ms"))

    # local model
    _, t_conv = timed(llm.ensure_local_model)
    rows.append(("local model: convert GGUF → HF folder (0 s when cached)", f"{t_conv:.1f} s"))
    local = llm.Gateway.for_workspace(ws, llm.LOCAL_MODEL, max_tokens=24)
    n8l, t_count_l = timed(lambda: local.count_tokens(msg8))
    rows.append(("local tokenizer: first count (loads the tokenizer)", f"{1000 * t_count_l:.0f} ms"))
    _, t_count_l2 = timed(lambda: local.count_tokens(msg8))
    rows.append((f"token count, local tokenizer, {n8l:,}-token context", f"{1000 * t_count_l2:.0f} ms"))
    _, t_load = timed(lambda: llm.local_generate([{"role": "user", "content": "Hi"}], 1))
    rows.append(("local model: first call (load + 1 token)", f"{t_load:.1f} s"))

    rung = lad.rung("2K/geography")
    prompt = protocol.load_prompt("localize")
    context = protocol.context_of(docs, rung.doc_ids)
    qs = ws.read_pandas("queries", ["qid", "text"]).set_index("qid")["text"]
    msgs = [localize.messages_for(prompt, qs[q], context, 5) for q in sorted(rung.qids)[:4]]
    n_prompt = local.count_tokens(msgs[0])
    llm.forget_prefix()
    cold = []
    for m in msgs[:2]:
        llm.forget_prefix()  # no reuse
        cold.append(timed(lambda: llm.local_generate(m, 24))[1])
    llm.forget_prefix()
    timed(lambda: llm.local_generate(msgs[0], 24))
    warm = [timed(lambda: llm.local_generate(m, 24))[1] for m in msgs[1:]]
    rows.append((f"localization call, {n_prompt:,}-token prompt, no prefix reuse",
                 f"{statistics.mean(cold):.1f} s/query"))
    rows.append((f"localization call, {n_prompt:,}-token prompt, rung prefix reused",
                 f"{statistics.mean(warm):.1f} s/query"))
    qa_prompt = protocol.load_prompt("qa")
    rag = [[{"role": "user", "content": qa_prompt.render(context=protocol.context_of(docs, list(rung.doc_ids[:3])),
                                                         question=qs[q])}] for q in sorted(rung.qids)[:4]]
    t_rag = [timed(lambda: llm.local_generate(m, 12))[1] for m in rag]
    rows.append((f"retrieve-then-generate QA call, k=3 ({local.count_tokens(rag[0])} tokens), 12 reply tokens",
                 f"{statistics.mean(t_rag):.1f} s/query"))

    print(f"threads for the local model: {llm.local_threads()}; load average {os.getloadavg()[0]:.1f}")
    print()
    print("| measurement | result |")
    print("|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
