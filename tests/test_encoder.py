import numpy as np
import torch

from app import encoder

TEXTS = [
    "Python is easier to learn than Java because its syntax is shorter.",
    "Java is faster than Python for long-running server code, thanks to the JIT compiler.",
    "Cats sleep most of the day.",
]


def test_embeddings_are_normalised_float32_rows():
    vectors = encoder.encode(TEXTS, device="cpu", precision="fp32")
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert encoder.encode([], device="cpu").shape == (0, 384)


def test_bf16_embeddings_match_fp32():
    # The heads were trained on fp32 embeddings; bf16 autocast must not move them.
    fp32 = encoder.encode(TEXTS, device="cpu", precision="fp32")
    bf16 = encoder.encode(TEXTS, device="cpu", precision="bf16")
    assert not np.array_equal(fp32, bf16)  # autocast really ran
    assert (fp32 * bf16).sum(axis=1).min() > 0.999


def test_texts_are_cut_at_max_seq_length():
    long = "the cost of nuclear power " * 200
    cut = encoder.encode([long, long + " and cheap solar panels"], device="cpu", precision="fp32",
                         max_seq_length=32)
    assert np.allclose(cut[0], cut[1], atol=1e-6)


def test_fits_counts_word_pieces_with_the_special_tokens():
    texts = ["word " * 254, "word " * 255, "antidisestablishmentarianism " * 100, "x " * 300, "", TEXTS[0]]
    assert encoder.fits(texts, device="cpu") == [True, False, False, False, True, True]
    assert encoder.fits(texts[:1], device="cpu", max_seq_length=128) == [False]
    assert encoder.fits([], device="cpu") == []


def test_precision_auto_is_bf16_only_on_cpus_with_native_bf16(monkeypatch):
    assert encoder.resolve_precision("fp32", "cpu") == "fp32"
    assert encoder.resolve_precision("bf16", "cpu") == "bf16"
    assert encoder.resolve_precision("auto", "cuda") == "fp32"
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    assert encoder.resolve_precision("auto", "cpu") == "fp32"
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: True)
    assert encoder.resolve_precision("auto", "cpu") == "bf16"


def test_auto_and_the_device_it_resolves_to_share_one_model():
    """The passage splitter asks for "auto", the encoder for the resolved device: one load, not two (~3 s)."""
    from app.encoder import load_encoder, resolve_device

    assert load_encoder("auto") is load_encoder(resolve_device("auto"))


def test_available_cpus_read_a_cgroup_quota_of_either_version(tmp_path):
    """torch started a thread a core whatever the container's quota (`--cpus 1` on 2 cores: 13.3 s where 1 thread
    took 9-11 s; a TIRA limit of 2 CPUs on a node of 64 cores, 64 threads)."""
    cores = encoder.available_cpus(tmp_path / "none", tmp_path / "none")
    v2 = tmp_path / "v2"
    (v2 / "a" / "b").mkdir(parents=True)
    (v2 / "a" / "cpu.max").write_text("150000 100000\n")  # a parent's quota bounds its children
    (v2 / "a" / "b" / "cpu.max").write_text("max 100000\n")
    (tmp_path / "membership").write_text("0::/a/b\n")
    assert encoder.available_cpus(v2, tmp_path / "membership") == min(cores, 2)
    v1 = tmp_path / "v1" / "cpu,cpuacct"
    v1.mkdir(parents=True)
    (v1 / "cpu.cfs_quota_us").write_text("100000\n")
    (v1 / "cpu.cfs_period_us").write_text("100000\n")
    (tmp_path / "membership").write_text("4:memory:/x\n3:cpu,cpuacct:/\n")
    assert encoder.available_cpus(tmp_path / "v1", tmp_path / "membership") == 1
    (v1 / "cpu.cfs_quota_us").write_text("-1\n")  # no quota
    assert encoder.available_cpus(tmp_path / "v1", tmp_path / "membership") == cores
    (tmp_path / "membership").write_text("garbage\n")
    assert encoder.available_cpus(tmp_path / "v1", tmp_path / "membership") == cores


def test_torch_threads_follow_the_cpus_the_process_may_use(monkeypatch):
    threads = torch.get_num_threads()
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(encoder, "available_cpus", lambda: 1)
    encoder.fit_threads.cache_clear()
    try:
        torch.set_num_threads(2)  # as torch starts on 2 cores, whatever this machine has
        encoder.fit_threads()
        assert torch.get_num_threads() == 1
        torch.set_num_threads(2)
        encoder.fit_threads.cache_clear()
        monkeypatch.setenv("OMP_NUM_THREADS", "2")  # the user's word stands
        encoder.fit_threads()
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)
        encoder.fit_threads.cache_clear()


HUBS_AFTER_A_LOAD = """
import os, sys
from app import encoder, stance_cross
encoder.load_encoder("cpu")
stance_cross.tokenizer()
import huggingface_hub.constants
print(os.environ.get("HF_HUB_OFFLINE"), os.environ.get("TRANSFORMERS_OFFLINE"),
      huggingface_hub.constants.HF_HUB_OFFLINE)
"""


def test_loading_the_models_leaves_the_hubs_as_they_were():
    """The models load with the hubs off, and the process's switches stay as they were: a notebook that reranked
    with this package could no longer download its next model (an attack on the Python API)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {name: value for name, value in os.environ.items() if name not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    done = subprocess.run([sys.executable, "-c", HUBS_AFTER_A_LOAD], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).parents[1], timeout=300)
    assert done.stdout.split() == ["None", "None", "False"], done.stderr
    done = subprocess.run([sys.executable, "-c", HUBS_AFTER_A_LOAD], capture_output=True, text=True,
                          env={**env, "HF_HUB_OFFLINE": "1"}, cwd=Path(__file__).parents[1], timeout=300)
    assert done.stdout.split() == ["1", "None", "True"], done.stderr
