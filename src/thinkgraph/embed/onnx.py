"""The packaged MiniLM run with onnxruntime and tokenizers, without torch.

Importing torch and sentence-transformers costs seconds per process, which dominated `thinkgraph
ask` (78% of 6.9 s). The same weights are exported once to ONNX (torch is needed for that one
export only, from the packaged files, never downloaded), checked against sentence-transformers to
give the same vectors within ``MAX_DIFF``, and kept in the user cache; later processes encode
queries with onnxruntime alone. The pipeline is the model's own: WordPiece tokens truncated to
``max_seq_length``, BERT, mean pooling over the attention mask, L2 normalisation.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

MAX_DIFF = 1e-4  # the largest |difference| allowed between ONNX and sentence-transformers vectors
CHECK_TEXTS = ("Who founded the Harbor Hill Observatory?", "a", "Lena Sorensen trained at the observatory " * 40,
               "Kestrel Bay lies on the northern coast; its lighthouse dates from 1887.")
OPSET = 17


def model_fingerprint(model_dir: Path) -> str:
    """Changes when the weights or tokenizer change (size and mtime of each file; cheap)."""
    parts = [f"{p.name}:{p.stat().st_size}:{int(p.stat().st_mtime)}"
             for p in sorted(model_dir.iterdir()) if p.is_file()]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def max_seq_length(model_dir: Path) -> int:
    config = model_dir / "sentence_bert_config.json"
    if config.is_file():
        return int(json.loads(config.read_text(encoding="utf-8")).get("max_seq_length", 256))
    return 256


class OnnxEncoder:
    """Tokenizer + ONNX BERT + mean pooling; ``encode`` gives unit float32 rows."""

    def __init__(self, model_dir: Path, onnx_path: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = min(2, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no busy-wait on shared cores
        self.session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_seq_length(model_dir))
        self.tokenizer.enable_padding()
        self.inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts: list[str]) -> np.ndarray:
        batch = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in batch], dtype=np.int64)
        mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        unit: np.ndarray = (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12))
        return unit.astype(np.float32)

    def encode_many(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Batches of similar length (little padding), results in input order."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), 0), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            vectors = self.encode([texts[i] for i in rows])
            if out.shape[1] == 0:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        return out


def export(model_dir: Path, target: Path, st_model: Any) -> float:
    """Export the transformer of ``st_model`` (a loaded SentenceTransformer over ``model_dir``) to
    ``target`` and check it; returns the largest difference. Nothing is written if the check fails."""
    import torch

    sample = st_model.tokenizer(["an example sentence", "two"], padding=True, return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]
    bert = st_model[0].auto_model.eval()

    class Hidden(torch.nn.Module):  # keyword call: the model's positional order varies by version
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            hidden: torch.Tensor = self.bert(**dict(zip(names, tensors, strict=True))).last_hidden_state
            return hidden

    transformer = Hidden().eval()
    args = tuple(sample[n] for n in names)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    dynamic = {n: {0: "batch", 1: "tokens"} for n in names}
    with torch.no_grad():
        torch.onnx.export(transformer, args, str(partial), input_names=names,
                          output_names=["last_hidden_state"], dynamic_axes={**dynamic, "last_hidden_state": {
                              0: "batch", 1: "tokens"}}, opset_version=OPSET, dynamo=False)
    reference = st_model.encode(list(CHECK_TEXTS), convert_to_numpy=True, normalize_embeddings=True)
    diff = float(np.abs(OnnxEncoder(model_dir, partial).encode(list(CHECK_TEXTS)) - reference).max())
    if diff > MAX_DIFF:
        partial.unlink(missing_ok=True)
        raise RuntimeError(f"ONNX export differs from sentence-transformers by {diff:.2e} (> {MAX_DIFF})")
    partial.replace(target)
    target.with_suffix(".json").write_text(json.dumps({"max_diff": diff, "opset": OPSET}), encoding="utf-8")
    return diff
