"""A tour of lucid's tensors: creation, views, dtypes, randomness, NumPy/DLPack
interop, and GPU storage when a GPU is present. Run by the README's main command.

    .venv/bin/python examples/tensor_tour.py [--device auto]

The tour's tensors are made on --device; auto is the GPU when there is one (and it
says so). NumPy shares host memory only, so the interop section works on the CPU.
"""

import argparse
import time

import lucid
from _device import pick_device  # examples/_device.py


def section(title):
    print(f"\n== {title}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="auto", help="auto, cpu, gpu or cuda[:N]")
    args = p.parse_args(argv)
    device = pick_device(args.device, "running")

    section("creation")
    x = lucid.arange(12, dtype=lucid.float32, device=device).reshape(3, 4)
    print(x)
    print("shape", x.shape, "stride", x.stride(), "dtype", x.dtype, "device", x.device)
    print(lucid.linspace(0, 1, 5, device=device), lucid.eye(2, dtype=lucid.int64, device=device))
    print(lucid.full((2, 2), 1.5, dtype=lucid.bfloat16, device=device))

    section("views share storage")
    col = x[:, 1]
    col.fill_(-1)
    print("after x[:, 1].fill_(-1):", x, sep="\n")
    print("x.t() contiguous?", x.t().is_contiguous(), "-> contiguous():", x.t().contiguous().stride())
    print("expand:", lucid.tensor([1, 2, 3], device=device).expand(2, 3))
    print("x[..., None, ::2].shape =", x[..., None, ::2].shape, " version counter:", x._version)

    section("dtypes")
    h = x.half()
    print(h, "->", h.to(lucid.int32))
    print(lucid.tensor([True, 2, 3.5], device=device).dtype, lucid.tensor([1, 2], device=device).dtype,
          lucid.tensor([1j], device=device).dtype)
    print(lucid.finfo(lucid.float16), lucid.iinfo(lucid.int8), sep="\n")

    section("random (Philox, counter-based)")
    lucid.manual_seed(0)
    a = lucid.randn(4, device=device)
    lucid.manual_seed(0)
    print("same seed, same draw:", a.tolist() == lucid.randn(4, device=device).tolist(), a)
    big = lucid.rand(1_000_000, device=device)
    print("mean of 1e6 uniforms: %.4f" % (sum(big.tolist()) / big.numel()))
    print("randperm(8):", lucid.randperm(8, device=device), " randint:", lucid.randint(0, 10, (5,), device=device))

    section("interop without copies")
    try:
        import numpy as np

        # NumPy sees host memory only: .cpu() is x itself on the CPU, and a copy of a GPU tensor.
        host = x.cpu()
        arr = host.numpy()
        arr[0, 0] = 100.0
        print("numpy write seen by lucid:", host[0, 0].item())
        print("from_numpy:", lucid.from_numpy(np.arange(3, dtype=np.int16)))
    except ImportError:
        print("numpy not installed: skipping")

    section("GPU")
    if lucid.device(device).type == "gpu":
        print("devices:", lucid.gpu.device_count(), " x lives on", x.device)
        print("to the CPU and back, equal:", x.cpu().to(device).tolist() == x.tolist())
        big = lucid.rand(64 << 20)  # 256 MiB, made in host memory on purpose: its upload is what is timed
        lucid.gpu.synchronize(device)
        t0 = time.perf_counter()
        gb = big.to(device)
        lucid.gpu.synchronize(device)
        dt = time.perf_counter() - t0
        print(f"upload 256 MiB: {dt * 1e3:.1f} ms ({big.nbytes / dt / 1e9:.1f} GB/s)")
        print("memory allocated:", lucid.gpu.memory_allocated(device), "peak:", lucid.gpu.max_memory_allocated(device))
        del gb
        lucid.gpu.empty_cache()
        pinned = lucid.ones(4).pin_memory()  # pinned memory is host memory the GPU can read directly
        on_gpu = pinned.to(device)
        print("pinned -> gpu is a relabel:", pinned.untyped_storage().data_ptr() == on_gpu.untyped_storage().data_ptr())
    elif lucid.gpu.is_available():
        print(f"--device {device}: GPU storage is left out (run with --device gpu to see it)")
    else:
        print("no GPU available here: GPU storage is exercised on the GPU machine")


if __name__ == "__main__":
    main()
