from servers.report.server import main

main()
