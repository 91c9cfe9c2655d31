"""Runs ONNX models in onnxruntime for tests/python/test_onnx.py, in a process of its own:
onnxruntime starts threads when it loads, and a test process that later forks (the
DataLoader's workers) would deadlock on a lock one of them held. So the test processes
never import onnxruntime; a spawned worker does."""


def run(model_bytes, feeds):
    """The model's outputs for `feeds` ({input name: NumPy array}), as NumPy arrays."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)
