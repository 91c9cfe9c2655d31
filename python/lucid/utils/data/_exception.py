"""Carrying an exception from a worker process to the main process."""

from __future__ import annotations

import pickle
import sys
import traceback


class KeyErrorMessage(str):
    """A KeyError's message shown as written: str(KeyError(m)) is repr(m), which would
    print the traceback's newlines as '\\n'."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """The type and formatted traceback of the exception being handled, in a form that
    pickles; reraise() raises it again in another process, traceback text included."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        exc_type = exc_info[0]
        self.type_name = exc_type.__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where
        # A class that cannot be pickled (say, defined inside a function) cannot travel:
        # it is raised as a RuntimeError, whose message still names it.
        self.exc_type = exc_type if _picklable(exc_type) else RuntimeError

    def reraise(self):
        msg = f"Caught {self.type_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # The type's constructor needs other arguments (UnicodeDecodeError, ...).
            raise RuntimeError(msg) from None
        raise exception


def _picklable(obj):
    try:
        pickle.loads(pickle.dumps(obj))
    except Exception:
        return False
    return True
