"""Answer metrics of ``evaluate`` (the ``METRICS`` registry in ``metrics``) and what they are built from:
normalisation, ROUGE, BLEU, METEOR, BERTScore, embedding similarity."""
