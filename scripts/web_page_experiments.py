"""Web pages as passages (issue 19): the measurements behind the choices in app/passages.py and app/rerank.py.

    ../shared/tools/web-pages-check.sh --out OUT_A [-- touche run flags]        # one arm of the dev loop
    python scripts/web_page_experiments.py compare OUT_A OUT_B [OUT_C ...]    # per topic, paired bootstrap
    python scripts/web_page_experiments.py page-stance                        # about 3 min on 2 cores
    python scripts/web_page_experiments.py short-documents BEFORE/run.txt AFTER/run.txt [--input DIR]
    python scripts/web_page_experiments.py failed-pages OUT [--share 0.3] [--seed 13]  # about 4 min
    python scripts/web_page_experiments.py local-bm25 OUT                     # about 1 min

- compare: judged-only nDCG@5 (relevance 2020 and 2021, quality 2021) of the runs the dev loop left in each OUT,
  with the judgements restricted to the served pages (as ../shared/tools/touche_eval.py computes it), per topic,
  and each run's mean difference to the first with a 95% paired bootstrap interval over topics. `OUT/chatnoir.txt`
  of the first OUT joins as "chatnoir", ChatNoir's own order.
- page-stance: a proxy for the stance of whole pages. Of the stance-judged 2022 Task 2 dev passages, those whose
  parent page (the id before "___") is among the dev pages are compared with the page's label, read two ways: as
  the run reads a long document (its best passage for the topic, app.rerank) and as the first 256 word pieces of
  the page's text (the stance models' reading before windows). Also the judged passage itself, the ceiling. The
  comparative stance head was fitted on these dev passages, so the passage figure is optimistic.
- short-documents: two runs on the same local input (by default the 2022 Task 2 tira-input), before and after the
  passages: for every document the encoder reads whole (one passage) and that both runs rerank (rank within the
  rerank depth; the tail's scores follow the head's minimum), its stance and score per topic: how many rows are
  identical, and the largest score difference (bf16 encoding in batches of other neighbours moves the 6th decimal).
- failed-pages: the dev loop with a share of the served pages (drawn with the seed) answered empty by ChatNoir's
  cache, so the run reads them as their title + snippet (app.rerank.typical_where_unknown); OUT is then an arm for
  `compare`. The loop's stand-in is copied into OUT/tools and taught to fail the pages listed in OUT/failed.txt.
- local-bm25: the dev pages as a local corpus (OUT/input: documents.jsonl, each page's text as the ChatNoir route
  reads its cache page, its <title> as the record's title; topics.xml, the dev topics), ranked by the BM25 first
  stage alone (app.retrieval.first_stage, OUT/run.txt), scored as `compare` scores: how a local corpus of whole
  pages is searched (app.passages.PassageIndex).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import importlib.util
import json
import logging
import os
import random
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from app.report import bootstrap_interval

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
DATA = SHARED / "data"
PAGES = DATA / "web-pages-clueweb12" / "pages-dev.jsonl.gz"
YEARS = {
    "2020": (DATA / "touche-2020-task2" / "touche2020-task2-relevance-withbaseline.qrels", None),
    "2021": (DATA / "touche-2021-task2" / "touche-task2-51-100-relevance.qrels",
             DATA / "touche-2021-task2" / "touche-task2-51-100-quality.qrels"),
}
TASK_2022 = DATA / "touche-2022-task2"
STANCE_LABELS = ("FIRST", "SECOND", "NEUTRAL", "NO")


@functools.cache
def evaluator():
    """The acceptance tests' evaluator (../shared/tools/touche_eval.py), imported as a module."""
    spec = importlib.util.spec_from_file_location("touche_eval", SHARED / "tools" / "touche_eval.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def served_pages(path: Path = PAGES) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def per_topic(run: Path, qrels: Path, served: set[str], year: str) -> dict[str, float]:
    """Judged-only nDCG@5 per topic of `year` with at least one judged served page."""
    tools = evaluator()
    judged = {topic: {doc: grade for doc, grade in found.items() if doc in served}
              for topic, found in tools.read_qrels(str(qrels)).items()
              if (int(topic) <= 50) == (year == "2020")}
    ranked = {topic: [(doc, stance) for doc, stance in found if doc in served]
              for topic, found in tools.read_run(str(run)).items()}
    return {topic: tools.ndcg_judged(ranked.get(topic, []), found, 5) for topic, found in judged.items()
            if found and topic in ranked}


def compare(outs: list[Path]) -> None:
    served = {page["doc_id"] for page in served_pages()}
    runs = {"chatnoir": outs[0] / "chatnoir.txt", **{out.name: out / "run.txt" for out in outs}}
    for year, (relevance, quality) in YEARS.items():
        for measure, qrels in (("relevance", relevance), ("quality", quality)):
            if qrels is None:
                continue
            # Topics judged for relevance: those the dev loop scores, quality included.
            topics = sorted(per_topic(runs["chatnoir"], relevance, served, year), key=int)
            scores = {name: per_topic(run, qrels, served, year) for name, run in runs.items()}
            topics = [topic for topic in topics if all(topic in found for found in scores.values())]
            base = np.array([scores[outs[0].name][topic] for topic in topics])
            print(f"\n{year} {measure}, judged-only nDCG@5 over {len(topics)} topics; difference to {outs[0].name}")
            for name, found in scores.items():
                values = np.array([found[topic] for topic in topics])
                low, high = bootstrap_interval(values - base)
                print(f"  {name:24s} {values.mean():.3f}  {values.mean() - base.mean():+.3f} [{low:+.3f}, {high:+.3f}]")
            print("  per topic: " + "  ".join(
                f"{topic}:" + "/".join(f"{scores[name][topic]:.2f}" for name in scores) for topic in topics))
            print(f"  (order: {', '.join(scores)})")


def parent(passage: str) -> str:
    """The page a 2022 Task 2 passage comes from: its id before "___"."""
    return passage.split("___")[0]


def macro_f1(pairs: list[tuple[str, str]]) -> float:
    return evaluator().macro_f1(pairs, STANCE_LABELS)


def page_stance(depth: int) -> None:
    """The stance proxy: judged passage labels against page labels read by best passage or by the first pieces."""
    from app.html import read_page
    from app.passages import Passage
    from app.labelling import detect_stances
    from app.questions import topic_task
    from app.rerank import encode_passages, encode_queries, score_candidates
    from app.settings import RunSettings
    from app.records import Candidate, Document, bounded_text
    from app.topics import read_topics

    dev = set((TASK_2022 / "dev-topics.txt").read_text().strip().split(","))
    truth: dict[str, dict[str, str]] = defaultdict(dict)
    for line in (TASK_2022 / "touche-task2-2022-stance-dev.qrels").read_text().splitlines():
        topic, _, passage, label = line.split()
        if topic in dev:
            truth[topic][passage] = label
    pages = {page["doc_id"]: page["html"] for page in served_pages()}
    topics = [topic for topic in read_topics(TASK_2022 / "topics-task2.xml") if topic.number in truth]
    task, topics, _ = topic_task(topics, "comparative")
    passages_by_id = {}
    with gzip.open(TASK_2022 / "tira-input" / "passages.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            passages_by_id[record["id"]] = record["contents"]

    candidates, judged_passages = {}, {}
    for topic in topics:
        parents = sorted({parent(passage) for passage in truth[topic.number]} & set(pages))
        candidates[topic.number] = [
            Candidate(topic.number, Document(page_id, bounded_text(read_page(pages[page_id]))),
                      float(len(parents) - rank))
            for rank, page_id in enumerate(parents)]
        judged_passages[topic.number] = [
            Candidate(topic.number, Document(passage, passages_by_id[passage]), 0.0)
            for passage in truth[topic.number] if passage in passages_by_id]
    settings = RunSettings(input_dir=TASK_2022 / "tira-input", output_dir=Path("unused"), rerank_depth=depth,
                           stance_depth=depth, progress=False)
    queries = encode_queries(topics, settings)

    def labels_by(candidate_sets, passages=None) -> dict[str, dict[str, str]]:
        if passages is None:
            encoded, _, scored = score_candidates(topics, candidate_sets, settings, None)
            best = {qid: found.read_passages for qid, found in scored.items()}
        else:
            encoded = encode_passages(passages, settings, None)
            best = {qid: {doc: [encoded.rows[read[0].key]] for doc, read in found.items()}
                    for qid, found in passages.items()}
        ranked = {qid: ([c.doc.doc_id for c in found], [0.0] * len(found)) for qid, found in candidate_sets.items()}
        stances = detect_stances(topics, ranked, best, encoded, queries, task, settings)
        return {qid: dict(zip(ranked[qid][0], stances[qid])) for qid in stances}

    def read_whole(candidate_sets) -> dict[str, dict[str, list[Passage]]]:
        """Each document as one passage: the encoder reads its first 256 word pieces."""
        return {qid: {c.doc.doc_id: [Passage(c.doc.doc_id, c.doc.text)] for c in found}
                for qid, found in candidate_sets.items()}

    def itself(passage: str) -> str:
        return passage

    # Each reading: its labels by topic and document, and which document a judged passage is labelled by.
    readings = {
        "page, best passage (the run)": (labels_by(candidates), parent),
        "page, first 256 word pieces": (labels_by(candidates, read_whole(candidates)), parent),
        "the judged passage itself": (labels_by(judged_passages, read_whole(judged_passages)), itself),
    }
    for name, (labels, labelled_by) in readings.items():
        pairs = [(labels[qid].get(labelled_by(passage), "Q0"), label)
                 for qid, found in truth.items() for passage, label in found.items()
                 if parent(passage) in pages and qid in labels]
        counts = {label: sum(1 for _, truth_label in pairs if truth_label == label) for label in STANCE_LABELS}
        print(f"{name:32s} macro-F1 {macro_f1(pairs):.3f} over {len(pairs)} judged passages {counts}")


def short_documents(before: Path, after: Path, input_dir: Path, depth: int = 100) -> None:
    """Rows of one-passage documents must be byte-identical (score and stance) before and after."""
    from app import encoder
    from app.corpus import detect_corpus, read_documents

    documents = list(read_documents(detect_corpus(input_dir)))
    whole = {document.doc_id for document, fits in zip(documents, encoder.fits([d.text for d in documents]))
             if fits}

    def rows(path: Path) -> dict[tuple[str, str], tuple[str, str]]:
        found = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            topic, stance, doc_id, rank, score, _ = line.split()
            if int(rank) <= depth:
                found[topic, doc_id] = (stance, score)
        return found

    old, new = rows(before), rows(after)
    shared = [key for key in old if key in new and key[1] in whole]
    identical = sum(old[key] == new[key] for key in shared)
    stances = sum(old[key][0] == new[key][0] for key in shared)
    largest = max((abs(float(old[key][1]) - float(new[key][1])), key) for key in shared)
    print(f"{len(whole)} of {len(documents)} documents are read whole; {len(shared)} of their reranked rows are in "
          f"both runs: {identical} identical, {stances} with the same stance, largest score difference "
          f"{largest[0]:.6f} (topic {largest[1][0]}, {largest[1][1]})")


# What teaches a copy of the dev loop's stand-in to answer the pages listed in $STANDIN_FAIL empty.
_STANDIN_FAIL = (
    ('    seen = Counter(); log = os.environ.get("STANDIN_LOG")\n',
     '    seen = Counter(); log = os.environ.get("STANDIN_LOG")\n'
     '    failed = set(open(os.environ["STANDIN_FAIL"]).read().split()) '
     'if os.environ.get("STANDIN_FAIL") else set()\n'),
    ('                if a.mode == "empty-pages":\n',
     '                if a.mode == "empty-pages" or d["trec_id"] in failed:\n'),
)


def failed_pages(out: Path, share: float, seed: int) -> None:
    tools = out / "tools"
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(tools, ignore_errors=True)
    shutil.copytree(SHARED / "tools", tools)
    (out / "data").unlink(missing_ok=True)
    (out / "data").symlink_to(DATA)  # the check script finds the data beside its folder
    standin = tools / "chatnoir_standin.py"
    code = standin.read_text()
    for old, new in _STANDIN_FAIL:
        if code.count(old) != 1:
            sys.exit(f"{standin}: the stand-in changed, {old.strip()!r} is not found once")
        code = code.replace(old, new)
    standin.write_text(code)
    pages = [page["doc_id"] for page in served_pages()]
    failed = random.Random(seed).sample(pages, round(share * len(pages)))
    (out / "failed.txt").write_text("\n".join(failed) + "\n")
    print(f"{len(failed)} of {len(pages)} pages answered empty", file=sys.stderr)
    subprocess.run([str(tools / "web-pages-check.sh"), "--out", str(out)], check=True,
                   env={**os.environ, "STANDIN_FAIL": str(out / "failed.txt")})


def local_bm25(out: Path) -> None:
    from resiliparse.parse.html import HTMLTree

    from app.bench import write_web_page_topics
    from app.charset import readable
    from app.chatnoir import MAX_PAGE_CHARS
    from app.html import read_page, without_bulk
    from app.records import clean_text
    from app.retrieval import first_stage
    from app.settings import RunSettings
    from app.topics import read_topics

    corpus = out / "input"
    write_web_page_topics(corpus, DATA)
    served = set()
    with (corpus / "documents.jsonl").open("w", encoding="utf-8") as documents:
        for page in served_pages():
            markup = readable(page["html"])  # as ChatNoirClient.cached_text reads a cache page
            text = readable(read_page(without_bulk(markup, MAX_PAGE_CHARS) if len(markup) > MAX_PAGE_CHARS
                                      else markup))
            title = clean_text(" ".join((HTMLTree.parse(markup).title or "").split()))
            documents.write(json.dumps({"doc_id": page["doc_id"], "title": title, "text": text}) + "\n")
            served.add(page["doc_id"])
    settings = RunSettings(input_dir=corpus, output_dir=out / "unused", cache_dir=out / "cache", progress=False)
    candidates = first_stage(settings, read_topics(corpus)).candidates
    with (out / "run.txt").open("w") as run:
        for qid, found in candidates.items():
            run.writelines(f"{qid} Q0 {candidate.doc.doc_id} {rank} {candidate.score:.6f} bm25\n"
                           for rank, candidate in enumerate(found, 1))
    for year, (relevance, quality) in YEARS.items():
        for measure, qrels in (("relevance", relevance), ("quality", quality)):
            if qrels is not None:
                scores = per_topic(out / "run.txt", qrels, served, year)
                scores = {topic: scores[topic] for topic in per_topic(out / "run.txt", relevance, served, year)}
                print(f"{year} {measure}, judged-only nDCG@5 over {len(scores)} topics: "
                      f"{sum(scores.values()) / len(scores):.3f}")


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    runs = commands.add_parser("compare", help="per-topic scores and paired intervals of dev-loop outputs")
    runs.add_argument("outs", nargs="+", type=Path, help="--out folders of ../shared/tools/web-pages-check.sh")
    stance = commands.add_parser("page-stance", help="page-level stance against judged 2022 dev passages")
    stance.add_argument("--depth", type=int, default=100, help="pages per topic read for stance (all: 100)")
    short = commands.add_parser("short-documents", help="one-passage documents score the same before and after")
    short.add_argument("before", type=Path)
    short.add_argument("after", type=Path)
    short.add_argument("--input", type=Path, default=TASK_2022 / "tira-input")
    failing = commands.add_parser("failed-pages", help="the dev loop with a share of the pages not fetched")
    failing.add_argument("out", type=Path)
    failing.add_argument("--share", type=float, default=0.3)
    failing.add_argument("--seed", type=int, default=13)
    local = commands.add_parser("local-bm25", help="the dev pages as a local corpus, BM25 alone")
    local.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "compare":
        compare(args.outs)
    elif args.command == "page-stance":
        page_stance(args.depth)
    elif args.command == "failed-pages":
        failed_pages(args.out, args.share, args.seed)
    elif args.command == "local-bm25":
        local_bm25(args.out)
    else:
        short_documents(args.before, args.after, args.input)


if __name__ == "__main__":
    main()
