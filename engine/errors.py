"""Exceptions raised by the engine, one class per kind of mistake."""


class PixelweaveError(Exception):
    """Base class of every error the engine raises on purpose."""


class CompileError(PixelweaveError):
    """An algorithm that cannot be built: wrong types, undefined Funcs, bad definitions."""


class ScheduleError(PixelweaveError):
    """A schedule that is impossible for the algorithm it is attached to."""


class BoundsError(PixelweaveError):
    """An input too small for the region a pipeline reads, or a violated bound."""


class InputError(PixelweaveError):
    """A missing or ill-typed input array or parameter value."""


class RuntimeFailure(PixelweaveError):
    """An error reported by generated code while it ran (failed allocation or assertion)."""
