from servers.retriever.server import main

main()
