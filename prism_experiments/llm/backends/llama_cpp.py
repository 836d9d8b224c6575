"""An in-process chat model on llama.cpp (through cyllama's low-level bindings): a GGUF file, grammar-constrained.

Next to the transformers backend it loads a GGUF in a fraction of a second instead of ~20 s, needs less than half
the memory and writes answers several times faster, but reads prompts slower (1 thread). Each request of a batch
is one sequence of a single context with its own KV stream (`kv_unified` off) and its own sampler chain (a GBNF
grammar from the request's JSON schema, then greedy or a draw seeded by the request); flash attention is off and
no prompt is decoded in a one-token step (`chunks`): so an answer depends neither on the other requests of its
batch nor on the thread count (checked on the packaged Q4_1 file; a GGUF of another quantisation may take
batch-size-dependent kernels). The prompt prefix a batch shares is decoded once; its KV state is restored into
every sequence and kept for the next call.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from prism_experiments.llm.backend import register_backend
from prism_experiments.llm.backends.local import PackagedGGUFConfig, file_digest, packaged_model_path
from prism_experiments.llm.chat import ChatRequest, ChatResponse, LLMUnavailable

log = logging.getLogger(__name__)
#: llama.cpp's LLAMA_DEFAULT_SEED: `add_dist` draws a random seed for it, so request seeds are folded below it
_RANDOM_SEED = 0xFFFFFFFF
#: most tokens per llama_decode call while reading prompts (with flash attention off, results do not depend on it)
_N_BATCH = 512


class LlamaCppLLMConfig(PackagedGGUFConfig):
    """A GGUF chat model in this process on llama.cpp (cyllama), the packaged one unless `model_path`."""

    #: which backend answers; llama_cpp runs the GGUF with llama.cpp in this process
    backend: Literal["llama_cpp"] = "llama_cpp"
    #: CPU threads llama.cpp computes with (None = every core; answers do not depend on it)
    threads: int | None = Field(default=None, ge=1, le=256)
    #: KV-cache tokens per sequence: prompt plus answer must fit (a 1,000-token prompt, its answer, a repair turn);
    #: the cache takes batch_size x context_tokens x 23 kB for SmolLM2 (360 MiB at the defaults)
    context_tokens: int = Field(default=2048, ge=256, le=131072)
    #: prompts decoded together, one sequence each
    batch_size: int = Field(default=8, ge=1, le=64)
    #: decode the prompt prefix a batch shares once and restore its KV cache per prompt (same answers, faster)
    reuse_prefix: bool = True

    @property
    def prompts_per_call(self) -> int:
        return self.batch_size


def _llama() -> Any:
    """cyllama's llama.cpp bindings, imported on first use so the config validates without the package."""
    try:
        from cyllama.llama import llama_cpp
    except ImportError:
        raise LLMUnavailable("agents.decider.llm.backend=llama_cpp needs `pip install cyllama==0.2.18`") from None
    return llama_cpp


