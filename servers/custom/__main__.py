from servers.custom.server import main

main()
