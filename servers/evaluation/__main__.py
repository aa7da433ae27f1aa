from servers.evaluation.server import main

main()
