"""Pixelweave: image-processing pipelines as node graphs, compiled with schedules.

`import pixelweave as pw` gives the algorithm language (Halide's names and semantics).
The compiler is `pixelweave.engine`, the node catalogue and documents are
`pixelweave.nodes`, and the editor and command line are `pixelweave.app`. In the source
tree those three live in the top-level folders `engine/`, `nodes/` and `app/`; setup.py
installs them under this one name so nothing collides with other packages.
"""

from pixelweave.engine import *  # noqa: F403 - the algorithm language is the package's face
from pixelweave.engine import __all__ as __all__
