"""``ultra export``: run folders logged to the trackers teams already use (``mlflow``: MLflow's own client)."""
