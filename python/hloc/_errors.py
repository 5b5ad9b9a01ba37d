"""_errors.py — the exceptions of the hloc package: every failure, from the compiler, the
runtime (an hlo_status) or the arguments of a call, is an hloc.Error carrying the C status
code (hlo/status.h) and the message."""
from . import _abi


class Error(Exception):
    """A failure, with .code (an hlo_status_code, e.g. 1 for INVALID_ARGUMENT), .code_name
    and .message (for compile errors: hloc's file:line:col diagnostics with the source line)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = int(code)
        self.message = message

    @property
    def code_name(self):
        return _abi.STATUS_CODES.get(self.code, "UNKNOWN(%d)" % self.code)

    def __str__(self):
        return self.message

    def __repr__(self):
        return "hloc.Error(%s, %r)" % (self.code_name, self.message)


class ArgumentError(Error, ValueError):
    """Wrong arguments to a Module call: count, shape or dtype (code INVALID_ARGUMENT)."""

    def __init__(self, message):
        super().__init__(_abi.INVALID_ARGUMENT, message)


class CompileWarning(UserWarning):
    """What hloc printed while compiling successfully (e.g. elided constants), or a cache
    that could not be used."""
