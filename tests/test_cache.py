"""The per-corpus cache: fingerprints, the BM25 index round trip and the embedding store."""

from __future__ import annotations

import gzip
import json
import shutil

import numpy as np
import pytest

from app.cache import CorpusCache, EmbeddingStore, _digests as cache_digests, fingerprint
from app.corpus import CorpusSource
from app.passages import PassageIndex

TEXTS = ["cats are better pets than dogs", "dogs are loyal and friendly", "python is a programming language",
         "java or python for beginners"]


def _passages(path, texts):
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.writelines(f'{{"id": "d{i}", "contents": "{text}"}}\n' for i, text in enumerate(texts))
    return CorpusSource("jsonl", (path,))


def test_fingerprint_follows_content_not_location(tmp_path):
    source = _passages(tmp_path / "passages.jsonl.gz", TEXTS)
    (tmp_path / "copy").mkdir()
    shutil.copy(source.paths[0], tmp_path / "copy" / "passages.jsonl.gz")
    copy = CorpusSource("jsonl", (tmp_path / "copy" / "passages.jsonl.gz",))
    changed = _passages(tmp_path / "copy" / "passages.jsonl.gz", TEXTS[:-1] + ["something else"])
    assert fingerprint(source) == fingerprint(CorpusSource("jsonl", (source.paths[0],)))
    assert fingerprint(source) != fingerprint(changed)
    _passages(copy.paths[0], TEXTS)
    assert fingerprint(source) == fingerprint(copy)


def test_fingerprint_follows_how_the_corpus_is_read(tmp_path, monkeypatch):
    """Reading other exporters' fields made the same bytes other documents: a kept cache served the old index."""
    source = _passages(tmp_path / "passages.jsonl.gz", TEXTS)
    before = fingerprint(source)
    argsme = CorpusSource("argsme", source.paths)
    argsme_before = fingerprint(argsme)
    monkeypatch.setattr("app.cache.CORPUS_READING", -1)  # every kind's: args.me's lines and lists were read anew
    assert fingerprint(source) != before and fingerprint(argsme) != argsme_before
    monkeypatch.undo()
    monkeypatch.setattr("app.cache.TEXT_READING", -1)  # how every text is read: args.me's index too
    assert fingerprint(source) != before
    monkeypatch.setattr("app.cache.TEXT_READING", -2)
    assert fingerprint(argsme) != argsme_before


def test_fingerprint_sees_an_edit_in_the_middle_of_a_large_file(tmp_path):
    """An uncompressed corpus edited in place keeps its size and its first and last MiB: still another corpus."""
    path = tmp_path / "documents.jsonl"
    lines = [f'{{"docno": "d{i:06d}", "text": "{"word " * 20}"}}\n' for i in range(60_000)]  # about 8 MB
    path.write_text("".join(lines))
    before = fingerprint(CorpusSource("jsonl", (path,), "docno", "text"))
    lines[30_000] = lines[30_000].replace("d030000", "x030000")
    path.write_text("".join(lines))
    assert fingerprint(CorpusSource("jsonl", (path,), "docno", "text")) != before


def test_index_round_trip_gives_the_same_ranking(tmp_path):
    index = PassageIndex.build(TEXTS)
    cache = CorpusCache(tmp_path, "key")
    assert cache.load_index() is None
    cache.save_index(index, [f"d{i}" for i in range(len(TEXTS))])
    loaded, doc_ids = cache.load_index()
    assert doc_ids == ["d0", "d1", "d2", "d3"]
    for query in ("python beginners", "loyal dogs"):
        (rows, scores), (cached_rows, cached_scores) = index.search([query], 3)[0], loaded.search([query], 3)[0]
        assert rows.tolist() == cached_rows.tolist()
        np.testing.assert_allclose(scores, cached_scores)


