"""``ultra annotate``: a labelling page on 127.0.0.1 that asks people for labels and stores them in SQLite
(``ultra_kit.labels``), choosing which items to ask for (``select``); see docs/annotate.md.

The defaults of its options, each written once here:
"""

PORT = 8765  # --port
BUDGET = 100  # --budget: expected labels asked for under --select active
UNIFORM_SHARE = 0.5  # --uniform-share: the uniform rule's share in active selection's probabilities
FIT_AFTER = 20  # --fit-after: labels given before active selection fits a model of the judge's error on them
SEED = 0  # --seed: the random order and the active draw
OVERLAP = 0.0  # --overlap: the share of items sent to a second annotator
STORE = "output/labels.sqlite"  # --store
SHOWN = 20  # --shown: the largest disagreements the disagreements page lists
EXAMPLES = 6  # --examples: the largest disagreements --align adds to the rubric as examples
MAX_FIELD_CHARS = 20_000  # an item's question, answer or passage is cut to this many characters
MAX_BODY_BYTES = 16_384  # a POST body larger than this is refused
MAX_COMMENT_CHARS = 2_000
