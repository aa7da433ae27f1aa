"""The retriever server: BM25 (default) and dense retrieval over a passage corpus, with a saved index."""
