"""The same all-MiniLM-L6-v2 run by ONNX Runtime or OpenVINO instead of torch, fp32 or int8 (REQ-FIRSTHOUR-2).

Measured by `make bench ARGS="--sections 1 --encoder-backends"` (docs/bench.md "Encoder backends").
Runs use torch unless `rag.encoder_backend=onnx`: fp32 ONNX Runtime kept the feeds (recall@10 1.0) and
was 2.1x torch on an AMD EPYC VM (1.4x on a Xeon); the int8 models change the feeds and OpenVINO was
not 2x, so they stay benchmark-only.
`Embedder(backend=...)` runs the same fixed-shape batches on any of them, each backend with its own
cache folder (`embeddings.embedder.cache_directory`), so vectors of two backends never mix.

sentence-transformers' own `backend="onnx"` / `"openvino"` go through Optimum, whose packages
(optimum-onnx 0.1, optimum-intel 2.2) require transformers < 4.58 / < 5.6, against the project's
transformers >= 5.23 (the LLM agents). So the export is done here, with the same runtimes and the
same steps, from the local weights and nothing else (nothing is fetched from a hub):

- `onnx`: the loaded SentenceTransformer (transformer, mean pooling, normalisation) traced by
  `torch.onnx.export` into one graph `(input_ids, attention_mask, token_type_ids) -> sentence_embedding`;
- `onnx-int8`: that graph through `onnxruntime.quantization.quantize_dynamic` (int8 weights, activations
  quantised at run time), what sentence-transformers' `export_dynamic_quantized_onnx_model` does, but
  with per-channel weight scales (see `exported_model`);
- `openvino`: the ONNX graph converted by `openvino.convert_model`, saved in fp32 and run with
  `INFERENCE_PRECISION_HINT=f32` (else a CPU with AMX would run it in bf16);
- `openvino-int8`: NNCF post-training static quantisation, what `export_static_quantized_openvino_model`
  does, calibrated on 300 synthetic post texts (sentence-transformers' default downloads GLUE/SST-2).

Exports are written once under `<cache dir>/encoders/<backend>/<model key>-<weights digest>/` (written
beside and renamed into place, so concurrent processes never read a half-written one) and reused.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from prism_experiments.embeddings.model import EmbeddingModelError, model_cache_key, resolve_model_path

#: the backends `make bench ARGS="--sections 1 --encoder-backends"` measures; `torch` is the runs' default (its
#: vectors and cache), `onnx` the one that reached REQ-FIRSTHOUR-2's bar for a run option (>= 2x torch's texts/s with
#: recall@10 >= 0.99 against torch's feeds, on the AMD EPYC VM): docs/bench.md "Encoder backends".
ENCODER_BACKENDS = ("torch", "onnx", "onnx-int8", "openvino", "openvino-int8")
DEFAULT_BACKEND = "torch"
#: the project's pip extra that installs the non-torch backends' packages (onnxruntime comes with chromadb)
BACKENDS_EXTRA = "encoders"
_BACKEND_MODULES = {
    "onnx": ("onnxruntime", "onnx"),  # torch.onnx.export writes the graph through the onnx package
    "onnx-int8": ("onnxruntime", "onnx"),
    "openvino": ("openvino", "onnx"),
    "openvino-int8": ("openvino", "nncf", "onnx"),
}
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 17
CALIBRATION_TEXTS = 300
_CALIBRATION_SEED = 2801  # a corpus seed no benchmark or test uses
_FILES = {"onnx": "model.onnx", "onnx-int8": "model.onnx", "openvino": "model.xml", "openvino-int8": "model.xml"}

#: (backend, model name, threads) -> the runner loaded in this process
Runner = Callable[[dict[str, np.ndarray]], np.ndarray]
_RUNNERS: dict[tuple[str, str, int], Runner] = {}


class EncoderBackendError(ValueError):
    """An unknown encoder backend, or one whose packages are not installed."""


def check_backend(backend: str) -> str:
    """`backend` if it is known and its packages import; else a one-line EncoderBackendError."""
    if backend not in ENCODER_BACKENDS:
        raise EncoderBackendError(
            f"encoder backend: unknown backend {backend!r}; allowed: {', '.join(ENCODER_BACKENDS)}"
        )
    import importlib.util

    for module in _BACKEND_MODULES.get(backend, ()):
        if importlib.util.find_spec(module) is None:
            raise EncoderBackendError(
                f"encoder backend: {backend!r} needs the package {module!r}: "
                f"pip install -e '.[{BACKENDS_EXTRA}]' (the project's {BACKENDS_EXTRA!r} extra)"
            )
    return backend


@cache  # 90 MB read once per process, not at every (nested) export lookup
def weights_digest(model_path: Path) -> str:
    """sha256 (16 hex digits) of every file of the model directory but earlier exports: the weights' identity."""
    digest = hashlib.sha256()
    for path in sorted(p for p in model_path.rglob("*") if p.is_file()):
        relative = path.relative_to(model_path).as_posix()
        if relative.split("/")[0] in ("onnx", "openvino"):
            continue
        digest.update(relative.encode() + b"\0")
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def export_dir(backend: str, model_name: str, cache_root: Path) -> Path:
    """Where `backend`'s export of `model_name` lives: keyed by the backend and the weights' digest."""
    key = f"{model_cache_key(model_name)}-{weights_digest(resolve_model_path(model_name))}"
    return cache_root / "encoders" / backend / key


