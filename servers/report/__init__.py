"""The report server: one self-contained HTML page, PNG plots and summary.csv from any result files."""
