"""Question classifier experiments; this script reproduces the figures behind choices in app/training/questions.py.

    python scripts/question_experiments.py transition-weights    # about 30 s on 2 cores

- transition-weights: the tagger's Viterbi decoding weighs the tag-transition log-probabilities
  (`TRANSITION_WEIGHT`); the weight is chosen by OBJ F1 in 3-fold CV on the tagged questions' training 80% (the 20%
  that `touche train questions` reports on stays out), each fold's tagger fitted once and decoded at every weight.
  Measured: 0 (per-token argmax) 0.8285, 0.1 0.8318, 0.25 0.8332 (shipped), 0.5 0.8267, 1 0.8017.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

import numpy as np
from sklearn.model_selection import KFold, train_test_split

from app.questions import Tagger
from app.training import common
from app.training.questions import fit_tagger, read_tagged_questions, token_f1

WEIGHTS = (0.0, 0.1, 0.25, 0.5, 1.0)


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiment", choices=("transition-weights",))
    parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(message)s")
    print(json.dumps(transition_weights(), indent=2))


if __name__ == "__main__":
    main()
