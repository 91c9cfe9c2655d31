"""Kernels generated at run time (csrc/backend/cuda/generated_kernels.h, Note [Generated
kernels]): fused elementwise chains compiled with NVRTC, in the background or before the
chain runs, cached in memory and on disk, keyed without the chain's constants. (That they
give the unfused ops' bits is tested in test_gpu_fusion.py.) The switch's checks run
everywhere; the rest needs a GPU."""

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import lucid

GPU = lucid.gpu.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="lucid has no GPU here")


def stats():
    return lucid.gpu.generated_kernel_stats()


def fused_launches():
    """Calls run by generated kernels: fused chains, and chains fused into a row reduction
    (a sum of a chain's result is one kernel)."""
    s = stats()
    return s["fused_launches"] + s["fused_reduce_launches"]


class compile_mode:
    """Lazy mode with fusion, and kernel_compile() set to `mode`, for a with-block."""

    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        self.saved = (lucid.gpu.is_lazy(), lucid.gpu.is_fusion(), lucid.gpu.kernel_compile())
        lucid.gpu.set_lazy(True)
        lucid.gpu.set_fusion(True)
        lucid.gpu.set_kernel_compile(self.mode)

    def __exit__(self, *exc):
        lazy, fusion, mode = self.saved
        lucid.gpu.set_kernel_compile(mode)
        lucid.gpu.set_fusion(fusion)
        lucid.gpu.set_lazy(lazy)


def test_the_compile_switch():
    was = lucid.gpu.kernel_compile()
    assert was in ("background", "sync", "off")
    try:
        for mode in ("sync", "off", "background"):
            lucid.gpu.set_kernel_compile(mode)
            assert lucid.gpu.kernel_compile() in (mode, "off")  # ("off" always, in a build without CUDA)
        with pytest.raises(ValueError, match="'background', 'sync' or 'off'"):
            lucid.gpu.set_kernel_compile("eager")
    finally:
        lucid.gpu.set_kernel_compile(was)
    assert set(stats()) == {"compiled", "loaded", "failed", "compiling", "last_error", "fused_launches",
                            "fused_norm_launches", "fused_norm_backward_launches", "fused_softmax_launches",
                            "fused_reduce_launches"}


@needs_gpu
def test_sync_mode_runs_the_generated_kernel_and_a_new_constant_compiles_nothing():
    x = lucid.tensor(np.linspace(-3, 3, 5000), device="gpu").float()
    with compile_mode("sync"):
        # (the odd constant makes this chain's kernel new to this process)
        first = ((x * 1.000123 - 0.25).tanh() * 3.0).cpu().numpy()
        before = stats()
        # The same chain with new numbers: the same kernel. (A number equal to another of
        # the chain's, 0.25 here, would share its register: another program.)
        for scale in (0.5, 0.75, 2.0):
            got = ((x * scale - 0.25).tanh() * 3.0).cpu().numpy()
            np.testing.assert_allclose(got, np.tanh(x.cpu().numpy() * scale - 0.25) * 3.0, rtol=1e-6, atol=1e-6)
        after = stats()
    assert after["compiled"] + after["loaded"] == before["compiled"] + before["loaded"]
    assert after["fused_launches"] >= before["fused_launches"] + 3
    assert after["failed"] == before["failed"], after["last_error"]
    np.testing.assert_allclose(first, np.tanh(x.cpu().numpy() * 1.000123 - 0.25) * 3.0, rtol=1e-6, atol=1e-6)


@needs_gpu
def test_background_mode_interprets_until_the_kernel_is_ready():
    x = lucid.tensor(np.linspace(-2, 2, 3000), device="gpu").float()
    with compile_mode("background"):
        def chain():
            return ((x * 0.75 + 0.001357).sigmoid() - 0.5).cpu().numpy()

        first = chain()  # compiles in the background; this run is interpreted
        deadline = time.monotonic() + 60
        while stats()["compiling"] and time.monotonic() < deadline:
            time.sleep(0.01)
        assert stats()["compiling"] == 0
        launches = stats()["fused_launches"]
        second = chain()
        assert stats()["fused_launches"] == launches + 1
    np.testing.assert_array_equal(first.view(np.uint32), second.view(np.uint32))


@needs_gpu
def test_off_mode_never_compiles():
    x = lucid.tensor(np.linspace(-2, 2, 3000), device="gpu").float()
    with compile_mode("off"):
        before = stats()
        y = ((x * 0.5 + 0.002468).exp() - 1.0).cpu().numpy()
        after = stats()
    assert after["compiled"] == before["compiled"] and after["fused_launches"] == before["fused_launches"]
    np.testing.assert_allclose(y, np.exp(x.cpu().numpy() * 0.5 + 0.002468) - 1.0, rtol=1e-6, atol=1e-6)


