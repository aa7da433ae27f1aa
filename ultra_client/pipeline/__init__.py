"""A pipeline file: its model and steps, the parameter file, the dataflow check, and the runner."""
