"""The benchmark server: dataset loading (get_data)."""
