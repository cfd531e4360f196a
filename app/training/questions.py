"""Train the question classifier (`app/models/questions.{npz,json}`) from ../shared/data.

    python -m app.training.questions [DATA_DIR] [--out-dir app/models] [--seed 13]

Data (Webis-CompQuestions-22 and the Touché topic files):
- comparative heads: all 33,511 questions of `comparative-opinion-fact-questions/full.tsv` (label `comp`);
- argumentative heads: the 1,590 comparative questions labelled either `opinion` (argumentative) or `factual`,
  and the titles of every Touché topics file (argumentative by construction);
  each decision has a head over hashed n-grams and one over the questions' all-MiniLM-L6-v2 embeddings (`encode`;
  about 3 minutes for all questions on 2 cores), their probabilities averaged;
- object tagger: the 3,530 questions with OBJ/ASP/PRED/O token tags of `comparative-questions-parsing/full.tsv`.

Each part is first evaluated on a seeded, stratified random 20% held out from the labelled data (the rule
baseline on the same rows), then retrained on all of it; the scores go into the JSON artefact and to stdout.
"""

from __future__ import annotations

import csv
import json
import logging
import re
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score, precision_recall_fscore_support
from sklearn.model_selection import train_test_split

from app.encoder import encode
from app.files import atomic_file
from app.heads import check_finite
from app.questions import (HASH_BITS, SETTINGS_FILE, TAGS, WEIGHTS_FILE, DenseHead, HashedHead, ModelClassifier,
                           RuleClassifier, Tagger, decision, hash_features, head_probabilities, question_features,
                           rule_type, spans_of, token_features)
from app.records import Topic
from app.topics import read_topics
from app.training import common

log = logging.getLogger(__name__)

COMPQ = Path("comparative-questions") / "Webis-CompQuestions-22"
TOPIC_FILES = ("touche-2020-task1/topics-task-1-2020.xml", "touche-2021-task1/topics-task-1-2021.xml",
               "touche-2020-task2/topics-task-2.xml", "touche-2021-task2/topics-task-2-2021-only-titles.xml",
               "touche-2022-task2/topics-task2.xml")
GOLD_OBJECTS = "touche-2022-task2/topics-task2.xml"
HEAD_C = 1.0
TAGGER_C = 1.0
# The tag-transition log-probabilities are scaled by this before Viterbi decoding: at full weight they cost the
# token measure (3-fold CV on the 80% training part, OBJ F1: 0.802 at 1, 0.829 at 0 (argmax), 0.833 at 0.25;
# `python scripts/question_experiments.py transition-weights`).
TRANSITION_WEIGHT = 0.25
# What this module reads under the data folder (docs/DATA.md); checked before training.
DATA_FILES = (f"{COMPQ}/comparative-opinion-fact-questions/full.tsv", f"{COMPQ}/comparative-questions-parsing/full.tsv",
              *TOPIC_FILES, common.DEV_TOPIC_NUMBERS)
OUTPUTS = (WEIGHTS_FILE, SETTINGS_FILE)  # what it writes into --out, checked before the training


# ---------------------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------------------

def read_labelled_questions(data_dir: Path) -> list[dict]:
    with common.reading(data_dir / COMPQ / "comparative-opinion-fact-questions" / "full.tsv") as f:
        return list(common.csv_rows(f, ("question", "comp", "factual", "opinion"), {"comp": ("0", "1")},
                                    delimiter="\t", quoting=csv.QUOTE_NONE))


def read_tagged_questions(data_dir: Path) -> list[tuple[list[str], list[str]]]:
    sentences: dict[str, tuple[list[str], list[str]]] = {}
    with common.reading(data_dir / COMPQ / "comparative-questions-parsing" / "full.tsv") as f:
        for row in common.csv_rows(f, ("sentence_id", "words", "labels"), {"labels": TAGS}, delimiter="\t",
                                   quoting=csv.QUOTE_NONE):
            words, tags = sentences.setdefault(row["sentence_id"], ([], []))
            words.append(row["words"].lower())
            tags.append(row["labels"])
    return list(sentences.values())


# ---------------------------------------------------------------------------------------------------------
# Fitting
# ---------------------------------------------------------------------------------------------------------

def feature_matrix(feature_lists: list[list[str]]) -> sparse.csr_matrix:
    rows, cols = [], []
    for r, feats in enumerate(feature_lists):
        idx = np.unique(hash_features(feats))
        rows.append(np.full(len(idx), r))
        cols.append(idx)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)),
                             shape=(len(feature_lists), 1 << HASH_BITS))


