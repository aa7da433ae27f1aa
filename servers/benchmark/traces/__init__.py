"""Production traces as evaluation data: OTLP JSON (OpenInference / OTel GenAI), Langfuse and LangSmith exports.

Each format's parser turns its file into ``Span`` objects (``spans.py``); ``assemble.py`` joins them into
traces and makes one record per answered question.
"""
