"""HistogramObserver: keeps a histogram of everything seen and, when asked for qparams,
picks the clip range [a, b] with the least expected squared quantization error.

Follows upstream Lucid's method: candidate ranges cut the same probability mass from both
tails (0, 1e-5, 1e-4, 1e-3, 5e-3, 1e-2); each is scored by the clipping error of the mass
outside [a, b] plus the rounding noise step**2 / 12 of every value inside the histogram.
(torch's HistogramObserver searches differently, so the two agree closely on data without
outliers but not exactly.)
"""

import math

import lucid

from ._qparams import calculate_qparams
from ._qscheme import per_tensor_affine, quint8
from .observer import ObserverBase

__all__ = ["HistogramObserver"]

_TAIL_FRACTIONS = (0.0, 1e-5, 1e-4, 1e-3, 5e-3, 1e-2)


class HistogramObserver(ObserverBase):
    """Per-tensor observer that clips rare outliers by a histogram search."""

    def __init__(self, bins=2048, qscheme=per_tensor_affine, qdtype=quint8, eps=1e-8):
        super().__init__(qscheme, qdtype, None, eps)
        if qscheme.is_per_channel:
            raise ValueError(f"HistogramObserver is per-tensor; got {qscheme!r}")
        if not (isinstance(bins, int) and bins > 0):
            raise ValueError(f"HistogramObserver: bins must be a positive int, got {bins!r}")
        self.bins = bins
        self.register_buffer("min_val", lucid.tensor(float("inf")))
        self.register_buffer("max_val", lucid.tensor(float("-inf")))
        self.register_buffer("histogram", lucid.zeros(bins))

    def _centers(self, lo, hi, device):
        width = (hi - lo) / self.bins
        return lo + (lucid.arange(self.bins, device=device, dtype=lucid.float64) + 0.5) * width

    def _rebinned(self, old_lo, old_hi, new_lo, new_hi):
        """Old counts moved onto the wider [new_lo, new_hi] grid, each old bin's mass landing
        in the new bin holding its center (mass is preserved exactly)."""
        hist = self.histogram
        if old_hi <= old_lo:  # every earlier value was one number: one spike at old_lo
            centers = lucid.full((self.bins,), old_lo, dtype=lucid.float64, device=hist.device)
        else:
            centers = self._centers(old_lo, old_hi, hist.device)
        pos = lucid.clip(lucid.floor((centers - new_lo) / ((new_hi - new_lo) / self.bins)), 0, self.bins - 1)
        return lucid.zeros_like(hist).scatter_add(0, pos.to(lucid.int64), hist)

    def forward(self, x):
        self._check_observed(x)
        data = x.detach().to(lucid.float32)
        lo, hi = float(data.min().item()), float(data.max().item())
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError("HistogramObserver: input contains inf or nan")
        old_lo, old_hi = float(self.min_val.item()), float(self.max_val.item())
        first = math.isinf(old_lo)
        new_lo, new_hi = (lo, hi) if first else (min(lo, old_lo), max(hi, old_hi))
        if new_hi > new_lo:
            counts = lucid.histc(data, bins=self.bins, min=new_lo, max=new_hi).to(self.histogram.device)
        else:  # a constant tensor: all its mass in the first bin
            counts = lucid.zeros_like(self.histogram)
            counts[0] = float(data.numel())
        if not first:
            if (new_lo, new_hi) == (old_lo, old_hi):
                counts = counts + self.histogram
            else:
                counts = counts + self._rebinned(old_lo, old_hi, new_lo, new_hi)
        self.histogram = counts.to(self.histogram.dtype)
        self.min_val = lucid.tensor(new_lo, device=self.min_val.device)
        self.max_val = lucid.tensor(new_hi, device=self.max_val.device)
        return x

    def _best_clip_range(self):
        lo, hi = float(self.min_val.item()), float(self.max_val.item())
        counts = self.histogram.to(device="cpu", dtype=lucid.float64)
        total = float(counts.sum().item())
        if hi <= lo or total <= 0:
            return lo, hi
        centers = self._centers(lo, hi, "cpu")
        cumulative = lucid.cumsum(counts, dim=0)
        levels = self.qdtype.quant_max - self.qdtype.quant_min
        best_err, best = math.inf, (lo, hi)
        for frac in _TAIL_FRACTIONS:
            a = self._mass_point(cumulative, centers, frac * total)
            b = self._mass_point(cumulative, centers, (1.0 - frac) * total)
            if frac == 0.0:  # no clipping: keep the true extremes, not bin centers
                a, b = lo, hi
            if b <= a:
                continue
            step = (b - a) / levels
            clipped = lucid.clip(centers, a, b)
            err = float((counts * ((centers - clipped) ** 2 + step * step / 12.0)).sum().item())
            if err < best_err:
                best_err, best = err, (a, b)
        return best

    @staticmethod
    def _mass_point(cumulative, centers, mass):
        """Center of the first bin whose cumulative count reaches mass."""
        reached = (cumulative >= mass).to(lucid.int64)
        index = int(lucid.argmax(reached).item())
        return float(centers[index].item())

    def calculate_qparams(self):
        self._require_calibrated()
        a, b = self._best_clip_range()
        return calculate_qparams(lucid.tensor(a), lucid.tensor(b), self.qscheme, self.qdtype, self.eps)

    def extra_repr(self):
        return f"bins={self.bins}, " + super().extra_repr()
