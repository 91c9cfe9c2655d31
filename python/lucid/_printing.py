"""lucid.set_printoptions (torch.set_printoptions); the formatting is engine-side."""

from __future__ import annotations

import math

from . import _C

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    opts = _C.get_print_options()
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"unknown print profile {profile!r}: expected one of {list(_PROFILES)}")
        opts.update(_PROFILES[profile])
    for key, value in (("precision", precision), ("threshold", threshold),
                       ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            opts[key] = value
    threshold = opts["threshold"]
    if threshold == math.inf or threshold > 2**63 - 1:
        threshold = 2**63 - 1
    sci = -1 if sci_mode is None else int(bool(sci_mode))
    _C.set_print_options(int(opts["precision"]), int(threshold), int(opts["edgeitems"]),
                         int(opts["linewidth"]), sci)
