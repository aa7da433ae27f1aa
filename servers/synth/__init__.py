"""The synth server: synthetic risk-evaluation query sets (grounded, off-topic, jailbreak) and the risk table."""
