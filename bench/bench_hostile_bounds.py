"""Benchmark (not a test): the multi-GB hostile inputs of issue 33, each refused early in bounded memory.

Each case runs in a child process whose address space is capped (``RLIMIT_AS``, default 3 GiB: before these bounds
every case passed 2-8 GB), so a regression ends in MemoryError instead of taking the shared machine down. Reported:
wall seconds to the outcome, the child's peak RSS, and the one line it printed.

1. Parquet: one dictionary-encoded 8 MiB string over 2,000 rows (a ~12 KB file that decodes to 16 GB).
2. Parquet: one 200 MB text cell (a ~7 KB file).
3. A 300 MB chat reply to 32 tokens asked, from a server in another process.
4. A 300 MB embedding reply to 2 texts.
5. A TREC run of ``--trec-lines`` lines (default 2,000,000), read under the stated run_lines limit set to half of it
   (refused at the limit), and read whole with the default limit (time and memory per million lines).

Run from the repository root:  nice python3 bench/bench_hostile_bounds.py [--cap-gib 3] [--trec-lines 2000000]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SERVER = textwrap.dedent("""
    import sys, time
    from testkit.http import MisbehavingEndpoint
    ep = MisbehavingEndpoint(lifetime_s=600, hang_s=60, huge_bytes=300 << 20)
    print(ep.port, flush=True)
    time.sleep(600)
""")

#: the import each Parquet case measures, in a fresh process (making the file is not measured)
IMPORT = """
    from emb_s_core import bank
    d = next(p for p in WORK.iterdir() if p.is_dir())
    SIZE = (d / "documents.parquet").stat().st_size
    START()
    bank.import_path(WORK / "ws", "native", d)
"""

CASES = {
    "parquet-dictionary-bomb": """
        import pyarrow as pa, pyarrow.parquet as pq
        from emb_s_core import bank
        from tests.conftest import write_jsonl
        d = WORK / "bomb"; d.mkdir()
        big = "x" * (8 << 20)
        pq.write_table(pa.table({"doc_id": pa.array(range(2000), pa.int64()),
                                 "text": pa.DictionaryArray.from_arrays(pa.array([0] * 2000, pa.int32()),
                                                                        pa.array([big]))}),
                       d / "documents.parquet", compression="zstd")
        del big
        write_jsonl(d / "queries.jsonl", [{"qid": "q1", "text": "Q?", "answer": "a", "ref_ids": [0]}])
    """,
    "parquet-200MB-cell": """
        import pyarrow as pa, pyarrow.parquet as pq
        from emb_s_core import bank
        from tests.conftest import write_jsonl
        d = WORK / "cell"; d.mkdir()
        pq.write_table(pa.table({"doc_id": [0], "text": ["y" * (200 << 20)]}), d / "documents.parquet",
                       compression="zstd", use_dictionary=False)
        write_jsonl(d / "queries.jsonl", [{"qid": "q1", "text": "Q?", "answer": "a", "ref_ids": [0]}])
    """,
    "chat-300MB-reply": """
        from emb_s_core import llm
        gw = llm.Gateway("openai/fake", cache_path=WORK / "cache.sqlite", context_window=4096, max_tokens=32,
                         timeout=60, max_retries=2, params={"api_base": f"http://127.0.0.1:{PORT}/huge/v1"})
        llm.load_litellm()
        SIZE = 300 << 20
        START()
        result = gw.complete([{"role": "user", "content": "hello"}], prompt_tokens=5)
        raise SystemExit(f"{result.status}: {result.error}")
    """,
    "embedding-300MB-reply": """
        from emb_s_core import llm, retrievers
        llm.load_litellm()
        r = retrievers.get("dense:litellm/openai/fake", api_base=f"http://127.0.0.1:{PORT}/huge/v1", timeout=60,
                           retries=2)
        SIZE = 300 << 20
        START()
        r.embedder.encode(["alpha", "beta"])
    """,
}

TREC = """
    import os
    from pathlib import Path
    from emb_s_core import external
    f = Path(os.environ["TREC_FILE"])
    SIZE = f.stat().st_size
    START()
    out = external.read_trec(f)
    raise SystemExit(f"read {sum(len(r.doc_ids) for r in out):,} ranked entries of {len(out):,} queries")
"""

HARNESS = textwrap.dedent("""
    import json, os, resource, sys, time
    from pathlib import Path
    sys.path.insert(0, os.getcwd())
    cap = int(os.environ["CAP_BYTES"])
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    WORK = Path(os.environ["WORK"])
    PORT = os.environ.get("PORT")
    SIZE = 0
    T0 = [time.monotonic()]
    def START():
        T0[0] = time.monotonic()
    outcome = "finished"
    try:
    {body}
    except BaseException as exc:
        outcome = " ".join(str(exc).split())[:220] or type(exc).__name__
    print(json.dumps({{"seconds": round(time.monotonic() - T0[0], 2),
                      "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                      "input_bytes": SIZE, "outcome": outcome}}))
""")


def run_case(body: str, cap: int, env_extra: dict[str, str]) -> dict:
    with tempfile.TemporaryDirectory() as work:
        env = {**os.environ, "PYTHONPATH": str(REPO), "CAP_BYTES": str(cap), "WORK": work, **env_extra}
        if body.lstrip().startswith("import pyarrow"):  # make the file in one process, import it in another
            make = HARNESS.format(body=textwrap.indent(textwrap.dedent(body), "    "))
            subprocess.run([sys.executable, "-c", make], cwd=REPO, env={**env, "CAP_BYTES": str(8 << 30)},
                           capture_output=True, text=True, timeout=900, check=True)
            body = IMPORT
        script = HARNESS.format(body=textwrap.indent(textwrap.dedent(body), "    "))
        out = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                             timeout=900)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {"outcome": f"child failed: {out.stderr.strip()[-300:]}"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cap-gib", type=float, default=3.0)
    parser.add_argument("--trec-lines", type=int, default=2_000_000)
    args = parser.parse_args()
    cap = int(args.cap_gib * (1 << 30))
    server = subprocess.Popen([sys.executable, "-c", SERVER], cwd=REPO, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        port = server.stdout.readline().strip()
        for name, body in CASES.items():
            print(name, json.dumps(run_case(body, cap, {"PORT": port})), flush=True)
    finally:
        server.kill()
        server.wait()
    with tempfile.TemporaryDirectory() as tmp:
        trec = Path(tmp) / "run.trec"
        with open(trec, "w") as fh:
            per_query = 1000
            for q in range(args.trec_lines // per_query):
                fh.writelines(f"q{q} Q0 {d} {d + 1} {1.0 / (d + 1):.6f} sys\n" for d in range(per_query))
        half = str(args.trec_lines // 2)
        print(f"trec-{args.trec_lines}-lines-limit-{half}",
              json.dumps(run_case(TREC, cap, {"TREC_FILE": str(trec), "EMB_S_MAX_RUN_LINES": half})), flush=True)
        print(f"trec-{args.trec_lines}-lines-default-limit",
              json.dumps(run_case(TREC, cap, {"TREC_FILE": str(trec)})), flush=True)
    print(f"(address space capped at {args.cap_gib:g} GiB per case; load {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores; resource {resource.__name__})")


if __name__ == "__main__":
    main()
