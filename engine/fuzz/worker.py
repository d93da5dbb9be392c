"""The worker process of the fuzz driver: `python -m pixelweave.engine.fuzz.worker`.

It prints "ready" once its imports are done, then reads one JSON request per line on stdin
({"case": ..., "halide": bool}) and answers one JSON result per line on stdout. Whatever
the compiled code does to this process (a crash, a hang) costs only the case under way:
the driver sees the process die or go quiet and starts another.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    out = sys.stdout
    sys.stdout = sys.stderr  # anything a case prints must not corrupt the protocol
    from pixelweave.engine.fuzz.cases import Case
    from pixelweave.engine.fuzz.execute import run_case

    if os.environ.get("PIXELWEAVE_FUZZ_HALIDE", "") == "1":
        import halide  # noqa: F401 - imported before the first case, outside its time limit
    out.write("ready\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        result = run_case(Case.from_json(request["case"]), with_halide=request.get("halide", False))
        out.write(json.dumps(result) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
