"""The YAML files users write: ``limits`` (size, depth and alias limits of every YAML file read, a regular
file's text) and ``lines`` (``load_yaml_with_lines``: the one loader whose mappings, lists and strings know
their line, for pipelines, parameter, gate, sweep and rubric files). Errors are InputError at file:line."""
