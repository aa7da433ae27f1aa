from servers.custom.server import SPEC

SPEC.main()
