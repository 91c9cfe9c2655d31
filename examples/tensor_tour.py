"""A tour of lucid's tensors: creation, views, dtypes, randomness, NumPy/DLPack
interop, and GPU storage when a GPU is present. Run by the README's main command."""

import time

import lucid


def section(title):
    print(f"\n== {title}")


def main():
    section("creation")
    x = lucid.arange(12, dtype=lucid.float32).reshape(3, 4)
    print(x)
    print("shape", x.shape, "stride", x.stride(), "dtype", x.dtype, "device", x.device)
    print(lucid.linspace(0, 1, 5), lucid.eye(2, dtype=lucid.int64))
    print(lucid.full((2, 2), 1.5, dtype=lucid.bfloat16))

    section("views share storage")
    col = x[:, 1]
    col.fill_(-1)
    print("after x[:, 1].fill_(-1):", x, sep="\n")
    print("x.t() contiguous?", x.t().is_contiguous(), "-> contiguous():", x.t().contiguous().stride())
    print("expand:", lucid.tensor([1, 2, 3]).expand(2, 3))
    print("x[..., None, ::2].shape =", x[..., None, ::2].shape, " version counter:", x._version)

    section("dtypes")
    h = x.half()
    print(h, "->", h.to(lucid.int32))
    print(lucid.tensor([True, 2, 3.5]).dtype, lucid.tensor([1, 2]).dtype, lucid.tensor([1j]).dtype)
    print(lucid.finfo(lucid.float16), lucid.iinfo(lucid.int8), sep="\n")

    section("random (Philox, counter-based)")
    lucid.manual_seed(0)
    a = lucid.randn(4)
    lucid.manual_seed(0)
    print("same seed, same draw:", a.tolist() == lucid.randn(4).tolist(), a)
    big = lucid.rand(1_000_000)
    print("mean of 1e6 uniforms: %.4f" % (sum(big.tolist()) / big.numel()))
    print("randperm(8):", lucid.randperm(8), " randint:", lucid.randint(0, 10, (5,)))

    section("interop without copies")
    try:
        import numpy as np

        arr = x.numpy()
        arr[0, 0] = 100.0
        print("numpy write seen by lucid:", x[0, 0].item())
        print("from_numpy:", lucid.from_numpy(np.arange(3, dtype=np.int16)))
    except ImportError:
        print("numpy not installed: skipping")

    if lucid.gpu.is_available():
        section("GPU")
        print("devices:", lucid.gpu.device_count())
        g = x.to("gpu")
        print(g)
        print("back on the CPU equal:", g.cpu().tolist() == x.tolist())
        big = lucid.rand(64 << 20)  # 256 MiB
        lucid.gpu.synchronize()
        t0 = time.perf_counter()
        gb = big.cuda()
        lucid.gpu.synchronize()
        dt = time.perf_counter() - t0
        print(f"upload 256 MiB: {dt * 1e3:.1f} ms ({big.nbytes / dt / 1e9:.1f} GB/s)")
        print("memory allocated:", lucid.gpu.memory_allocated(), "peak:", lucid.gpu.max_memory_allocated())
        del gb
        lucid.gpu.empty_cache()
        pinned = lucid.ones(4).pin_memory()
        on_gpu = pinned.to("gpu")
        print("pinned -> gpu is a relabel:", pinned.untyped_storage().data_ptr() == on_gpu.untyped_storage().data_ptr())
    else:
        section("GPU")
        print("no GPU available here: GPU storage is exercised on the GPU machine")


if __name__ == "__main__":
    main()