def fit_head(questions: list[str], labels: list[int], seed: int, c: float = HEAD_C) -> HashedHead:
    model = LogisticRegression(C=c, max_iter=2000, class_weight="balanced", random_state=seed)
    model.fit(feature_matrix([question_features(q) for q in questions]), labels)
    return HashedHead(model.coef_.astype(np.float32), model.intercept_.astype(np.float32))


class Embedded:
    """The questions' sentence embeddings, each question encoded once: evaluation and training read the same."""

    def __init__(self):
        self.vectors: dict[str, np.ndarray] = {}

    def __call__(self, questions: list[str]) -> np.ndarray:
        missing = [q for q in dict.fromkeys(questions) if q not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, encode(missing)))
        return np.stack([self.vectors[q] for q in questions])


def fit_heads(questions: list[str], labels: list[int], seed: int, embed: Embedded,
              c: float = HEAD_C) -> tuple[HashedHead, DenseHead]:
    """A decision's two heads: over hashed n-grams and over embeddings (the same C and class weights)."""
    model = LogisticRegression(C=c, max_iter=3000, class_weight="balanced", random_state=seed)
    model.fit(embed(questions), labels)
    return fit_head(questions, labels, seed, c), DenseHead(model.coef_[0].astype(np.float32),
                                                           float(model.intercept_[0]))


def decide(head: tuple[HashedHead, DenseHead], questions: list[str], embed: Embedded) -> dict[str, np.ndarray]:
    """P(positive) of each question by the head as runs decide ("both") and by each of its parts alone ("ngrams",
    "embedding")."""
    parts = head_probabilities(head, [hash_features(question_features(q)) for q in questions], embed(questions))
    return {"both": decision(parts), "ngrams": parts[0], "embedding": parts[1]}


def fit_tagger(sentences: list[tuple[list[str], list[str]]], seed: int, c: float = TAGGER_C,
               transition_weight: float = TRANSITION_WEIGHT) -> Tagger:
    feats, labels = [], []
    transitions, start = np.ones((len(TAGS), len(TAGS))), np.ones(len(TAGS))  # add-one smoothing
    for words, tags in sentences:
        ids = [TAGS.index(t) for t in tags]
        start[ids[0]] += 1
        for a, b in zip(ids, ids[1:]):
            transitions[a, b] += 1
        feats += [token_features(words, i) for i in range(len(words))]
        labels += ids
    model = LogisticRegression(C=c, max_iter=2000, random_state=seed)
    model.fit(feature_matrix(feats), labels)
    head = HashedHead(model.coef_.astype(np.float32), model.intercept_.astype(np.float32))
    transitions = np.log(transitions / transitions.sum(axis=1, keepdims=True)) * transition_weight
    return Tagger(head, transitions.astype(np.float32),
                  (np.log(start / start.sum()) * transition_weight).astype(np.float32))


# ---------------------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------------------

def macro_f1(gold: list, predicted: list, labels: list) -> float:
    return round(float(f1_score(gold, predicted, labels=labels, average="macro", zero_division=0)), 4)


def token_f1(gold: list[list[str]], predicted: list[list[str]]) -> dict:
    flat_gold = [t for s in gold for t in s]
    flat_pred = [t for s in predicted for t in s]
    p, r, f, _ = precision_recall_fscore_support(flat_gold, flat_pred, labels=["OBJ", "ASP", "PRED"],
                                                 zero_division=0)
    scores = {tag: {"precision": round(float(p[i]), 4), "recall": round(float(r[i]), 4),
                    "f1": round(float(f[i]), 4)} for i, tag in enumerate(["OBJ", "ASP", "PRED"])}
    return scores


def normalise_object(text: str) -> str:
    words = re.findall(r"\w+", text.lower())
    if len(words) > 1 and words[0] in {"a", "an", "the"}:
        words = words[1:]
    return " ".join(words)


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def written_pairs(tagged: list[tuple[list[str], list[str]]], questions: list[str]) -> list[tuple[str, tuple]]:
    """(question as written, its two objects) for each tagged question with two OBJ runs that `questions` holds
    (matched by their words): the tagged file keeps lowercase words only, without the capitals, commas and colons
    that the object rules read."""
    written: dict[str, str] = {}
    for question in questions:
        written.setdefault(_words(question), question)
    pairs = []
    for words, tags in tagged:
        runs = tuple(" ".join(words[s:e]) for s, e in spans_of(tags, "OBJ"))
        question = written.get(_words(" ".join(words)))
        if len(runs) == 2 and question is not None:
            pairs.append((question, runs))
    return pairs


