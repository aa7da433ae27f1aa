"""Where tools write and read: the output root (``output_root``), the project folder of a server started with
``$ULTRA_HOME`` and absolute result paths (``project_root``), the input paths of a tool checked against the
read roots before it starts (``read_arguments``). Atomic writes and reserved names: ``ultra_kit.files``."""
