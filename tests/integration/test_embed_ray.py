"""`emb-s embed`: the local engine and the Ray engine (a local Ray started by the test) write the same embedding
cache; a killed Ray job resumes; a second run embeds nothing; bad inputs are one-line errors. Skipped without Ray."""
from __future__ import annotations

import numpy as np
import pytest

from emb_s_core import distributed, embed, retrievers
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.retrievers.dense import document_hashes, load_vectors
from testkit.retrieval_bank import copy_workspace, template

SPEC = "dense:minilm-l3"


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def cached(ws) -> np.ndarray:
    r = retrievers.get(SPEC)
    _, hashes = document_hashes(ws, None)
    return load_vectors(ws, r.table, hashes)[0]


def test_ray_engine_equals_local_resumes_and_then_embeds_nothing(ray_local, tmp_path_factory, tmp_path, monkeypatch):
    local_ws = copy_workspace(template(tmp_path_factory), tmp_path / "local")
    ray_ws = copy_workspace(template(tmp_path_factory), tmp_path / "ray")
    local = embed.embed(local_ws, SPEC)
    assert local.engine == "local" and local.documents == 240 and local.chunks >= 240
    # a job killed after its first round keeps that round
    monkeypatch.setattr(distributed, "ROUND_DOCS", 100)

    def killed(stage: str, fraction: float) -> None:
        if fraction > 0:  # the first report after a committed round
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        embed.embed(ray_ws, SPEC, engine="ray", workers=2, progress=killed)
    ray_ws.refresh()
    table = retrievers.get(SPEC).table
    assert ray_ws.has_table(table) and 0 < ray_ws.table(table).count_rows() < local.chunks
    resumed = embed.embed(ray_ws, SPEC, engine="ray", workers=2)
    assert resumed.documents == 140 and resumed.engine == "ray"
    ray_ws.refresh()
    np.testing.assert_allclose(cached(ray_ws), cached(local_ws), atol=1e-5)
    version = ray_ws.version
    again = embed.embed(ray_ws, SPEC, engine="ray")
    assert again.documents == 0 and again.chunks == 0
    ray_ws.refresh()
    assert ray_ws.version == version
    # and an evaluation that follows embeds nothing
    r = retrievers.get(SPEC)
    r.prepare(ray_ws, None)
    assert r.embedded == 0


def test_embed_cli_errors_are_one_line_and_write_nothing(tmp_path_factory, tmp_path, capsys):
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    version = ws.version
    for argv, message in ((["-r", "bm25"], "has no embeddings to compute"),
                          (["-r", SPEC, "--workers", "0"], "--workers must be at least 1"),
                          (["-r", "dense:nope/none/x"], "not found")):
        assert main(["embed", "--workspace", str(ws.path), *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1
    ws.refresh()
    assert ws.version == version
    with pytest.raises(EmbSError, match="unknown engine"):
        embed.embed(ws, SPEC, engine="spark")


def test_local_cli_then_nothing_to_do(tmp_path_factory, tmp_path, capsys):
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    assert main(["embed", "--workspace", str(ws.path), "-r", SPEC]) == 0
    assert "embedded 240 documents" in capsys.readouterr().out
    assert main(["embed", "--workspace", str(ws.path), "-r", SPEC]) == 0
    assert "nothing to do" in capsys.readouterr().out