def exact_pairs(extract, pairs: list[tuple[str, tuple]]) -> float:
    """Share of `pairs` whose two objects `extract(question)` gives exactly, as `exact_objects` compares them."""
    return round(float(np.mean([tuple(map(normalise_object, extract(question)[0]))
                                == tuple(map(normalise_object, objects)) for question, objects in pairs])), 4)


def exact_objects(classifier, topics: list[Topic]) -> dict:
    """Share of topics whose two objects come out exactly, in order (case, punctuation and a leading
    article ignored), from `analyze` (gated by the comparative decision) and from `extract_objects`."""
    analysed = sum(tuple(map(normalise_object, classifier.analyze(t.title).objects))
                   == tuple(map(normalise_object, t.objects)) for t in topics)
    extracted = sum(tuple(map(normalise_object, classifier.extract_objects(t.title)[0]))
                    == tuple(map(normalise_object, t.objects)) for t in topics)
    return {"topics": len(topics), "exact_analyze": round(analysed / len(topics), 4),
            "exact_extract": round(extracted / len(topics), 4)}


_PART_SCORES = {"both": "model_macro_f1", "ngrams": "ngrams_macro_f1", "embedding": "embedding_macro_f1"}


def evaluate(data_dir: Path, seed: int, embed: Embedded) -> dict:
    """Held-out scores of the learned parts and of the rule baseline on the same rows; each decision's two heads
    also alone."""
    rows = read_labelled_questions(data_dir)
    rules = RuleClassifier()
    report: dict = {"split": f"random stratified 20% held out, seed {seed}"}

    train, test = train_test_split(rows, test_size=0.2, random_state=seed, stratify=[r["comp"] for r in rows])
    head = fit_heads([r["question"] for r in train], [int(r["comp"]) for r in train], seed, embed)
    gold, questions = [int(r["comp"]) for r in test], [r["question"] for r in test]
    baseline = [int(rules.analyze(r["question"]).comparative) for r in test]
    report["comparative"] = {"test_questions": len(test), "rules_macro_f1": macro_f1(gold, baseline, [0, 1])}
    for part, probabilities in decide(head, questions, embed).items():
        report["comparative"][_PART_SCORES[part]] = macro_f1(gold, list((probabilities >= 0.5).astype(int)), [0, 1])

    opinion = [r for r in rows if {r["factual"], r["opinion"]} == {"0", "1"}]
    train, test = train_test_split(opinion, test_size=0.2, random_state=seed, stratify=[r["opinion"] for r in opinion])
    topics = argumentative_titles(data_dir)
    gold = ["argumentative" if r["opinion"] == "1" else "factual" for r in test]
    report["factual_vs_opinion"] = {"test_questions": len(test),
                                    "rules_macro_f1": macro_f1(gold, [rule_type(r["question"]) for r in test],
                                                               ["argumentative", "factual"])}
    questions = [r["question"] for r in test]
    for extra, scores in ((topics, _PART_SCORES), ([], {"both": "model_without_touche_titles_macro_f1"})):
        head = fit_heads([r["question"] for r in train] + extra, [int(r["opinion"]) for r in train] + [1] * len(extra),
                         seed, embed)
        for part, probabilities in decide(head, questions, embed).items():
            if part in scores:
                predicted = ["argumentative" if p >= 0.5 else "factual" for p in probabilities]
                report["factual_vs_opinion"][scores[part]] = macro_f1(gold, predicted, ["argumentative", "factual"])
    report["factual_vs_opinion"]["note"] = ("rules predict 'method' for how-questions; those count as wrong "
                                            "since the test rows are labelled argumentative or factual")

    # Touché titles: each topics file held out in turn from the argumentative training data.
    recalls = {}
    for path in TOPIC_FILES:
        held = {t.title for t in read_topics(data_dir / path)}
        others = [t for t in topics if t not in held]
        head = fit_heads([r["question"] for r in opinion] + others,
                         [int(r["opinion"]) for r in opinion] + [1] * len(others), seed, embed)
        recalls[path] = round(float(np.mean(decide(head, sorted(held), embed)["both"] >= 0.5)), 4)
    report["touche_titles_argumentative_leave_one_file_out"] = recalls
    report["touche_titles_argumentative_rules"] = round(float(np.mean(
        [rule_type(t) == "argumentative" for t in topics])), 4)

    sentences = read_tagged_questions(data_dir)
    train, test = train_test_split(sentences, test_size=0.2, random_state=seed)
    tagger = fit_tagger(train, seed)
    report["tagging"] = {"test_questions": len(test),
                         "model": token_f1([t for _, t in test], [tagger.tag(w) for w, _ in test]),
                         "rules": token_f1([t for _, t in test], [RuleClassifier.object_tags(w) for w, _ in test])}
    pairs = written_pairs(test, [r["question"] for r in rows])
    report["tagging"]["object_pairs_as_written"] = {"questions": len(pairs),
                                                    "model": exact_pairs(tagger.objects, pairs),
                                                    "rules": exact_pairs(rules.extract_objects, pairs)}
    return report


