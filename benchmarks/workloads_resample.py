"""Resampling workloads: interpolate (bilinear, nearest, bicubic), its backward, and grid_sample.
nbytes counts the input read once and the output written once (float32)."""

from workloads import F32, inputs, workload

N, C, H, W = 8, 32, 64, 64
IN = N * C * H * W * F32
OUT2 = 4 * IN


def _interp(mode, **kw):
    return lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode=mode, **kw)


def _interp_backward(m, x):
    x.requires_grad_(True)
    m.nn.functional.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False).sum().backward()
    x.grad = None


workload(f"interpolate nearest x2 [{N},{C},{H},{W}]", "nn.resample", inputs((N, C, H, W)), _interp("nearest"),
         nbytes=IN + OUT2)
workload(f"interpolate bilinear x2 [{N},{C},{H},{W}]", "nn.resample", inputs((N, C, H, W)),
         _interp("bilinear", align_corners=False), nbytes=IN + OUT2)
workload(f"interpolate bicubic x2 [{N},{C},{H},{W}]", "nn.resample", inputs((N, C, H, W)),
         _interp("bicubic", align_corners=False), nbytes=IN + OUT2)
workload(f"interpolate bilinear x2 fwd+bwd [{N},{C},{H},{W}]", "nn.resample", inputs((N, C, H, W)), _interp_backward,
         nbytes=2 * (IN + OUT2))
workload(f"grid_sample bilinear [{N},{C},{H},{W}]", "nn.resample",
         inputs((N, C, H, W), lambda g: __import__("torch").rand(N, H, W, 2, generator=g) * 2 - 1),
         lambda m, x, g: m.nn.functional.grid_sample(x, g, align_corners=False), nbytes=2 * IN)


def _grid_backward(m, x, g):
    x.requires_grad_(True)
    g.requires_grad_(True)
    m.nn.functional.grid_sample(x, g, align_corners=False).sum().backward()
    x.grad = None
    g.grad = None


workload(f"grid_sample bilinear fwd+bwd [{N},{C},{H},{W}]", "nn.resample",
         inputs((N, C, H, W), lambda g: __import__("torch").rand(N, H, W, 2, generator=g) * 2 - 1), _grid_backward,
         nbytes=4 * IN)
