"""The node catalogue: one module per category. Importing this package imports every module
in it, which registers their node types: adding a node type touches nothing else."""

import importlib
import pkgutil

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")
