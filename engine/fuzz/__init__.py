"""Randomized differential testing of schedules: random pipelines with random schedules,
compiled and compared with the reference evaluator (and, on a share, with Halide).

- `cases`: draws a case (an algorithm, a schedule, sizes and inputs) and renders it as a
  standalone Python script: the script is both what a worker runs and the reproducer.
- `known_bugs`: the shapes of bugs known and being fixed elsewhere, which draws avoid.
- `execute`: runs one case in this process and classifies the outcome.
- `driver`: runs many cases in worker processes that may die (crash, hang) without
  stopping the run.
- `shrink`: reduces a failing case to a small one that fails the same way.
- `gpu`: the GPU variant of a case (its CPU schedule mapped to GPU blocks and threads),
  which campaigns with target "opencl" draw.

`tools/fuzz_schedules.py` is the command line; tests/fuzz runs a bounded share in CI.
"""
