"""The base floor of ultra-eval, under the kit, the libraries, the servers and the client.

``errors`` (``InputError`` and the checks the libraries share, the read roots), ``redact`` (secret
redaction), ``environment`` (the names of the environment variables ultra-eval reads) and ``registry``
(the one registry type of the project's tables: measure families, metrics, judges, report kinds,
data formats) and ``write_hooks`` (what a library adds to every file write and tool call). It imports nothing
of the project.
"""
