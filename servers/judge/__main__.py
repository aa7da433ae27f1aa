from servers.judge.server import main

main()
