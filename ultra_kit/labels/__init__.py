"""Human labels: the label store of ``ultra annotate`` (``store``), read by the evaluation tools."""
