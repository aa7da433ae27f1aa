from servers.synth.server import SPEC

SPEC.main()
