"""How consistent N runs over the same queries are: the scoring, and the runs read from result files."""
