from servers.benchmark.server import SPEC

SPEC.main()
