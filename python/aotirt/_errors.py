# The exceptions of aotirt's runtime API: one class per status code of the
# C++ runtime (include/aotirt/status.h), all under aotirt.Error. Imports
# nothing beyond the standard library.

from __future__ import annotations


class Error(Exception):
    """An error from aotirt's runtime.

    ``code`` is the status code's name ("INVALID_ARGUMENT", ...), ``message``
    the message alone; ``str(error)`` is both, as the ``aotirt`` CLI prints
    them.
    """

    code = "UNKNOWN"

    def __init__(self, text: str, message: str | None = None, code: str | None = None):
        super().__init__(text)
        self.message = text if message is None else message
        if code is not None:
            self.code = code


class InvalidArgumentError(Error, ValueError):
    """The caller passed something wrong: an input's dtype, shape, device or count."""

    code = "INVALID_ARGUMENT"


class NotFoundError(Error, LookupError):
    """A file, zip entry, symbol or name that does not exist."""

    code = "NOT_FOUND"


class OutOfRangeError(Error, IndexError):
    code = "OUT_OF_RANGE"


class ResourceExhaustedError(Error, MemoryError):
    """Out of memory, or past a configured limit."""

    code = "RESOURCE_EXHAUSTED"


class UnimplementedError(Error, NotImplementedError):
    """A feature or op that aotirt does not provide."""

    code = "UNIMPLEMENTED"


class InternalError(Error):
    """A bug in aotirt or in the model library."""

    code = "INTERNAL"


class UnavailableError(Error):
    """A device or backend that is not present (no GPU, a CPU-only build)."""

    code = "UNAVAILABLE"


class IncompatibleError(Error):
    """A package built for another device, CPU instruction set or GPU."""

    code = "INCOMPATIBLE"


class IoError(Error, OSError):
    """Reading or writing a file failed."""

    code = "IO_ERROR"


class DataLossError(Error):
    """A corrupt or truncated file."""

    code = "DATA_LOSS"


_BY_CODE = {cls.code: cls for cls in (InvalidArgumentError, NotFoundError, OutOfRangeError, ResourceExhaustedError,
                                      UnimplementedError, InternalError, UnavailableError, IncompatibleError,
                                      IoError, DataLossError)}


def error_for(code: str, text: str, message: str) -> Error:
    """The exception for a failed status (called by the native module)."""
    cls = _BY_CODE.get(code, Error)
    return cls(text, message, code)
