"""Sizes no machine can hold, refused before any work is done on them: a Python
loop over an impossible output size would run for years instead of raising."""

import math
import os

_HOST_BYTES = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
# What a plan built as Python lists (an int or float object and its list slot) costs
# per element, at least.
PY_LIST_BYTES = 40


def check_fits(shape, what, bytes_per_element=1):
    """RuntimeError when `shape` (a sequence of sizes) at `bytes_per_element` needs
    more bytes than the machine has memory."""
    needed = math.prod(int(s) for s in shape) * bytes_per_element
    if needed > _HOST_BYTES:
        raise RuntimeError(f"out of host memory: {what} of shape {list(shape)} needs at least {needed} bytes; "
                           f"this machine has {_HOST_BYTES}")
