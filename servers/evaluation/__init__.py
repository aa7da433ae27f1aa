"""The evaluation server: retrieval metrics exact to trec_eval, significance tests, answer metrics."""
