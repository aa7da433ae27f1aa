"""Asking the system under test: one request with its retries, rate limit and time-out (``calls``), and every
item of a run in conversation order with bounded concurrency (``schedule``)."""
