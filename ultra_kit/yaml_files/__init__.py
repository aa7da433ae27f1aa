"""The YAML files users write: ``lines`` (``load_yaml_with_lines``: the one loader whose mappings, lists and strings
know their line, for pipelines, parameter, gate, sweep and rubric files). Their size, depth and alias limits, and a
regular file's text, are in the base (``ultra_base.file_limits``), so the libraries read within them too. Errors are
InputError at file:line."""
