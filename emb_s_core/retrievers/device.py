"""Which device a local model runs on: CUDA or Apple MPS when torch reports one, else the CPU.

Why: a researcher with one GPU should not embed at CPU speed. ``--device`` (or ``EMB_S_DEVICE``) overrides the
choice; asking for a device torch does not see is an error naming it, never a silent CPU run. On a GPU models run in
half precision and take larger batches (sized to the device's memory); the embedding cache is filled in
length-sorted steps either way (``dense.embed_chunks``).
"""
from __future__ import annotations

import os

from emb_s_core.errors import EmbSError

ENV = "EMB_S_DEVICE"
AUTO = "auto"
KINDS = ("cpu", "cuda", "mps")
CPU_BATCH = 64


def _torch():
    import torch

    return torch


def _mps_available(torch) -> bool:
    mps = getattr(getattr(torch, "backends", None), "mps", None)
    return bool(mps is not None and mps.is_available())


def choose(requested: str | None = None) -> str:
    """The device to load a local model on: ``requested`` (or ``EMB_S_DEVICE``), else ``auto`` = cuda when torch
    reports CUDA, else mps when it reports Apple's, else cpu."""
    requested = (requested or os.environ.get(ENV) or AUTO).strip().lower()
    torch = _torch()
    if requested == AUTO:
        if torch.cuda.is_available():
            return "cuda"
        return "mps" if _mps_available(torch) else "cpu"
    kind, _, index = requested.partition(":")
    if kind not in KINDS or (index and not index.isdigit()) or (index and kind != "cuda"):
        raise EmbSError(f"unknown device {requested!r}", where=f"--device or {ENV}",
                        fix="use auto (default), cpu, cuda, cuda:N or mps.")
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise EmbSError(f"device {requested!r} asked for, but torch reports no CUDA device",
                            where=f"--device or {ENV}",
                            fix="install a CUDA build of torch on a machine with a GPU, or pass --device cpu.")
        if index and int(index) >= torch.cuda.device_count():
            raise EmbSError(f"device {requested!r} asked for, but torch sees {torch.cuda.device_count()} CUDA "
                            "device(s)", where=f"--device or {ENV}", fix="pass --device cuda:N with a smaller N.")
    if kind == "mps" and not _mps_available(torch):
        raise EmbSError("device 'mps' asked for, but torch reports no Apple MPS device", where=f"--device or {ENV}",
                        fix="pass --device cpu (or auto).")
    return requested


def half_precision(device: str) -> bool:
    """Whether a model on ``device`` runs in float16 (every GPU; the CPU keeps float32)."""
    return device.split(":")[0] in ("cuda", "mps")


def batch_size(device: str) -> int:
    """Texts per forward pass: 64 on the CPU; on CUDA 32 per GiB of the device's memory (256 on an 8 GiB card,
    1024 at most); 128 on MPS (shared memory, not queried)."""
    kind, _, index = device.partition(":")
    if kind == "cuda":
        try:
            gib = _torch().cuda.get_device_properties(int(index or 0)).total_memory / 2 ** 30
        except Exception:  # noqa: BLE001 - a device that cannot say: a safe middle size
            return 256
        return int(min(1024, max(CPU_BATCH, 32 * gib)))
    return 128 if kind == "mps" else CPU_BATCH
