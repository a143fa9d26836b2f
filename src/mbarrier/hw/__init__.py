"""Hardware conformance: litmus cases as data, a CUDA generator, a GPU runner, and the model's replay.

Layering: `hw` sits beside `sim`; it reads `core` and `spec` and nothing above them. The GPU runner
imports cupy lazily, so everything but `runner` works on a machine without a GPU.
"""
