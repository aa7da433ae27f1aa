"""What several servers read of IBM's MT-RAG layout (``mtrag-benchmark``): ``references`` (a record's reference
answer, its first target's text)."""
