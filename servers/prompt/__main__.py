from servers.prompt.server import SPEC

SPEC.main()
