"""Limits on what one call or command may cost: ``caps`` (counts that multiply a tool's work, set in each
server's parameter.yaml) and ``json_files`` (size and depth of every JSON document read whole; YAML's are in
``ultra_base.file_limits``)."""
