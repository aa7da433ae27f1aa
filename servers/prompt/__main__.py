from servers.prompt.server import main

main()
