"""Benchmark a full run at Touché scale: synthetic corpora in the real input layout, timed per stage.

    python -m app.bench [--sizes 10k,100k,868k,tira-input,tira-input-controversial,long-document,web-pages,args-me,
                         args-me-387k]

Each synthetic input is a `passages.jsonl.gz` whose passage lengths follow the real Touché 2022 passages
and whose words are drawn from their unigram distribution, with new words at the rate of their vocabulary growth
(Heaps' law), plus the 50 real topics. Every input is measured
in its own child process (so peak RSS is that input's), cold (no cache), and the same process then times
the two floors: bm25s indexing the same texts alone, and the bi-encoder encoding the candidates the
pipeline re-ranked alone. `long-document` is 100 real passages and one of 15 MB (memory must follow the bound on
document length, not the largest document). `web-pages` is the 536 real ClueWeb12 dev pages (read from
../shared/data at bench time, never committed) as a local corpus of long documents, with the 46 Touché 2020/2021
dev topics: each topic reranks its 100 best pages, read as passages (app.passages). `tira-input-controversial` runs tira-input as controversial topics, so
that the stance stage includes the stance cross-encoder. `args-me` is the 7,238 ArgKP-2021 arguments as an args.me
corpus, each stating its stance toward one of its motion's key points as conclusion, with the 31 motions as
controversial topics: the stance stage orients each topic's distinct conclusions (app.stance.StanceModel.orient).
`args-me-387k` is a synthetic args.me of args.me 1.0's size and layout (1.3 GB) with Touché 2020 Task 1's topics.
Writes bench/results.json (merged by input name) and
bench/results.png (the corpus-size curve, one point per corpus).
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import logging
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter
from html import escape
from pathlib import Path

import numpy as np

from .encoder import DEVICES
from .logs import log_to_stderr
from .settings import DATA_DIR as DATA

log = logging.getLogger(__name__)

BENCH = Path(__file__).resolve().parents[1] / "bench"
CHUNK = 10_000
# Written into a synthetic input's .complete marker: inputs made by another version of the generator are rebuilt.
GENERATOR = "unigram+heaps-1"
LONG_DOCUMENT, LONG_DOCUMENT_CHARS = "long-document", 15_000_000
WEB_PAGES = "web-pages"
ARGS_ME = "args-me"
# args.me 1.0's size (387,606 arguments in about 59,800 debates), synthetic: the corpus a Touché Task 1 run ranks.
ARGS_ME_FULL, ARGS_ME_ARGUMENTS, ARGS_ME_DEBATE_MEAN = "args-me-387k", 387_600, 6.5
# Real inputs, by name: the tira-input folder and the stance task forced on it (None: from the topics).
REAL_INPUTS = {"tira-input": None, "tira-input-controversial": "controversial"}
# What each input is made of, under --data (docs/DATA.md), checked before the first one's minutes
_PASSAGES = ("touche-2022-task2/tira-input/passages.jsonl.gz",)
_TIRA_INPUT = (*_PASSAGES, "touche-2022-task2/tira-input/topics.xml")
DATA_FILES = {
    "synthetic": (*_PASSAGES, "touche-2022-task2/topics-task2.xml"),
    LONG_DOCUMENT: (*_PASSAGES, "touche-2022-task2/topics-task2.xml"),
    WEB_PAGES: ("web-pages-clueweb12/pages-dev.jsonl.gz", "web-pages-clueweb12/dev-topics.txt",
                "touche-2020-task2/topics-task-2.xml", "touche-2021-task2/topics-task-2-2021-only-titles.xml"),
    ARGS_ME: tuple(f"stance/ibm-argkp-2021/{folder}/{kind}_{split}.csv" for kind in ("arguments", "key_points")
                   for folder, split in (("kpm_data", "train"), ("kpm_data", "dev"), ("test_data", "test"))),
    ARGS_ME_FULL: (*_PASSAGES, "touche-2020-task1/topics-task-1-2020.xml"),
    "tira-input": _TIRA_INPUT,
    "effectiveness": (*_TIRA_INPUT, "touche-2022-task2/dev-topics.txt",
                      *(f"touche-2022-task2/touche-task2-2022-{name}-dev.qrels" for name in ("relevance", "quality"))),
}


def parse_size(name: str) -> int | None:
    """Passages for a size name (`10k`, `868k`, `2500`); None for the real inputs (`tira-input`, ...)."""
    if name in REAL_INPUTS or name in (LONG_DOCUMENT, WEB_PAGES, ARGS_ME, ARGS_ME_FULL):
        return None
    match = re.fullmatch(r"(\d+)(k?)", name)
    if not match:
        raise ValueError(f"size {name!r}: expected e.g. 10k, 868k, 2500 or tira-input")
    return int(match.group(1)) * (1000 if match.group(2) else 1)


class PassageModel:
    """Passage lengths (in words), word frequencies and vocabulary growth of real passages, to sample look-alikes.

    Words drawn from the real unigram model alone would stop adding vocabulary after a few thousand passages,
    while a real corpus keeps meeting new words (Heaps' law: V = K * n^beta distinct index terms in n tokens), and
    the index's vocabulary is part of its memory. So each sampled token is, with the probability dV/dn of the law
    fitted on the real passages, a word never seen before.
    """

    def __init__(self, lengths: np.ndarray, words: list[str], counts: np.ndarray, heaps_k: float, heaps_beta: float):
        self.lengths, self.words = lengths, words
        self.cumulative = np.cumsum(counts / counts.sum())
        self.heaps_k, self.heaps_beta = heaps_k, heaps_beta
        self.tokens = 0  # tokens sampled so far: where the next passage stands on the vocabulary growth curve

    @classmethod
    def from_passages(cls, input_dir: Path) -> "PassageModel":
        """The model of the corpus in `input_dir` (read as a run reads it)."""
        from .corpus import detect_corpus, read_documents
        from .lexical import make_tokenizer

        index_terms = make_tokenizer().splitter  # vocabulary growth is counted in the index's own terms
        lengths, counts, seen, growth = [], Counter(), set(), []
        for document in read_documents(detect_corpus(input_dir)):
            words = document.text.split()
            lengths.append(len(words))
            counts.update(words)
            for term in index_terms(document.text.lower()):
                seen.add(term)
                growth.append(len(seen))
        words, frequencies = zip(*counts.most_common())
        heaps_k, heaps_beta = fit_heaps(np.array(growth))
        return cls(np.array(lengths), list(words), np.array(frequencies, dtype=np.float64), heaps_k, heaps_beta)

    def sample(self, count: int, rng: np.random.Generator) -> list[str]:
        """`count` passages: lengths resampled from the real ones, words i.i.d. from the unigram model, and new
        words at the rate of the vocabulary growth curve."""
        lengths = rng.choice(self.lengths, size=count)
        total = int(lengths.sum())
        picks = np.searchsorted(self.cumulative, rng.random(total), side="right")
        tokens = [self.words[i] for i in np.minimum(picks, len(self.words) - 1).tolist()]
        position = np.arange(self.tokens + 1, self.tokens + total + 1, dtype=np.float64)
        new_word = self.heaps_beta * self.heaps_k * position ** (self.heaps_beta - 1)
        for i in np.flatnonzero(rng.random(total) < new_word).tolist():
            tokens[i] = novel_word(self.tokens + i)
        self.tokens += total
        texts, start = [], 0
        for length in lengths.tolist():
            texts.append(" ".join(tokens[start:start + length]))
            start += length
        return texts


LETTERS = "abcdefghijklmnopqrstuvwxyz"


def fit_heaps(growth: np.ndarray) -> tuple[float, float]:
    """K and beta of Heaps' law fitted (log-log least squares) on a vocabulary growth curve, skipping its first 5%."""
    n = np.arange(1, len(growth) + 1, dtype=np.float64)
    keep = n >= max(2, len(growth) // 20)
    beta, log_k = np.polyfit(np.log(n[keep]), np.log(growth[keep]), 1)
    return float(np.exp(log_k)), float(beta)


def novel_word(serial: int) -> str:
    """A distinct letters-only non-word for each serial number; the final x keeps stemmers from merging two."""
    letters = []
    while True:
        serial, digit = divmod(serial, 26)
        letters.append(LETTERS[digit])
        if serial == 0:
            return "zq" + "".join(letters) + "x"


def write_synthetic(target: Path, passages: int, data: Path, seed: int = 13, progress: bool = True) -> Path:
    """A Touché 2022 Task 2 input with `passages` synthetic passages; reused when already complete."""
    done = target / ".complete"
    if done.exists() and done.read_text() == GENERATOR:
        return target
    from tqdm import tqdm

    task = data / "touche-2022-task2"
    model = PassageModel.from_passages(task / "tira-input")
    rng = np.random.default_rng(seed)
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(task / "topics-task2.xml", target / "topics.xml")
    with gzip.open(target / "passages.jsonl.gz", "wt", encoding="utf-8", compresslevel=1) as out, \
            tqdm(total=passages, desc=f"writing {target.name}", unit="passage", disable=not progress) as bar:
        for start in range(0, passages, CHUNK):
            texts = model.sample(min(CHUNK, passages - start), rng)
            out.writelines(json.dumps({"id": f"clueweb12-synth{(start + i) // 100:07d}___{(start + i) % 100}",
                                       "contents": text}) + "\n" for i, text in enumerate(texts))
            bar.update(len(texts))
    done.write_text(GENERATOR)
    return target


def write_long_document(target: Path, data: Path) -> Path:
    """The first 100 real passages and one passage of LONG_DOCUMENT_CHARS made of their text, with the real topics."""
    task = data / "touche-2022-task2"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(task / "topics-task2.xml", target / "topics.xml")
    with gzip.open(task / "tira-input" / "passages.jsonl.gz", "rt", encoding="utf-8") as lines:
        passages = list(itertools.islice(lines, 100))
    text = " ".join(json.loads(line)["contents"] for line in passages)
    huge = (text + " ") * (LONG_DOCUMENT_CHARS // (len(text) + 1) + 1)
    with (target / "passages.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(passages)
        out.write(json.dumps({"id": "long-document", "contents": huge[:LONG_DOCUMENT_CHARS]}) + "\n")
    return target


def write_web_pages(target: Path, data: Path) -> Path:
    """The dev web pages as a local corpus ({id, contents} read as a ChatNoir page is, app.html.read_page) with the
    2020/2021 Task 2 dev topics: the pages' ranking with whole web pages, and no network."""
    from .html import read_page

    pages = data / "web-pages-clueweb12"
    write_web_page_topics(target, data)
    with gzip.open(pages / "pages-dev.jsonl.gz", "rt", encoding="utf-8") as lines, \
            (target / "passages.jsonl").open("w", encoding="utf-8") as out:
        for line in lines:
            page = json.loads(line)
            out.write(json.dumps({"id": page["doc_id"], "contents": read_page(page["html"])}) + "\n")
    return target


def write_web_page_topics(target: Path, data: Path) -> None:
    """`target`/topics.xml: the 2020/2021 Task 2 topics the dev web pages are judged for, as their files write them."""
    from lxml import etree

    dev = set((data / "web-pages-clueweb12" / "dev-topics.txt").read_text().strip().split(","))
    topics = [etree.tostring(topic, encoding="unicode").strip()
              for path in (data / "touche-2020-task2" / "topics-task-2.xml",
                           data / "touche-2021-task2" / "topics-task-2-2021-only-titles.xml")
              for topic in etree.parse(path).getroot().iter("topic") if topic.findtext("number").strip() in dev]
    target.mkdir(parents=True, exist_ok=True)
    (target / "topics.xml").write_text("<topics>\n" + "\n".join(topics) + "\n</topics>\n", encoding="utf-8")


def write_args_me(target: Path, data: Path, seed: int = 13) -> Path:
    """ArgKP-2021's arguments as args.me arguments: each gets a key point of its motion (drawn with `seed`) as its
    conclusion and the stance toward it that its own side implies; the motions are the topics."""
    import csv

    folder = data / "stance" / "ibm-argkp-2021"

    def rows(kind: str) -> list[tuple[str, dict]]:
        found = []
        for split, path in (("train", f"kpm_data/{kind}_train.csv"), ("dev", f"kpm_data/{kind}_dev.csv"),
                            ("test", f"test_data/{kind}_test.csv")):
            with (folder / path).open(newline="", encoding="utf-8") as handle:
                found += [(split, row) for row in csv.DictReader(handle)]
        return found

    key_points: dict[str, list[dict]] = {}
    for _, key_point in rows("key_points"):
        key_points.setdefault(key_point["topic"], []).append(key_point)
    rng, arguments = np.random.default_rng(seed), []
    for split, argument in rows("arguments"):  # ids repeat across the splits: the split makes them unique
        drawn = key_points[argument["topic"]][int(rng.integers(len(key_points[argument["topic"]])))]
        stance = "PRO" if argument["stance"] == drawn["stance"] else "CON"
        arguments.append({"id": f"{split}-{argument['arg_id']}", "conclusion": drawn["key_point"],
                          "premises": [{"text": argument["argument"], "stance": stance}]})
    target.mkdir(parents=True, exist_ok=True)
    (target / "args-me.json").write_text(json.dumps({"arguments": arguments}), encoding="utf-8")
    write_topics(target, enumerate(key_points, 1))
    return target


def write_synthetic_args_me(target: Path, arguments: int, data: Path, seed: int = 13, progress: bool = True) -> Path:
    """An args.me corpus in args.me 1.0's layout (`args-me.json`, each argument's context with the text of its
    debate's page as `sourceText`: the title, the argument before and its own) of `arguments` synthetic arguments,
    with Touché 2020 Task 1's topics; reused when complete.

    Debates hold 1 + Poisson(ARGS_ME_DEBATE_MEAN - 1) arguments sharing one conclusion (a title of 3 to 12 words),
    alternately PRO and CON; titles and premises are sampled as `write_synthetic`'s passages are, so the index and
    the number of distinct conclusions a topic ranks (which the stance stage orients) are a real corpus's."""
    done = target / ".complete"
    if done.exists() and done.read_text() == GENERATOR:
        return target
    from tqdm import tqdm

    model = PassageModel.from_passages(data / "touche-2022-task2" / "tira-input")
    rng = np.random.default_rng(seed)
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(data / "touche-2020-task1" / "topics-task-1-2020.xml", target / "topics.xml")
    written, debate = 0, 0
    with (target / "args-me.json").open("w", encoding="utf-8") as out, \
            tqdm(total=arguments, desc=f"writing {target.name}", unit="argument", disable=not progress) as bar:
        out.write('{"arguments": [\n')
        while written < arguments:
            size = min(arguments - written, 1 + int(rng.poisson(ARGS_ME_DEBATE_MEAN - 1)))
            title = " ".join(model.sample(1, rng)[0].split()[:int(rng.integers(3, 13))])
            premises, ids = model.sample(size, rng), [f"S{debate:08x}-A{turn:08x}" for turn in range(size)]
            for turn, premise in enumerate(premises):
                source_text = "\n".join([title, *premises[max(0, turn - 1):turn + 1]])
                argument = {"premises": [{"text": premise, "stance": ("PRO", "CON")[turn % 2], "annotations": []}],
                            "context": {"sourceId": f"S{debate:08x}", "acquisitionTime": "2019-04-18T13:02:10Z",
                                        "previousArgumentInSourceId": ids[turn - 1] if turn else "",
                                        "nextArgumentInSourceId": ids[turn + 1] if turn + 1 < size else "",
                                        "discussionTitle": title, "sourceTitle": title, "sourceText": source_text,
                                        "sourceUrl": f"https://www.debate.org/debates/synthetic-{debate}/"},
                            "id": ids[turn], "conclusion": title}
                out.write(("" if written == 0 else ",\n") + json.dumps(argument))
                written += 1
            debate += 1
            bar.update(size)
        out.write("\n]}\n")
    done.write_text(GENERATOR)
    return target


def write_topics(target: Path, titles) -> None:
    """`target/topics.xml` holding a topic per (number, title) of `titles`, title only."""
    topics = "".join(f"<topic><number>{number}</number><title>{escape(title)}</title></topic>\n"
                     for number, title in titles)
    (target / "topics.xml").write_text(f"<topics>\n{topics}</topics>\n", encoding="utf-8")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(input_dir: Path, name: str, output_dir: Path, device: str, progress: bool,
            task: str | None = None) -> dict:
    """Run the pipeline cold on one input, then time the floors in the same process."""
    import bm25s

    from . import encoder
    from .corpus import detect_corpus, read_documents
    from .lexical import make_tokenizer
    from .pipeline import run
    from .settings import RunSettings

    shutil.rmtree(output_dir, ignore_errors=True)
    settings = RunSettings(input_dir=input_dir, output_dir=output_dir, overwrite=True, device=device,
                           progress=progress, cache_dir=output_dir / "cache", task=task)
    start = time.perf_counter()
    report = run(settings)
    wall = time.perf_counter() - start
    peak = _peak_rss_mb()

    # The floors: plain bm25s (its own tokenizer call and index, everything in memory) and plain encoding.
    texts = [document.text for document in read_documents(detect_corpus(input_dir))]
    start = time.perf_counter()
    tokens = make_tokenizer().tokenize(texts, return_as="tuple", show_progress=progress)
    bm25s.BM25().index(tokens, show_progress=progress)
    index_floor = time.perf_counter() - start
    del texts, tokens
    reranked = _reranked_texts(report.run_path, input_dir, settings.rerank_depth)
    start = time.perf_counter()
    encoder.encode(reranked, device=device, progress=progress)
    encode_floor = time.perf_counter() - start

    # The ratio of the reported (rounded) figures, so the three agree even for a sub-second floor.
    wall, floor = round(wall, 2), round(index_floor + encode_floor, 2)
    return {"input": name, "passages": report.documents, "topics": report.topics, "wall_s": wall,
            "peak_rss_mb": round(peak, 1), "stages": {k: round(v, 2) for k, v in report.stages.items()},
            "floor_s": floor, "floor_stages": {"bm25s index": round(index_floor, 2),
                                               "bi-encoder": round(encode_floor, 2)},
            "encoded_candidates": len(reranked), "encoded_passages": report.passages,
            "passages_per_document": round(report.passages / max(1, len(reranked)), 2),
            "rerank_depth": settings.rerank_depth,
            "stance_model": settings.stance_model, "stance_depth": settings.stance_depth, "task": task,
            "ratio": round(wall / floor, 3), "device": encoder.resolve_device(device),
            "precision": encoder.resolve_precision("auto", device),
            "load_avg": [round(load, 2) for load in os.getloadavg()]}


def _reranked_texts(run_path: Path, input_dir: Path, depth: int) -> list[str]:
    """Texts of the distinct documents ranked within `depth` for some topic: the set the pipeline encoded."""
    from .corpus import detect_corpus, read_documents

    wanted = set()
    with run_path.open() as lines:
        for line in lines:
            _, _, doc_id, rank, _, _ = line.split()
            if int(rank) <= depth:
                wanted.add(doc_id)
    return [document.text for document in read_documents(detect_corpus(input_dir)) if document.doc_id in wanted]


def effectiveness(data: Path, depths: tuple[int, ...] = (100, 200, 1000), lengths: tuple[int, ...] = (256, 128),
                  device: str = "auto") -> list[dict]:
    """Judged-only relevance and quality nDCG@5 on the dev topics per re-rank depth
    and max_seq_length: each topic ranked as a run ranks it, scored as `touche evaluate` scores it."""
    import ir_measures

    from . import fusion
    from .evaluate import read_qrels
    from .fusion import rank
    from .rerank import score_candidates
    from .retrieval import first_stage
    from .settings import RunSettings
    from .runfile import ranked_rows
    from .training.common import TASK, read_dev_topics

    measure = ir_measures.nDCG(judged_only=True) @ 5
    topics = read_dev_topics(data)
    numbers = {topic.number for topic in topics}
    qrels = {name: [qrel for qrel in read_qrels(data / TASK / f"touche-task2-2022-{name}-dev.qrels")
                    if qrel.query_id in numbers] for name in ("relevance", "quality")}
    rows = []
    for length in lengths:
        settings = RunSettings(input_dir=data / TASK / "tira-input", output_dir=Path("/nonexistent"), device=device,
                               progress=False, rerank_depth=max(depths), max_seq_length=length, backend="local",
                               cache_dir=BENCH / "work" / "cache")
        candidates, _, cache, _ = first_stage(settings, topics)
        reranked = score_candidates(topics, candidates, settings, cache)
        full = {qid: topic.features for qid, topic in reranked.scored.items()}
        for depth in depths:
            run = []
            for qid, features in full.items():  # the head of each feature as a run of this depth reads it
                cut = {name: values if name == "lexical" else fusion.padded(values[:depth], len(values))
                       for name, values in features.items()}
                lines = ranked_rows(qid, *rank(candidates[qid], fusion.fuse(cut), settings.depth), None, "bench",
                                    settings.depth)  # scores as the run file prints them: ties broken by rank
                run += [ir_measures.ScoredDoc(line.qid, line.doc_id, line.score) for line in lines]
            row = {"max_seq_length": length, "rerank_depth": depth}
            for name, judged in qrels.items():
                mean = ir_measures.calc_aggregate([measure], judged, run)[measure]
                row[f"{name} nDCG@5 judged-only"] = round(mean, 4)
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def plot(results: list[dict], path: Path) -> None:
    """Wall time and peak RSS against corpus size (log x), one point per measured input."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted((result for result in results  # one point per corpus: no long documents, no forced task
                   if result["input"] not in (LONG_DOCUMENT, WEB_PAGES, ARGS_ME)
                   and not REAL_INPUTS.get(result["input"])),
                  key=lambda result: result["passages"])
    if not rows:  # e.g. only web-pages or args-me measured so far: no corpus-size curve to draw
        return
    sizes = [row["passages"] for row in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(sizes, [row["wall_s"] for row in rows], "o-", label="pipeline (wall)")
    left.plot(sizes, [row["floor_s"] for row in rows], "s--", label="floor: bm25s index + encoding")
    left.axhline(600, color="grey", linestyle=":", label="target 10 min")
    left.set(xscale="log", yscale="log", xlabel="passages", ylabel="seconds", title="Time, 50 topics")
    left.legend(fontsize=8)
    right.plot(sizes, [row["peak_rss_mb"] / 1024 for row in rows], "o-", label="peak RSS")
    right.axhline(4, color="grey", linestyle=":", label="target 4 GB")
    right.set(xscale="log", xlabel="passages", ylabel="GB", title="Peak memory")
    right.legend(fontsize=8)
    for row in rows:
        left.annotate(row["input"], (row["passages"], row["wall_s"]), fontsize=7)
    fig.suptitle(f"touche run on {rows[0]['device']} (load average {rows[-1]['load_avg'][0]} at the end)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def merge(path: Path, result: dict) -> list[dict]:
    """Replace the entry for the same input in results.json, keep the others."""
    results = json.loads(path.read_text()) if path.exists() else []
    results = [entry for entry in results if entry["input"] != result["input"]] + [result]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10k,100k,868k,tira-input,tira-input-controversial,long-document",
                        help="comma-separated: 10k, 100k, 868k, tira-input, tira-input-controversial, long-document, "
                        "web-pages, args-me, args-me-387k")
    parser.add_argument("--device", default="auto", choices=DEVICES)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=BENCH, help="results.json and results.png go here")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--effectiveness", action="store_true",
                        help="print dev-topic nDCG@5 per re-rank depth and max_seq_length instead")
    parser.add_argument("--max-seq-lengths", default="256,128", help="with --effectiveness: lengths to compare")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--name", help=argparse.SUPPRESS)
    parser.add_argument("--task", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:  # every size before the first one's minutes: a typo ended the bench in a traceback
        sizes = [(name, parse_size(name)) for name in args.sizes.split(",")]
    except ValueError as error:
        parser.error(str(error))
    from .errors import ToucheError
    from .training.common import require_data

    # The --measure child reads only the input it is given (and gets no --data): checked by its parent
    needed = [] if args.measure else ["effectiveness"] if args.effectiveness else [
        name if name in DATA_FILES else "tira-input" if size is None else "synthetic" for name, size in sizes]
    try:  # a checkout without ../shared/data: a traceback after the first input's minutes
        for name in needed:
            require_data(args.data, DATA_FILES[name], f"python -m app.bench ({name})")
    except ToucheError as error:
        parser.exit(1, f"error: {error}\n")
    log_to_stderr()
    if args.quiet:  # the libraries' bars too ("Loading weights"), in this process and the children measured
        os.environ.setdefault("TQDM_DISABLE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    work = args.out / "work"
    if args.effectiveness:
        effectiveness(args.data, lengths=tuple(int(n) for n in args.max_seq_lengths.split(",")), device=args.device)
        return
    if args.measure:  # child process: one input, result as the last stdout line
        result = measure(args.measure, args.name, work / "out" / args.name, args.device, not args.quiet, args.task)
        print(json.dumps(result))
        return
    for name, size in sizes:
        if name == LONG_DOCUMENT:
            input_dir = write_long_document(work / name, args.data)
        elif name == WEB_PAGES:
            input_dir = write_web_pages(work / name, args.data)
        elif name == ARGS_ME:
            input_dir = write_args_me(work / name, args.data, args.seed)
        elif name == ARGS_ME_FULL:
            input_dir = write_synthetic_args_me(work / name, ARGS_ME_ARGUMENTS, args.data, args.seed, not args.quiet)
        elif size is None:
            input_dir = args.data / "touche-2022-task2" / "tira-input"
        else:
            name = f"synthetic-{name}"
            input_dir = write_synthetic(work / name, size, args.data, args.seed, not args.quiet)
        command = [sys.executable, "-m", "app.bench", "--measure", str(input_dir), "--name", name,
                   "--device", args.device, "--out", str(args.out)] + (["--quiet"] if args.quiet else [])
        task = "controversial" if name in (ARGS_ME, ARGS_ME_FULL) else REAL_INPUTS.get(name)
        if task:
            command += ["--task", task]
        child = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
        result = json.loads(child.stdout.strip().splitlines()[-1])
        log.info("%s: %s", name, json.dumps(result))
        results = merge(args.out / "results.json", result)
        plot(results, args.out / "results.png")


if __name__ == "__main__":
    main()
