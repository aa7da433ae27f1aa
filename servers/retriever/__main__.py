from servers.retriever.server import SPEC

SPEC.main()
