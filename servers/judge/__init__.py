"""The judge server: LLM judges (UMBRELA relevance grades, agreement with human labels) and the shared LLM client."""
