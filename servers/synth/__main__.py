from servers.synth.server import main

main()
