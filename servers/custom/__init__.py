"""The custom server: small glue tools between pipeline steps (answer extraction, qrels selection)."""