def test_an_index_saved_again_leaves_the_files_a_run_has_mapped(tmp_path):
    """Two runs sharing a cache: one saved its index over the files the other had mapped, in place, and the other
    died of SIGBUS. The files are new ones now; the mapped ones stay as they were."""
    import os

    cache = CorpusCache(tmp_path, "key")
    cache.save_index(PassageIndex.build(TEXTS), [f"d{i}" for i in range(len(TEXTS))])
    loaded, _ = cache.load_index()
    expected = loaded.search(["loyal dogs"], 3)[0]
    held = {path.name: path.open("rb") for path in (tmp_path / "key" / "index").iterdir()}  # as a mapping holds
    cache.save_index(PassageIndex.build(TEXTS[::-1]), [f"e{i}" for i in range(len(TEXTS))])
    for name, handle in held.items():
        assert not os.path.samestat(os.fstat(handle.fileno()), (tmp_path / "key" / "index" / name).stat()), name
        handle.close()
    rows, scores = loaded.search(["loyal dogs"], 3)[0]
    assert rows.tolist() == expected[0].tolist() and scores.tolist() == expected[1].tolist()
    assert cache.load_index()[1] == ["e0", "e1", "e2", "e3"] and os.listdir(tmp_path / "key") == ["index"]


def test_embedding_store_grows_and_persists(tmp_path):
    store = EmbeddingStore(tmp_path / "e.npz")
    assert store.missing(["a", "b"]) == ["a", "b"]
    vectors = np.eye(2, 384, dtype=np.float32)
    store.add(["a", "b"], vectors)
    store.save()
    again = EmbeddingStore(tmp_path / "e.npz")
    assert again.missing(["b", "c"]) == ["c"]
    again.add(["c"], np.full((1, 384), 0.5, dtype=np.float32))
    np.testing.assert_array_equal(again.get(["c", "a"]), np.stack([np.full(384, 0.5), vectors[0]]))


