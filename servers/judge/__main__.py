from servers.judge.server import SPEC

SPEC.main()
