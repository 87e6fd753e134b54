"""One writer at a time per workspace, across processes (DESIGN §4): real `emb-s` processes contend for the lock.

The test process holds the writer lock while it starts the writers, so they really overlap (each has said it waits)
before any of them can write; the end state must equal a single-process run.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pytest

from emb_s_core import runs
from emb_s_core.errors import EmbSError
from emb_s_core.store import LOCK_FILE, Workspace, lock_holder
from testkit.retrieval_bank import REPO, copy_workspace, template

CLI = [sys.executable, "-m", "emb_s_core.cli"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _start(args: list[str], log: Path) -> subprocess.Popen:
    fh = open(log, "w")
    return subprocess.Popen(CLI + args, cwd=REPO, env=_env(), stdout=fh, stderr=subprocess.STDOUT, text=True)


def _wait_for(predicate, what: str, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _report_csv(ws_path: Path) -> str:
    out = subprocess.run(CLI + ["report", "-w", str(ws_path), "--format", "csv", "--n-boot", "200"], cwd=REPO,
                         env=_env(), capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_concurrent_evals_of_same_and_different_runs_equal_one_process(tmp_path_factory, tmp_path):
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    single = copy_workspace(template(tmp_path_factory), tmp_path / "single")
    jobs = [["--name", "same"]] * 3 + [["--name", "other", "--k", "5"]]
    logs = [tmp_path / f"writer{i}.log" for i in range(len(jobs))]
    with ws.writer():  # hold the lock: every writer must queue behind it, so they all contend when it is released
        procs = [_start(["eval", "-w", str(ws.path), "--retriever", "bm25", "--k", "8", "--batch", "4", *extra], log)
                 for extra, log in zip(jobs, logs)]
        _wait_for(lambda: all("waiting for the writer lock" in log.read_text() for log in logs),
                  "every writer to report that it waits")
        text = logs[0].read_text()
        assert f"held by pid {os.getpid()}" in text and "since" in text
    for proc, log in zip(procs, logs):
        assert proc.wait(timeout=600) == 0, log.read_text()

    ws.refresh()
    raw = ws.read_pandas("results", ["run", "rung", "qid"])
    assert not raw.duplicated().any(), raw[raw.duplicated()].head()
    assert sorted(runs.list_runs(ws)["run"]) == ["other", "same"]

    from emb_s_core import evaluate

    evaluate.evaluate(single, "bm25", name="same", k=8, batch_size=4)
    evaluate.evaluate(single, "bm25", name="other", k=5, batch_size=4)
    assert len(raw) == len(single.read_pandas("results", ["run"]))
    # identical figures and intervals; rows are in run-creation order, which the race decides
    concurrent, sequential = _report_csv(ws.path).splitlines(), _report_csv(single.path).splitlines()
    assert concurrent[0] == sequential[0] and sorted(concurrent) == sorted(sequential)


def test_no_wait_fails_at_once_naming_the_holder(tmp_path_factory, tmp_path):
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    version = ws.version
    with ws.writer():
        out = subprocess.run(CLI + ["eval", "-w", str(ws.path), "--retriever", "bm25", "--k", "8", "--no-wait"],
                             cwd=REPO, env=_env(), capture_output=True, text=True, timeout=300)
        holder = lock_holder(ws.path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr
    assert f"is being written by pid {os.getpid()}" in lines[0] and "--no-wait" in lines[0]
    assert holder["pid"] == os.getpid() and holder["since"]
    assert Workspace(ws.path).version == version
    with ws.writer(wait=False):  # released: no stale holder left behind
        pass


HOLDER = textwrap.dedent("""
    import sys, time
    import pyarrow as pa
    from emb_s_core.store import Workspace
    ws = Workspace(sys.argv[1])
    with ws.transaction():
        ws.write("scratch", pa.table({"a": [1, 2, 3]}))
        ws.db.open_table("results").add(ws.read("results").slice(0, 5))  # duplicates, never committed
        print("holding", flush=True)
        time.sleep(600)
""")


def test_sigkilled_lock_holder_does_not_block_the_next_writer(tmp_path_factory, tmp_path):
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    from emb_s_core import evaluate

    evaluate.evaluate(ws, "bm25", name="base", k=8)
    ws.refresh()
    version, n_results = ws.version, len(ws.read("results"))
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(ws.path)], cwd=REPO, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "holding", proc.stderr.read()
    assert lock_holder(ws.path)["pid"] == proc.pid
    with pytest.raises(EmbSError, match=f"being written by pid {proc.pid}"):
        with ws.writer(wait=False):
            pass
    reader = Workspace(ws.path)  # readers never block and see only the committed version
    assert reader.version == version and not reader.has_table("scratch")
    assert len(reader.read("results")) == n_results
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)

    with ws.transaction():  # wait=False would fail if the dead holder's lock were still held
        ws.write("after", pa.table({"b": [1]}))
    assert ws.version == version + 1
    assert "scratch" not in ws.db.list_tables().tables  # the dead writer's leftovers were rolled back
    assert len(Workspace(ws.path).read("results")) == n_results


def test_writer_waits_for_holder_then_resumes_run(tmp_path_factory, tmp_path):
    """A second eval of a run started while the first holds the lock finishes it without recomputing or
    duplicating a cell (the finished cells are read after the lock is acquired)."""
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    from emb_s_core import evaluate

    log = tmp_path / "second.log"
    with ws.writer():
        evaluate.evaluate(ws, "bm25", name="r", k=8)
        proc = _start(["eval", "-w", str(ws.path), "--retriever", "bm25", "--k", "8", "--name", "r"], log)
        _wait_for(lambda: "waiting for the writer lock" in log.read_text(), "the second writer to wait")
        version = ws.version
    assert proc.wait(timeout=300) == 0, log.read_text()
    assert Workspace(ws.path).version == version  # it found the run finished: nothing written
    assert not Workspace(ws.path).read_pandas("results", ["run", "rung", "qid"]).duplicated().any()


def test_workspace_path_that_is_a_file(tmp_path):
    path = tmp_path / "passwd"
    path.write_text("root:x:0:0")
    for create in (False, True):
        with pytest.raises(EmbSError, match="is a file, not a folder"):
            Workspace(path, create=create)


def _mount_read_only(src: Path, dst: Path) -> bool:
    dst.mkdir()
    ok = subprocess.run(["mount", "--bind", str(src), str(dst)], capture_output=True).returncode == 0
    if ok and subprocess.run(["mount", "-o", "remount,ro,bind", str(dst)], capture_output=True).returncode != 0:
        subprocess.run(["umount", str(dst)], capture_output=True)
        ok = False
    return ok


def test_read_only_mount_reads_but_refuses_writes_clearly(tmp_path_factory, tmp_path):
    src = copy_workspace(template(tmp_path_factory), tmp_path / "ws").path
    (src / LOCK_FILE).unlink(missing_ok=True)
    ro = tmp_path / "ro"
    if shutil.which("mount") is None or not _mount_read_only(src, ro):
        pytest.skip("cannot make a read-only bind mount here (needs root)")
    try:
        ws = Workspace(ro)
        assert len(ws.read("documents")) > 0  # readers work
        with pytest.raises(EmbSError, match="read-only"):
            with ws.transaction():
                ws.write("t", pa.table({"a": [1]}))
        out = subprocess.run(CLI + ["eval", "-w", str(ro), "--retriever", "bm25", "--k", "8"], cwd=REPO,
                             env=_env(), capture_output=True, text=True, timeout=300)
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert "read-only" in out.stderr
    finally:
        subprocess.run(["umount", str(ro)], capture_output=True)