def one_line(exc: BaseException) -> str:
    """An exception's first line, or its type when it has no message."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class _Loaded:
    """A GGUF model on llama.cpp, its vocabulary and chat template."""

    def __init__(self, path: Path) -> None:
        cy = _llama()
        cy.disable_logging()  # llama.cpp writes hundreds of lines to stderr per load otherwise
        cy.llama_backend_init()
        params = cy.LlamaModelParams()
        params.n_gpu_layers = 0
        started = time.perf_counter()
        try:
            self.model = cy.LlamaModel(str(path), params)
        except (OSError, ValueError, RuntimeError) as exc:
            raise LLMUnavailable(
                f"agents.decider.llm.model_path: llama.cpp cannot load {path}: {one_line(exc)}"
            ) from None
        self.load_s = time.perf_counter() - started
        self.vocab = self.model.get_vocab()
        # llama.cpp matches the GGUF's Jinja template to its built-in one (ChatML for SmolLM2)
        self.template = self.model.get_default_chat_template()
        if not self.template:
            log.warning("%s has no chat template; using ChatML", path.name)
            self.template = "chatml"


@cache
def _load(path: Path) -> _Loaded:
    """One loaded model per file per process (the only process-wide state: a cache of loaded models)."""
    log.info("loading %s with llama.cpp", path)
    return _Loaded(path)


def schema_grammar(schema: dict[str, Any]) -> str:
    """The GBNF grammar of a JSON schema (llama.cpp's converter), spaced as `json.dumps` spaces: `{"a": [1, 2]}`."""
    grammar = str(_llama().json_schema_to_grammar(json.dumps(schema)))
    # the converter allows up to 2 newlines and 20 indent characters wherever JSON allows whitespace: small models
    # wander into them and spend tokens. One fixed layout, the prompt's example's, leaves the model only the content
    # to choose (if a converter's output changes shape, the substitutions miss and the grammar stays permissive)
    grammar = re.sub(r"^space ::= .*$", 'space ::= ""', grammar, flags=re.MULTILINE)
    return grammar.replace('"," space', '", "').replace('":" space', '": "')


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token lists."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def chunks(start: int, end: int, size: int = _N_BATCH) -> list[tuple[int, int]]:
    """Prompt positions [start, end) cut into decode steps of at most `size` tokens, none of a lone token."""
    out = []
    while start < end:
        step = min(size, end - start)
        # llama.cpp's CPU attention takes another kernel for a step with one token of a sequence than for a step
        # of several (the last prompt token's logits moved by up to 0.6 here), while steps of 2 or 500 tokens give
        # the same numbers: without lone-token steps a prompt gets one answer, whole or after a reused prefix
        if end - start - step == 1:
            step -= 1
        out.append((start, start + step))
        start += step
    return out


class _Sequence:
    """One request being answered: its prompt, sampler chain and the tokens generated so far."""

    def __init__(self, seq_id: int, request: ChatRequest, tokens: list[int], sampler: Any) -> None:
        self.seq_id = seq_id
        self.request = request
        self.tokens = tokens
        self.sampler = sampler
        self.out: list[int] = []
        #: the EOG token ended the answer (it counts as an output token, as in the transformers backend)
        self.eog = False
        self.done = False


@register_backend
class LlamaCppChatModel:
    """The packaged SmolLM2 (or any GGUF chat model) on llama.cpp; batched, schema-constrained, prefix reuse."""

    config_model = LlamaCppLLMConfig

    def __init__(self, cfg: LlamaCppLLMConfig) -> None:
        if importlib.util.find_spec("cyllama") is None:
            raise LLMUnavailable("agents.decider.llm.backend=llama_cpp needs `pip install cyllama==0.2.18`")
        path = Path(cfg.model_path) if cfg.model_path is not None else packaged_model_path()
        if not path.is_file():
            raise LLMUnavailable(f"agents.decider.llm.model_path: no such file {path}")
        self.cfg = cfg
        self.path = path
        # not the transformers backend's identity: the two runtimes give different answers to one prompt
        self.identity = f"llama.cpp:{cfg.model}:{file_digest(path)[:16]}"
        self._context: Any = None
        self._batch: Any = None
        self._grammars: dict[str, str] = {}
        #: the shared prefix decoded last (tokens) and its KV state, restored into each sequence of later calls
        self._prefix: list[int] = []
        self._prefix_state = b""
        #: the first prompt of the last call: what a prompt asked alone may share (with batch_size 1)
        self._last_prompt: list[int] = []

    @property
    def loaded(self) -> _Loaded:
        """Loaded on the first cache miss: a run replayed from the cache never loads the model."""
        return _load(self.path)

    @property
    def context(self) -> Any:
        """The llama.cpp context: one KV stream of `context_tokens` per sequence, flash attention off."""
        if self._context is None:
            cy = _llama()
            params = cy.LlamaContextParams()
            params.n_ctx = self.cfg.context_tokens * self.cfg.batch_size
            params.n_seq_max = self.cfg.batch_size
            # one KV stream per sequence: with a unified cache a sequence's logits change with its batch-mates
            params.kv_unified = False
            # with flash attention on (llama.cpp's CPU default) decode logits change with the thread count
            params.flash_attn_type = 0
            params.n_batch = params.n_ubatch = _N_BATCH
            params.n_threads = params.n_threads_batch = self.cfg.threads or os.cpu_count() or 1
            try:
                self._context = cy.LlamaContext(self.loaded.model, params)
            except (MemoryError, ValueError, RuntimeError) as exc:
                raise LLMUnavailable(
                    f"agents.decider.llm: llama.cpp cannot make a context of {params.n_ctx} tokens: {one_line(exc)}"
                ) from None
            self._batch = cy.LlamaBatch(n_tokens=_N_BATCH, embd=0, n_seq_max=1)
        return self._context

    def complete_many(self, requests: Sequence[ChatRequest]) -> list[ChatResponse]:
        """Answers in request order, `batch_size` prompts decoded together."""
        out: list[ChatResponse] = []
        for start in range(0, len(requests), self.cfg.batch_size):
            out += self._complete_batch(requests[start : start + self.cfg.batch_size])
        return out

    def prompt_tokens(self, request: ChatRequest) -> list[int]:
        """The request's messages in the GGUF's chat template, tokenized (special tokens parsed, no BOS added
        unless the GGUF asks for one)."""
        cy = _llama()
        loaded = self.loaded
        messages = [cy.LlamaChatMessage(role=m["role"], content=m["content"]) for m in request.messages]
        try:
            text = loaded.model.chat_apply_template(loaded.template, messages, True)
        except RuntimeError:
            raise LLMUnavailable(
                f"agents.decider.llm: llama.cpp does not know the chat template of {self.path.name}"
            ) from None
        return list(loaded.vocab.tokenize(text, add_special=True, parse_special=True))

    def _grammar(self, schema: dict[str, Any]) -> str:
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            try:
                self._grammars[key] = schema_grammar(schema)
            except ValueError as exc:
                raise ValueError(f"answer schema: llama.cpp cannot convert it to a grammar: {exc}") from None
        return self._grammars[key]

    def _sampler(self, request: ChatRequest) -> Any:
        """A fresh chain per request: its grammar, then greedy or a temperature draw seeded by the request."""
        cy = _llama()
        chain = cy.LlamaSampler(cy.LlamaSamplerChainParams())
        # the grammar first: it sets every token that cannot continue the answer to -inf
        chain.add_grammar(self.loaded.vocab, self._grammar(request.schema), "root")
        if request.temperature > 0:
            # softmax(logits / T) over every allowed token, as the transformers backend samples
            chain.add_temp(request.temperature)
            chain.add_dist(request.seed % _RANDOM_SEED)
        else:
            chain.add_greedy()
        return chain

    def _complete_batch(self, requests: Sequence[ChatRequest]) -> list[ChatResponse]:
        started = time.perf_counter()
        prompts = [self.prompt_tokens(r) for r in requests]
        for request, tokens in zip(requests, prompts):
            if len(tokens) + request.max_new_tokens > self.cfg.context_tokens:
                raise LLMUnavailable(
                    f"agents.decider.llm.context_tokens: a prompt of {len(tokens)} tokens plus max_new_tokens "
                    f"{request.max_new_tokens} does not fit in {self.cfg.context_tokens}"
                )
        seqs = [_Sequence(s, r, t, self._sampler(r)) for s, (r, t) in enumerate(zip(requests, prompts))]
        try:
            shared = self._restore_prefix(seqs)
            self._read_prompts(seqs, shared)
            self._generate(seqs)
        finally:
            for seq in seqs:
                seq.sampler.close()
        latency = (time.perf_counter() - started) / len(requests)
        vocab = self.loaded.vocab
        responses = []
        for seq in seqs:
            text = vocab.detokenize(seq.out, text_len_max=16 * len(seq.out) + 16) if seq.out else ""
            responses.append(
                ChatResponse(
                    text=str(text).rstrip(),
                    input_tokens=len(seq.tokens),
                    output_tokens=len(seq.out) + int(seq.eog),
                    latency_s=latency,
                )
            )
        return responses

    def _shared_length(self, seqs: Sequence[_Sequence]) -> int:
        """Prompt tokens all sequences start with (one alone: what it shares with the last prefix or prompt), leaving
        each at least 2 prompt tokens of its own (see `chunks`); 0 = nothing worth sharing."""
        first, last_prompt = seqs[0].tokens, self._last_prompt
        self._last_prompt = first
        if not self.cfg.reuse_prefix:
            return 0
        shared = min(len(s.tokens) for s in seqs) - 2
        for seq in seqs[1:]:
            shared = min(shared, common_prefix(first, seq.tokens))
        if len(seqs) == 1:
            shared = min(shared, max(common_prefix(first, self._prefix), common_prefix(first, last_prompt)))
        return shared if shared >= 2 else 0

    def _restore_prefix(self, seqs: Sequence[_Sequence]) -> int:
        """Empty every sequence and give it the KV cache of the shared prefix, decoded (or extended from the last
        call's) in sequence 0 and copied as bytes, i.e. what a full decode writes; returns the prefix length."""
        ctx = self.context
        for s in range(self.cfg.batch_size):
            ctx.memory_seq_rm(s, -1, -1)
        shared = self._shared_length(seqs)
        if shared == 0:
            return 0
        prefix = seqs[0].tokens[:shared]
        built = prefix != self._prefix
        if built:
            kept = common_prefix(prefix, self._prefix)
            if shared - kept == 1:
                kept -= 1  # never decode a lone token (see `chunks`)
            if kept:
                ctx.set_state_seq_data(self._prefix_state, 0)
                # dropping the cells past `kept` moves llama.cpp's write head back, so the rest of the prefix
                # lands in the cells a full decode would use
                ctx.memory_seq_rm(0, kept, -1)
            self._decode(seqs[0].seq_id, prefix, kept, logits=False)
            self._prefix, self._prefix_state = prefix, bytes(ctx.get_state_seq_data(0))
        for seq in seqs[1:] if built else seqs:
            ctx.set_state_seq_data(self._prefix_state, seq.seq_id)
        return shared

    def _decode(self, seq_id: int, tokens: Sequence[int], start: int, logits: bool) -> None:
        """Decode `tokens[start:]` into one sequence, at their positions, in `chunks`; logits of the last one."""
        batch = self._batch
        for begin, end in chunks(start, len(tokens)):
            batch.clear()
            for pos in range(begin, end):
                batch.add(tokens[pos], pos, [seq_id], logits and pos == len(tokens) - 1)
            self.context.decode(batch)

    def _read_prompts(self, seqs: Sequence[_Sequence], shared: int) -> None:
        """Decode each sequence's prompt after the shared prefix and sample its first answer token."""
        # one sequence per decode call: llama.cpp cuts a batch of several sequences' prompts into steps of its own,
        # which may hold one token of a sequence (see `chunks`); batching pays off in the answers, not here
        for seq in seqs:
            self._decode(seq.seq_id, seq.tokens, shared, logits=True)
            self._accept(seq, seq.sampler.sample(self.context, self._batch.n_tokens - 1))

    def _accept(self, seq: _Sequence, token: int) -> None:
        """Record a sampled token; the answer ends at end-of-generation, a complete JSON value or the token limit."""
        vocab = self.loaded.vocab
        if vocab.is_eog(token):
            seq.eog = seq.done = True
            return
        seq.out.append(token)
        if len(seq.out) >= seq.request.max_new_tokens:
            seq.done = True
        elif "}" in vocab.token_to_piece(token, special=False):
            # the grammar then allows only a space or end-of-generation: stop instead of decoding them
            try:
                json.loads(vocab.detokenize(seq.out, text_len_max=16 * len(seq.out) + 16))
                seq.done = True
            except ValueError:
                pass  # a "}" inside a string or a nested object: the answer goes on

    def _generate(self, seqs: Sequence[_Sequence]) -> None:
        """One decode per step with the last token of every unfinished sequence, each sampled by its own chain."""
        batch, ctx = self._batch, self.context
        while True:
            active = [s for s in seqs if not s.done]
            if not active:
                return
            batch.clear()
            for seq in active:
                batch.add(seq.out[-1], len(seq.tokens) + len(seq.out) - 1, [seq.seq_id], True)
            ctx.decode(batch)
            for index, seq in enumerate(active):
                self._accept(seq, seq.sampler.sample(ctx, index))
