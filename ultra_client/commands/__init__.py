"""The ``ultra`` subcommands kept here, one module each (``build``, ``run``, ``call``, ``tools``,
``mcp_config``, ``serve``); each has ``add_parser(commands)`` and ``run(args) -> exit code``, and
imports what it runs only when it runs. ``ultra_client.cli.COMMANDS`` is the one table of them all."""