def exported_model(backend: str, model_name: str, cache_root: Path) -> Path:
    """The exported model file of `backend`, exported now if no earlier process did."""
    check_backend(backend)
    if backend == DEFAULT_BACKEND:
        raise EncoderBackendError("encoder backend: 'torch' runs the weights as they are; nothing to export")
    directory = export_dir(backend, model_name, cache_root)
    target = directory / _FILES[backend]
    if target.is_file():
        return target
    staging = directory.with_name(f".{directory.name}.{uuid.uuid4().hex[:8]}.tmp")
    staging.mkdir(parents=True)
    try:
        if backend == "onnx":
            _export_onnx(model_name, staging / _FILES[backend])
        elif backend == "onnx-int8":
            from onnxruntime.quantization import QuantType, quantize_dynamic

            source = exported_model("onnx", model_name, cache_root)
            # int8 weights per output channel, matrix products with a constant weight only: per-tensor
            # scales (sentence-transformers' avx512_vnni preset) left cosines to torch's vectors of
            # 0.94-0.97 on post texts, per-channel 0.99
            quantize_dynamic(
                source,
                staging / _FILES[backend],
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
                extra_options={"MatMulConstBOnly": True},
            )
        elif backend == "openvino":
            import openvino as ov

            model = ov.convert_model(str(exported_model("onnx", model_name, cache_root)))
            ov.save_model(model, staging / _FILES[backend], compress_to_fp16=False)
        else:
            _export_openvino_int8(model_name, cache_root, staging / _FILES[backend])
        try:
            os.replace(staging, directory)
        except OSError:  # another process finished first: keep its export
            if not target.is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _export_onnx(model_name: str, path: Path) -> None:
    import torch

    from prism_experiments.embeddings.model import load_model

    model = load_model(model_name)

    class SentenceEmbedding(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            features = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
            return self.model.forward(features)["sentence_embedding"]

    example = model.tokenizer(["an example", "a second example text"], padding=True, return_tensors="pt")
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUT_NAMES}
    import warnings

    with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
        # the tracer's notes on shape checks that hold for every input here (mask as long as the ids)
        warnings.simplefilter("ignore")
        torch.onnx.export(
            SentenceEmbedding().eval(),
            tuple(example[name] for name in INPUT_NAMES),
            str(path),
            dynamo=False,
            input_names=list(INPUT_NAMES),
            output_names=["sentence_embedding"],
            dynamic_axes={**axes, "sentence_embedding": {0: "batch"}},
            opset_version=OPSET,
        )


def calibration_texts(n: int = CALIBRATION_TEXTS) -> list[str]:
    """Synthetic post texts for static quantisation (none of the bench's or the tests' texts)."""
    from prism_experiments.corpus import SyntheticCorpusConfig, generate_corpus

    posts = generate_corpus(SyntheticCorpusConfig(n_posts=2 * n, text_pool_size=0), _CALIBRATION_SEED)
    return list(dict.fromkeys(post.text for post in posts))[:n]


def _export_openvino_int8(model_name: str, cache_root: Path, path: Path) -> None:
    import nncf
    import openvino as ov

    from prism_experiments.embeddings.model import load_model

    tokenizer = load_model(model_name).tokenizer
    texts = calibration_texts()
    items = [dict(tokenizer([text], truncation=True, max_length=256, return_tensors="np")) for text in texts]
    model = ov.Core().read_model(exported_model("openvino", model_name, cache_root))
    quantized = nncf.quantize(model, nncf.Dataset(items), model_type=nncf.ModelType.TRANSFORMER, subset_size=len(items))
    ov.save_model(quantized, path, compress_to_fp16=False)


def backend_runner(backend: str, model_name: str, cache_root: Path, threads: int | None = None) -> Runner:
    """A function: numpy features (int64 ids, mask, token types) -> (batch, dim) float32 sentence embeddings."""
    threads = threads or _default_threads()
    key = (backend, model_name, threads)
    if key in _RUNNERS:
        return _RUNNERS[key]
    path = exported_model(backend, model_name, cache_root)
    try:
        if backend.startswith("onnx"):
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

            def run_onnx(features: dict[str, np.ndarray]) -> np.ndarray:
                feeds = {name: np.asarray(features[name], dtype=np.int64) for name in INPUT_NAMES}
                return np.asarray(session.run(["sentence_embedding"], feeds)[0], dtype=np.float32)

            runner: Runner = run_onnx
        else:
            import openvino as ov

            compiled = ov.Core().compile_model(
                str(path),
                "CPU",
                {
                    "INFERENCE_PRECISION_HINT": "f32",
                    "INFERENCE_NUM_THREADS": threads,
                    "NUM_STREAMS": 1,
                    "PERFORMANCE_HINT": "LATENCY",
                },
            )
            request = compiled.create_infer_request()

            def run_openvino(features: dict[str, np.ndarray]) -> np.ndarray:
                feeds = {name: np.asarray(features[name], dtype=np.int64) for name in INPUT_NAMES}
                result = request.infer(feeds)
                return np.array(result[compiled.output(0)], dtype=np.float32)

            runner = run_openvino
    except Exception as exc:  # a damaged export: say where it is
        raise EmbeddingModelError(f"encoder backend {backend!r}: cannot load {path}: {exc}") from exc
    _RUNNERS[key] = runner
    return runner


def _default_threads() -> int:
    """As many threads as torch uses by default (the physical cores), so the backends compare fairly."""
    import torch

    return int(torch.get_num_threads())
