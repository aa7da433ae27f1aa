"""``ultra export``: run folders logged to the trackers teams already use, each with its own client (``mlflow``,
``wandb``); ``folders`` reads what both log of a run folder."""
