"""Lifting existing code into Pixelweave: C loop nests (c_frontend, c_execute, stages,
to_engine) and Python prototypes, verified against the original (verify, prove)."""
