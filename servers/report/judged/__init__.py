"""The judged-numbers files on the page: ppi, compare_judged, fill_qrels (tables, charts)."""
