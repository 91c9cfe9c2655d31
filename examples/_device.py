"""What every example does with its --device option (one place, imported by each)."""

import lucid


def pick_device(requested, doing="training"):
    """'auto' is the GPU when there is one, else the CPU; prints which device and why.
    Any other value ("cpu", "gpu", "cuda:1") is used as given: asking for a GPU that is
    not there fails at the first tensor put on it, never silently on the CPU."""
    if requested != "auto":
        print(f"--device {requested}: {doing} on {requested}, as asked")
        return requested
    if lucid.gpu.is_available():
        print(f"--device auto: a GPU is present, {doing} on gpu:0")
        return "gpu"
    print(f"--device auto: no GPU here (or lucid was built without CUDA), {doing} on the CPU")
    return "cpu"
