"""lucid.onnx's error (in its own file: `import lucid` loads lucid.onnx, and NumPy, which
the exporter uses, is loaded only when export runs)."""


class UnsupportedOperatorError(RuntimeError):
    """lucid.onnx.export met an operation it cannot write as ONNX (torch's
    torch.onnx.errors.UnsupportedOperatorError); the message names it."""
