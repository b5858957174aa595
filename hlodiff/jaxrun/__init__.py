"""Things that run JAX: live capture of a function's HLO, and timing a jitted step."""
