"""The end of a run: the results (``lines``, ``tables``) and the tokens and cost per step (``costs``)."""
