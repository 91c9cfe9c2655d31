"""`python scripts/fuzz_api ARGS` (the directory) or `python -m fuzz_api ARGS` (with
scripts/ on sys.path); also how the driver starts a worker (`--worker`)."""

import os
import sys

if not __package__:
    # Run as a directory: sys.path[0] is this package's directory, and the package
    # itself is not importable. Put its parent (scripts/) there instead, so that the
    # modules are imported as fuzz_api.* and none of them shadows a top-level module.
    _pkg = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or os.curdir) == _pkg:
        sys.path[0] = os.path.dirname(_pkg)
    else:
        sys.path.insert(0, os.path.dirname(_pkg))

from fuzz_api.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
