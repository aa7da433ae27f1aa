from servers.generation.server import SPEC

SPEC.main()
