"""The shape shared by the quality and relevance models: a linear head over standardised hand-made features
and a MiniLM embedding, squashed to [0, 1] by a sigmoid, stored as a small `.npz` (no pickle)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy.special import expit

from .errors import ToucheError
from .files import atomic_file


def check_finite(arrays: dict[str, np.ndarray], what: str, path: Path) -> None:
    """A ToucheError where a trained model's arrays hold a non-finite number (a training that diverged, or that saw
    no data: NaN scores in every later run), before anything is written: the old model at `path` stays."""
    broken = [name for name, array in arrays.items()
              if np.asarray(array).dtype.kind in "fc" and not np.isfinite(array).all()]
    if broken:
        raise ToucheError(f"the trained {what} has non-finite weights ({', '.join(broken[:3])}); {path} not written")


class LinearHead:
    """``score = sigmoid(w_f · clip((f - mean) / scale) + w_e · e + bias)``.

    Subclasses name their features (`FEATURE_NAMES`, checked on load), their default file and their trainer.
    """

    NAME = "linear head"
    FEATURE_NAMES: tuple[str, ...] = ()
    DEFAULT_PATH: Path
    TRAINER = ""  # the `touche train` model that retrains it

    def __init__(self, feature_mean: np.ndarray, feature_scale: np.ndarray, feature_weights: np.ndarray,
                 embedding_weights: np.ndarray, bias: float, info: dict | None = None):
        self.feature_mean = np.asarray(feature_mean, dtype=np.float32)
        self.feature_scale = np.asarray(feature_scale, dtype=np.float32)
        self.feature_weights = np.asarray(feature_weights, dtype=np.float32)
        self.embedding_weights = np.asarray(embedding_weights, dtype=np.float32)
        self.bias = float(bias)
        self.info = dict(info or {})

    @property
    def uses_embeddings(self) -> bool:
        return bool(np.any(self.embedding_weights))

    def standardise(self, features: np.ndarray) -> np.ndarray:
        """Centre and scale features as in training, clipped so an odd text cannot dominate the score."""
        return np.clip((features - self.feature_mean) / self.feature_scale, -5.0, 5.0)

    def linear(self, features: np.ndarray, embeddings: np.ndarray | None) -> np.ndarray:
        """The raw scores; `embeddings` may be None only for a head that gives them no weight."""
        z = self.standardise(features) @ self.feature_weights + self.bias
        if self.uses_embeddings and len(features):
            embeddings = np.asarray(embeddings, dtype=np.float32)
            if embeddings.shape != (len(features), self.embedding_weights.shape[0]):
                raise ToucheError(f"{self.NAME}: expected embeddings of shape ({len(features)}, "
                                  f"{self.embedding_weights.shape[0]}), got {embeddings.shape}")
            z = z + embeddings @ self.embedding_weights
        return np.asarray(z, dtype=np.float32)

    @staticmethod
    def squash(logits: np.ndarray) -> np.ndarray:
        return expit(logits).astype(np.float32)

    def save(self, path: Path) -> None:
        """Write the head in place of the one at `path`, whole or not at all; a head of non-finite or no weights (a
        training on no judged passage: NaN scores in every run) is an error, and the old head stays."""
        arrays = dict(feature_mean=self.feature_mean, feature_scale=self.feature_scale,
                      feature_weights=self.feature_weights, embedding_weights=self.embedding_weights,
                      bias=np.float32(self.bias))
        check_finite(arrays, f"{self.NAME} head", path)
        if not (self.feature_weights.any() or self.embedding_weights.any()):
            raise ToucheError(f"the trained {self.NAME} head has no weights (trained on no judged passage?); {path} "
                              "not written")
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(path, binary=True) as f:  # a full disk keeps the old head whole
            np.savez_compressed(f, **arrays, feature_names=np.array(self.FEATURE_NAMES),
                                info=np.array(json.dumps(self.info, sort_keys=True)))

    @classmethod
    def load(cls, path: Path | None = None):
        """Load a trained head (default: the one shipped in app/models/)."""
        path = Path(path) if path is not None else cls.DEFAULT_PATH
        if not path.is_file():
            raise ToucheError(f"{cls.NAME} model not found: {path} (train it with `touche train {cls.TRAINER}`)")
        with np.load(path, allow_pickle=False) as data:
            if tuple(str(name) for name in data["feature_names"]) != cls.FEATURE_NAMES:
                raise ToucheError(f"{cls.NAME} model {path} was trained on other features; retrain it")
            return cls(data["feature_mean"], data["feature_scale"], data["feature_weights"],
                       data["embedding_weights"], float(data["bias"]), json.loads(str(data["info"])))
