from servers.report.server import SPEC

SPEC.main()
