"""Other systems' evaluation configs compiled into ordinary ultra pipelines (NeMo Evaluator's RAG jobs: ``nemo``)."""