def _cut(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _fewer_vectors(path):
    np.savez(path, ids=np.array(["a", "b"]), vectors=np.ones((1, 384), dtype=np.float32))


def _repeated_ids(path):
    np.savez(path, ids=np.array(["a", "a"]), vectors=np.ones((2, 384), dtype=np.float32))


def _another_model(path):  # a 768-wide model's vectors: joined with the run's, np.concatenate failed the run
    np.savez(path, ids=np.array(["a", "b"]), vectors=np.ones((2, 768), dtype=np.float32))


def _zeroed(path):
    path.write_bytes(bytes(path.stat().st_size))  # numpy read it as a pickle: "This file contains pickled data"


def _flipped(member: bytes, offset: int, mask: int):
    """One bit flipped in a member's .npy header length: the vectors were read shifted, under the right ids, with no
    CRC checked (numpy reads a member exactly, and zipfile checks its CRC at its end)."""
    def flip(path):
        data = bytearray(path.read_bytes())
        data[data.index(member) + offset] ^= mask
        path.write_bytes(bytes(data))
    return flip


@pytest.mark.parametrize("damage", [lambda path: path.write_bytes(b"not a zip"), lambda path: path.write_bytes(b""),
                                    _cut, _zeroed, _fewer_vectors, _repeated_ids, _another_model,
                                    _flipped(b"vectors.npy", 39, 4), _flipped(b"vectors.npy", 39, 2)])
def test_damaged_embedding_cache_is_ignored(tmp_path, damage, caplog):
    store = EmbeddingStore(tmp_path / "e.npz")
    # 200 vectors: numpy reads a member of them exactly, short of its end (where zipfile checks the CRC)
    store.add(["a", "b", "c"] + [f"d{i}" for i in range(197)], np.ones((200, 384), dtype=np.float32))
    store.save()
    damage(tmp_path / "e.npz")
    again = EmbeddingStore(tmp_path / "e.npz")
    assert again.missing(["a"]) == ["a"] and "ignoring the damaged embedding cache" in caplog.text
    assert "pickled" not in caplog.text
    again.add(["a", "b"], np.full((2, 384), 0.5, dtype=np.float32))
    np.testing.assert_array_equal(again.get(["b"]), np.full((1, 384), 0.5))


INDEX_FILES = ["data.csc.index.npy", "doc_ids.txt", "indices.csc.index.npy", "indptr.csc.index.npy",
               "params.index.json", "passage_starts.npy", "vocab.index.json", "vocab.tokenizer.json"]


@pytest.mark.parametrize("damage", ["emptied", "cut", "one byte flipped"])
@pytest.mark.parametrize("name", INDEX_FILES)
def test_an_index_file_changed_since_it_was_written_is_ignored(tmp_path, caplog, name, damage):
    """An emptied .npy was an internal error (EOFError); a flipped byte in a score or an id was read as written."""
    cache = CorpusCache(tmp_path, "key")
    cache.save_index(PassageIndex.build(TEXTS), [f"d{i}" for i in range(len(TEXTS))])
    assert sorted(path.name for path in (tmp_path / "key" / "index").iterdir()) == sorted(INDEX_FILES + ["complete"])
    path = tmp_path / "key" / "index" / name
    data = bytearray(path.read_bytes())
    if damage == "one byte flipped":
        data[-1] ^= 0x01
    path.write_bytes(b"" if damage == "emptied" else data[: len(data) // 2] if damage == "cut" else bytes(data))
    assert cache.load_index() is None
    assert "ignoring the damaged index cache" in caplog.text


def test_an_entry_that_cannot_be_searched_is_built_again_not_the_end_of_the_run(tmp_path, monkeypatch, caplog):
    """An index folder of mode 000 ended the run: "index/complete: permission denied" (exists() raises EACCES)."""
    from pathlib import Path

    cache = CorpusCache(tmp_path, "key")
    cache.save_index(PassageIndex.build(TEXTS), [f"d{i}" for i in range(len(TEXTS))])
    exists = Path.exists

    def unsearchable(path, *args, **kwargs):
        if path.name == "complete":
            raise PermissionError(13, "Permission denied", str(path))
        return exists(path, *args, **kwargs)

    monkeypatch.setattr(Path, "exists", unsearchable)
    assert cache.load_index() is None
    assert "ignoring the damaged index cache" in caplog.text and "Permission denied" in caplog.text


def test_embeddings_that_cannot_be_looked_at_are_computed_again_not_the_end_of_the_run(tmp_path, monkeypatch):
    """An entry this user may not search (mode 000, made by root in a container and reused by a host user) ended the
    run after the model load: "embeddings-....npz: permission denied" (stat raises EACCES)."""
    import os

    stat = os.stat

    def unsearchable(path, *args, **kwargs):
        if str(path).endswith(".npz"):
            raise PermissionError(13, "Permission denied", str(path))
        return stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", unsearchable)
    monkeypatch.setattr(os, "lstat", lambda path, **kwargs: unsearchable(path, follow_symlinks=False, **kwargs))
    store = CorpusCache(tmp_path, "key").embeddings("minilm")
    assert store.missing(["a"]) == ["a"]


def test_cache_files_that_are_no_regular_files_are_damage_not_a_hang(tmp_path, caplog):
    """An embeddings file that is a FIFO held the run for ever; a `complete` mark linked to /dev/zero was read until
    the memory ran out."""
    import os
    import threading

    cache = CorpusCache(tmp_path, "key")
    cache.save_index(PassageIndex.build(TEXTS), [f"d{i}" for i in range(len(TEXTS))])
    mark = tmp_path / "key" / "index" / "complete"
    mark.unlink()
    mark.symlink_to("/dev/zero")
    assert cache.load_index() is None
    assert "complete is no regular file" in caplog.text
    os.mkfifo(tmp_path / "key" / "embeddings-x.npz")
    stores = []
    reader = threading.Thread(target=lambda: stores.append(cache.embeddings("x")), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert stores and stores[0].rows == {}
    assert "it is no regular file" in caplog.text


def test_an_index_written_without_digests_is_built_again(tmp_path):
    cache = CorpusCache(tmp_path, "key")
    cache.save_index(PassageIndex.build(TEXTS), [f"d{i}" for i in range(len(TEXTS))])
    (tmp_path / "key" / "index" / "complete").write_text("")  # as caches before the digests were
    assert cache.load_index() is None
    (tmp_path / "key" / "index" / ".complete.x.tmp").write_text("left by a killed run")
    cache.save_index(PassageIndex.build(TEXTS), [f"d{i}" for i in range(len(TEXTS))])
    assert cache.load_index()[1] == ["d0", "d1", "d2", "d3"]


def test_a_cache_that_cannot_take_an_entry_costs_the_entry_not_the_run(tmp_path, monkeypatch, caplog):
    """A full disk under the cache: numpy says "24777 requested and 4064 written"; the run goes on uncached."""
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    index = PassageIndex.build(TEXTS)
    cache = CorpusCache(tmp_path, "key")
    monkeypatch.setattr(np, "save", full)
    monkeypatch.setattr(np, "savez", full)
    cache.save_index(index, [f"d{i}" for i in range(len(TEXTS))])
    assert cache.load_index() is None  # the half-written entry is never read
    store = EmbeddingStore(tmp_path / "e.npz")
    store.add(["a"], np.ones((1, 384), dtype=np.float32))
    store.save()
    assert not (tmp_path / "e.npz").exists() and list(tmp_path.glob("*.npz")) == []
    assert caplog.text.count("the run goes on without caching") == 2


def test_a_deflated_embedding_cache_and_a_deep_complete_mark_are_ignored(tmp_path, caplog):
    """A 2.2 MB deflated .npz of 1.5 million zero vectors took 2.3 GB before its shape was checked; a `complete`
    mark of 100,000 brackets was an internal error (RecursionError)."""
    np.savez_compressed(tmp_path / "e.npz", ids=np.array(["a"]), vectors=np.zeros((50_000, 384), np.float32))
    assert EmbeddingStore(tmp_path / "e.npz").rows == {}
    assert "a member is compressed" in caplog.text
    cache = CorpusCache(tmp_path, "key")
    cache.save_index(PassageIndex.build(TEXTS), [f"d{i}" for i in range(len(TEXTS))])
    (tmp_path / "key" / "index" / "complete").write_text("[" * 100_000)
    assert cache.load_index() is None
    (tmp_path / "key" / "index" / "complete").write_text("[]")
    caplog.clear()
    assert cache.load_index() is None and "its complete mark is no JSON object" in caplog.text


def test_one_long_document_id_costs_its_own_bytes_not_every_documents(tmp_path):
    """Ids were a numpy array of str, every row as wide as the longest: one id of 100,000 characters among 5,000
    wrote 2 GB, one of 1,000,000 ended the run out of memory."""
    doc_ids = [f"d{i}" for i in range(len(TEXTS) - 1)] + ["x" * 1_000_000]
    cache = CorpusCache(tmp_path, "key")
    cache.save_index(PassageIndex.build(TEXTS), doc_ids)
    assert (tmp_path / "key" / "index" / "doc_ids.txt").stat().st_size < 1_000_100
    assert cache.load_index()[1] == doc_ids


def test_an_index_cache_of_the_older_layout_is_built_again_without_a_damage_warning(tmp_path, caplog):
    cache = CorpusCache(tmp_path, "key")
    cache.save_index(PassageIndex.build(TEXTS), [f"d{i}" for i in range(len(TEXTS))])
    index = tmp_path / "key" / "index"
    (index / "doc_ids.txt").rename(index / "doc_ids.npy")  # as the ids were kept before
    (index / "complete").write_text(json.dumps(cache_digests(index)))
    assert cache.load_index() is None and "damaged" not in caplog.text


def test_an_index_copied_from_another_corpus_is_built_again(tmp_path, caplog):
    """Its files whole, it ranked this corpus's documents by the other corpus's texts, silently."""
    import shutil

    other = CorpusCache(tmp_path, "other-corpus")
    other.save_index(PassageIndex.build(TEXTS), [f"d{i}" for i in range(len(TEXTS))])
    shutil.copytree(other.directory / "index", tmp_path / "this-corpus" / "index")
    assert CorpusCache(tmp_path, "this-corpus").load_index() is None
    assert "it was built from another corpus" in caplog.text
    assert other.load_index()[1] == ["d0", "d1", "d2", "d3"]


def test_a_killed_runs_temporary_files_go_once_no_write_touches_them(tmp_path):
    """A SIGKILL while the embeddings were saved left their temporary file for good (1.3 GB at 868k passages)."""
    import os
    import time

    from app.files import STALE_AFTER_S

    index = tmp_path / "key" / "index"
    index.mkdir(parents=True)
    stale, fresh = tmp_path / "key" / ".embeddings-x.npz.abc.tmp", index / ".complete.def.tmp"
    for path in (stale, fresh, index / ".complete.old.tmp"):
        path.write_text("half written")
    staging = tmp_path / "key" / ".index-abc.tmp"  # a killed run's index, written beside the entry
    staging.mkdir()
    (staging / "vocab.index.json").write_text("{}")
    long_ago = time.time() - STALE_AFTER_S - 60
    for path in (stale, index / ".complete.old.tmp", staging):
        os.utime(path, (long_ago, long_ago))
    CorpusCache(tmp_path, "key")
    assert sorted(p.name for p in tmp_path.rglob("*.tmp")) == [fresh.name]  # another run may be writing it


def test_an_index_cache_unread_for_want_of_file_descriptors_is_not_called_damaged(tmp_path, monkeypatch, caplog):
    """`ulimit -n 8` said "ignoring the damaged index cache": the entry was whole."""
    import errno

    cache = CorpusCache(tmp_path, "key")
    cache.save_index(PassageIndex.build(TEXTS), [f"d{i}" for i in range(len(TEXTS))])
    monkeypatch.setattr(PassageIndex, "load", lambda *args: (_ for _ in ()).throw(
        OSError(errno.EMFILE, "Too many open files")))
    assert cache.load_index() is None
    assert "ignoring the unread index cache" in caplog.text and "damaged" not in caplog.text


def test_an_index_cached_before_documents_were_ranked_by_their_passages_is_built_again(tmp_path, caplog):
    """An entry without the passages' first rows ranked documents whole (and read them to 20,000 characters): it
    is of an older layout, rebuilt, not served nor called damaged."""
    import logging

    cache = CorpusCache(tmp_path, "key")
    cache.save_index(PassageIndex.build(TEXTS), [f"d{i}" for i in range(len(TEXTS))])
    path = tmp_path / "key" / "index"
    (path / PassageIndex.STARTS).unlink()
    (path / "complete").write_text(json.dumps({"corpus": "key", "files": cache_digests(path)}))
    with caplog.at_level(logging.INFO):
        assert cache.load_index() is None
    assert "of an older layout" in caplog.text and "damaged" not in caplog.text


def test_an_index_cached_before_short_windows_were_joined_is_built_again(tmp_path, caplog):
    """Its files whole and of the right names, an entry of another PassageIndex.LAYOUT scores by other passages."""
    import logging

    cache = CorpusCache(tmp_path, "key")
    cache.save_index(PassageIndex.build(TEXTS), [f"d{i}" for i in range(len(TEXTS))])
    path = tmp_path / "key" / "index"
    assert cache.load_index() is not None
    (path / "complete").write_text(json.dumps({"corpus": "key", "layout": 1, "files": cache_digests(path)}))
    with caplog.at_level(logging.INFO):
        assert cache.load_index() is None
    assert "of an older layout" in caplog.text and "damaged" not in caplog.text
