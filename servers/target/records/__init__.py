"""What a run keeps: the journal it resumes from (``journal``), the reply cache across runs (``cache``), the
per-item records and what the tool returns of them (``results``), and the failure check (``failures``)."""
