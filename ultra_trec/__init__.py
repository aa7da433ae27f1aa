"""The TREC engine shared by the evaluation, judge and custom servers: reading runs and qrels,
ranking the trec_eval way, the measure registry, scoring and paired significance tests."""
