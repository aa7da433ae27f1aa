from servers.evaluation.server import SPEC

SPEC.main()
