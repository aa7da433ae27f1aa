"""Reading runs and qrels: a strict line reader and a fast pyarrow reader, fingerprints of what was
read, and in-memory sources."""
