"""MT-RAG: its algorithmic metrics and RB_agg (the ``METRICS`` registry in ``metrics``) and its
evaluated-record layout (``layout``)."""