def argumentative_titles(data_dir: Path) -> list[str]:
    return sorted({t.title for path in TOPIC_FILES for t in read_topics(data_dir / path)})


# ---------------------------------------------------------------------------------------------------------
# Training the shipped model
# ---------------------------------------------------------------------------------------------------------

def train(data_dir: Path, seed: int, embed: Embedded) -> ModelClassifier:
    rows = read_labelled_questions(data_dir)
    comparative = fit_heads([r["question"] for r in rows], [int(r["comp"]) for r in rows], seed, embed)
    opinion = [r for r in rows if {r["factual"], r["opinion"]} == {"0", "1"}]
    topics = argumentative_titles(data_dir)
    argumentative = fit_heads([r["question"] for r in opinion] + topics,
                              [int(r["opinion"]) for r in opinion] + [1] * len(topics), seed, embed)
    return ModelClassifier(comparative, argumentative, fit_tagger(read_tagged_questions(data_dir), seed))


def save(model: ModelClassifier, out_dir: Path, report: dict, seed: int) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    settings = {"hash_bits": HASH_BITS, "tags": list(TAGS), "comparative_threshold": model.threshold,
                "seed": seed, "head_c": HEAD_C, "tagger_c": TAGGER_C, "transition_weight": TRANSITION_WEIGHT,
                "trained_on": "Webis-CompQuestions-22 (comparative-opinion-fact-questions, "
                              "comparative-questions-parsing) and the Touché topic titles",
                "evaluation": report}
    (comparative, comparative_dense), (argumentative, argumentative_dense) = model.comparative, model.argumentative
    arrays = dict(comparative_w=comparative.weights.astype(np.float16), comparative_b=comparative.bias,
                  comparative_dense_w=comparative_dense.weights, comparative_dense_b=np.float32(comparative_dense.bias),
                  argumentative_w=argumentative.weights.astype(np.float16), argumentative_b=argumentative.bias,
                  argumentative_dense_w=argumentative_dense.weights,
                  argumentative_dense_b=np.float32(argumentative_dense.bias),
                  tagger_w=model.tagger.head.weights.astype(np.float16), tagger_b=model.tagger.head.bias,
                  transitions=model.tagger.transitions, start=model.tagger.start)
    check_finite(arrays, "question classifier", out_dir / WEIGHTS_FILE)
    # Both written whole or not at all (a full disk left a cut questions.npz beside the old questions.json); the
    # weights are placed first, their settings last.
    with atomic_file(out_dir / SETTINGS_FILE) as text, atomic_file(out_dir / WEIGHTS_FILE, binary=True) as weights:
        np.savez_compressed(weights, **arrays)
        text.write(json.dumps(settings, indent=2) + "\n")
    log.info("wrote %s and %s", out_dir / WEIGHTS_FILE, out_dir / SETTINGS_FILE)


def main(data_dir: Path = common.DEFAULT_DATA_DIR, out_dir: Path = common.DEFAULT_OUT_DIR,
         seed: int = 13) -> dict:
    """Evaluate on held-out splits, retrain on everything, write the artefacts; returns the scores."""
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    embed = Embedded()
    log.info("evaluating on held-out splits")
    report = evaluate(data_dir, seed, embed)
    log.info("training on all data")
    model = train(data_dir, seed, embed)
    gold = [t for t in read_topics(data_dir / GOLD_OBJECTS) if t.objects]
    dev = set(common.dev_topic_numbers(data_dir))
    report["touche_objects"] = {"file": GOLD_OBJECTS}
    for part, topics in (("all", gold), ("dev", [t for t in gold if t.number in dev]),
                         ("test", [t for t in gold if t.number not in dev])):
        report["touche_objects"][part] = {"model": exact_objects(model, topics),
                                          "rules": exact_objects(RuleClassifier(), topics)}
    save(model, out_dir, report, seed)
    return report


def cli(argv: list[str] | None = None) -> None:
    print(json.dumps(common.run(main, common.parser(__doc__), argv), indent=2))


if __name__ == "__main__":
    cli()
