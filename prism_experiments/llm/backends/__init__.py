"""Every LLM backend, one module each (`local`, `llama_cpp`, `openai`); importing this package registers them all."""

from __future__ import annotations

from prism_experiments.registries import import_modules

# a new backend is a new module here: it registers itself, no list to edit
import_modules(__name__, __path__)
