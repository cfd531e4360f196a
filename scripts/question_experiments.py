"""Question classifier experiments; this script reproduces the figures behind choices in app/training/questions.py.

    python scripts/question_experiments.py transition-weights    # about 30 s on 2 cores
    python scripts/question_experiments.py embedding-heads       # about 6 minutes

- transition-weights: the tagger's Viterbi decoding weighs the tag-transition log-probabilities
  (`TRANSITION_WEIGHT`); the weight is chosen by OBJ F1 in 3-fold CV on the tagged questions' training 80% (the 20%
  that `touche train questions` reports on stays out), each fold's tagger fitted once and decoded at every weight.
  Measured: 0 (per-token argmax) 0.8285, 0.1 0.8318, 0.25 0.8332 (shipped), 0.5 0.8267, 1 0.8017.
- embedding-heads: each decision's probability as `share` x the embedding head's + (1 - share) x the n-gram head's
  (shipped: 0.5, the plain mean; 0.75 scored higher on factual vs opinion but lower on the Touché titles),
  macro-F1 over random stratified 20% splits of several seeds (comparative: 3, factual vs opinion: 5, Touché titles
  in its training as shipped), and of the argumentative head the share of each Touché topics file's titles called
  argumentative, that file left out of its training.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

import numpy as np
from sklearn.model_selection import KFold, train_test_split

from app.questions import Tagger
from app.topics import read_topics
from app.training import common
from app.training.questions import (TOPIC_FILES, Embedded, argumentative_titles, decide, fit_heads, fit_tagger,
                                    macro_f1, read_labelled_questions, read_tagged_questions, token_f1)

WEIGHTS = (0.0, 0.1, 0.25, 0.5, 1.0)
SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)


def transition_weights(seed: int = 13) -> dict:
    """Mean OBJ F1 over 3 folds of the training part at each transition weight."""
    sentences = read_tagged_questions(common.DEFAULT_DATA_DIR)
    train, _ = train_test_split(sentences, test_size=0.2, random_state=seed)  # as `evaluate` splits
    found: dict[float, list[float]] = {weight: [] for weight in WEIGHTS}
    for fold, (fit_rows, held_rows) in enumerate(KFold(3, shuffle=True, random_state=seed).split(train)):
        tagger = fit_tagger([train[i] for i in fit_rows], seed, transition_weight=1.0)
        held = [train[i] for i in held_rows]
        for weight in WEIGHTS:
            weighed = Tagger(tagger.head, tagger.transitions * weight, tagger.start * weight)
            found[weight].append(token_f1([tags for _, tags in held], [weighed.tag(words) for words, _ in held])
                                 ["OBJ"]["f1"])
        logging.info("fold %d: %s", fold, {weight: scores[-1] for weight, scores in found.items()})
    return {str(weight): {"folds": scores, "mean": round(float(np.mean(scores)), 4)}
            for weight, scores in found.items()}


def embedding_heads(seed: int = 13) -> dict:
    """Macro-F1 of both decisions and the Touché titles' recall at each share of the embedding head."""
    data, embed = common.DEFAULT_DATA_DIR, Embedded()
    rows, titles = read_labelled_questions(data), argumentative_titles(data)
    opinion = [r for r in rows if {r["factual"], r["opinion"]} == {"0", "1"}]
    found: dict = {}
    for name, labelled, label, seeds, extra in (("comparative", rows, "comp", (seed, 1, 2), []),
                                                ("factual_vs_opinion", opinion, "opinion", (seed, 1, 2, 3, 4), titles)):
        scores: dict[float, list[float]] = {share: [] for share in SHARES}
        for split in seeds:
            train, test = train_test_split(labelled, test_size=0.2, random_state=split,
                                           stratify=[r[label] for r in labelled])
            head = fit_heads([r["question"] for r in train] + extra, [int(r[label]) for r in train] + [1] * len(extra),
                             seed, embed)
            questions, gold = [r["question"] for r in test], [int(r[label]) for r in test]
            found_by = decide(head, questions, embed)
            ngrams, embedded = found_by["ngrams"], found_by["embedding"]
            for share in SHARES:
                predicted = list(((1 - share) * ngrams + share * embedded >= 0.5).astype(int))
                scores[share].append(macro_f1(gold, predicted, [0, 1]))
            logging.info("%s, split %d: %s", name, split, {share: s[-1] for share, s in scores.items()})
        found[name] = {str(share): {"splits": s, "mean": round(float(np.mean(s)), 4)} for share, s in scores.items()}
    recalls: dict = {str(share): {} for share in SHARES}
    for path in TOPIC_FILES:
        held = sorted({t.title for t in read_topics(data / path)})
        others = [t for t in titles if t not in set(held)]
        head = fit_heads([r["question"] for r in opinion] + others, [int(r["opinion"]) for r in opinion]
                         + [1] * len(others), seed, embed)
        found_by = decide(head, held, embed)
        ngrams, embedded = found_by["ngrams"], found_by["embedding"]
        for share in SHARES:
            recalls[str(share)][path] = round(float(np.mean((1 - share) * ngrams + share * embedded >= 0.5)), 4)
    found["touche_titles_argumentative_leave_one_file_out"] = recalls
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiment", choices=("transition-weights", "embedding-heads"))
    experiment = parser.parse_args(argv).experiment
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(message)s")
    print(json.dumps(transition_weights() if experiment == "transition-weights" else embedding_heads(), indent=2))


if __name__ == "__main__":
    main()
