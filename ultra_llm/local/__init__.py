"""Local in-process backends (extra ``local-llm``): chat and embedding models, batched generation,
schema-constrained decoding."""