# A new process that runs one chain with kernels compiled before it runs, and prints the
# generated-kernel counts and the result's checksum.
CHILD = textwrap.dedent("""
    import json, lucid
    lucid.gpu.set_kernel_compile("sync")
    x = lucid.arange(4096, device="gpu").float() / 4096
    y = ((x * 3.0 - 1.0).sin() * x + 0.5).abs()
    total = float(y.sum().item())
    s = lucid.gpu.generated_kernel_stats()
    print(json.dumps({"compiled": s["compiled"], "loaded": s["loaded"], "failed": s["failed"],
                      "launches": s["fused_launches"] + s["fused_reduce_launches"], "total": total}))
""")


def run_child(cache_dir):
    env = dict(os.environ, LUCID_CACHE_DIR=str(cache_dir), LUCID_LAZY="1", LUCID_FUSION="1")
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    import json
    return json.loads(done.stdout.strip().splitlines()[-1])


@needs_gpu
def test_the_disk_cache_serves_a_new_process_and_survives_a_damaged_file(tmp_path):
    first = run_child(tmp_path)
    assert first["compiled"] >= 1 and first["loaded"] == 0 and first["failed"] == 0 and first["launches"] >= 1
    files = sorted((tmp_path / "kernels").glob("*.cubin"))
    assert len(files) == first["compiled"]
    assert not list((tmp_path / "kernels").glob("*.tmp.*"))

    second = run_child(tmp_path)
    assert second["compiled"] == 0 and second["loaded"] == first["compiled"] and second["launches"] >= 1
    assert second["total"] == first["total"]

    for f in files:  # damaged: cut short, then garbage of the right length
        data = f.read_bytes()
        f.write_bytes(data[: len(data) // 2])
    third = run_child(tmp_path)
    assert third["compiled"] == first["compiled"] and third["loaded"] == 0 and third["failed"] == 0
    assert third["total"] == first["total"]
    for f in files:
        data = bytearray(f.read_bytes())
        data[-200:] = b"\x00" * 200  # the CUBIN's tail zeroed, its header intact
        f.write_bytes(bytes(data))
    fourth = run_child(tmp_path)
    assert fourth["failed"] == 0 and fourth["total"] == first["total"]


@needs_gpu
def test_an_unwritable_cache_folder_keeps_kernels_in_memory(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    got = run_child(blocked)  # kernels/ cannot be made under a file
    assert got["compiled"] >= 1 and got["failed"] == 0 and got["launches"] >= 1


@needs_gpu
def test_a_repeated_flush_replays_as_a_graph_again_once_its_kernels_are_compiled():
    x = lucid.tensor(np.linspace(-1, 1, 2048), device="gpu").float()
    w = lucid.tensor(np.linspace(0, 1, 100), device="gpu").float()
    replay = lucid.gpu.is_graph_replay()
    lucid.gpu.set_graph_replay(True)
    try:
        with compile_mode("background"):
            def step():  # two chains (its own constants: kernels new to this process), sums, an add
                y = (((x * 1.000987 + 0.1).relu() * 0.3 - 0.05).exp() + 0.0123).sum()
                z = (w * 2.000987 - 0.5).abs().sum()
                return (y + z).item()

            expected = step()
            for _ in range(5):  # interpreted, captured, replayed while the kernel compiles
                assert step() == expected
            deadline = time.monotonic() + 60
            while stats()["compiling"] and time.monotonic() < deadline:
                time.sleep(0.01)
            before, launches = lucid.gpu.pending_stats()["graph_runs"], fused_launches()
            for _ in range(6):
                assert step() == expected
            # a new signature (the generated kernel): run once directly, then as a graph
            assert lucid.gpu.pending_stats()["graph_runs"] - before >= 5
            assert fused_launches() - launches >= 5
    finally:
        lucid.gpu.set_graph_replay(replay)


# A process that exits while the background compiler is still at work on its last
# chains (Note [The compiler thread at exit]): before the atexit stop, the exit tore down
# statics and the CUDA runtime under the compiling thread (`free(): invalid size`, or a
# segfault). Fresh chains of float64 dirichlet gradients, each a new kernel to compile.
EXITING_CHILD = textwrap.dedent("""
    import lucid
    lucid.gpu.set_kernel_compile("background")
    for n in (1, 7, 5000):
        a = lucid.arange(n, device="gpu").double() + 1.0
        g = lucid._dirichlet_grad(a / 40, a + 0.1, a * 2 + 1)
        h = ((g * 1.5 - a).tanh() + n).exp2()
        h.sum().item()
""")


@needs_gpu
def test_a_process_exits_cleanly_while_a_kernel_compiles_in_the_background(tmp_path):
    for attempt in range(3):  # an empty cache each time, so every chain compiles
        env = dict(os.environ, LUCID_CACHE_DIR=str(tmp_path / str(attempt)), LUCID_LAZY="1", LUCID_FUSION="1")
        done = subprocess.run([sys.executable, "-c", EXITING_CHILD], env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
