"""The fitness test of LLM agents (`prism-llm-check`, docs/llm.md "Fitness"): a fixed, versioned probe set with
known right answers, asked through any backend, scored with confidence intervals against stated thresholds."""
