from servers.generation.server import main

main()
