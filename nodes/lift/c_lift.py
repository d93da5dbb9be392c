"""The C lifter's entry point: a file and a function name in, the lifted model and its
engine pipeline out."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from pixelweave.nodes.lift.c_execute import Executor
from pixelweave.nodes.lift.c_frontend import find_function
from pixelweave.nodes.lift.model import Lifted
from pixelweave.nodes.lift.to_engine import LiftedPipeline, build


@dataclass
class CLift:
    """A lifted C function: the model, the engine side, and how long lifting took."""

    lifted: Lifted
    engine: LiftedPipeline
    seconds: float


def lift_c(path: str | Path, function: str) -> CLift:
    """Lift one function of a C file; raises LiftError naming the file, line and construct
    when the function is outside the subset."""
    start = time.perf_counter()
    fn = find_function(path, function)
    lifted = Executor(fn).run()
    engine = build(lifted)
    return CLift(lifted, engine, time.perf_counter() - start)
