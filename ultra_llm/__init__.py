"""The LLM library the servers share (judge, synth, generation, retriever, evaluation), usable without MCP.

- ``settings``, ``client`` (retries, bounded concurrency, endpoint pools: ``pool``, ``http``), ``cache``
  (the SQLite answer cache) and ``completions`` (what one request returned, and the usage of a call);
- ``replies`` (a prompt's reply declared once: schema, label values, reader, repair text), ``asking``
  (ask, read, repair) and ``prompt_files`` (versioned prompt files);
- ``batch_mode`` (batch files, the Batch API, passes over the cache) and ``local`` (in-process models);
- ``prices`` (what tokens cost: ``prices.yaml``, ``$ULTRA_PRICES``), ``estimate`` (``ultra run --estimate``) and
  ``standins`` (the replies its unsent requests get).
"""
