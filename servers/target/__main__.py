from servers.target.server import SPEC

SPEC.main()
