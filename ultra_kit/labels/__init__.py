"""Human labels: the label store of ``ultra annotate`` (``store``), read by the evaluation tools; the scale a rubric
declares (``rubric_scales``), read alike by the judge's ``rubric_judge`` and by ``ultra annotate --scale``."""
