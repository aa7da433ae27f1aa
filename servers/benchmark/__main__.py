from servers.benchmark.server import main

main()
