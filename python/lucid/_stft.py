"""stft and istft, as torch.stft and torch.istft (lucid.stft, Tensor.stft): framing by
Tensor.unfold, the window, and lucid.fft's transforms; istft overlap-adds the inverse
transforms with nn.functional.fold and divides by the summed squared window. Both are
compositions of differentiable ops, so both have gradients."""

__all__ = ["stft", "istft"]


def _window(window, win_length, n_fft, device, op):
    """The window (ones when None), zero-padded on both sides to n_fft (torch centres
    a shorter window in the frame)."""
    from . import ones
    from .nn.functional import pad
    if window is None:
        window = ones(win_length, device=device)
    elif window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{op}: expected a 1D window tensor of size equal to win_length={win_length}, but got "
                           f"window with size {list(window.shape)}")
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = pad(window, (left, n_fft - win_length - left))
    return window


def _lengths(op, n_fft, hop_length, win_length):
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if hop_length <= 0:
        raise RuntimeError(f"{op}: expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{op}: expected 0 < win_length <= n_fft, but got win_length={win_length}")
    return hop_length, win_length


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform: the transform of each window-weighted frame
    of n_fft samples, hop_length apart. Returns [(batch,) n_fft // 2 + 1 (onesided) or
    n_fft, frames], complex (or, with return_complex=False, its view_as_real)."""
    from . import fft as _fft
    from .nn.functional import pad
    op = "stft"
    if return_complex is None and not (input.dtype.is_complex or (window is not None and window.dtype.is_complex)):
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"{op}: expected a 1D or 2D tensor, but got {input.ndim}D tensor")
    hop_length, win_length = _lengths(op, n_fft, hop_length, win_length)
    x = input if input.ndim == 2 else input.unsqueeze(0)
    if center:
        if align_to_window is not None:
            raise ValueError("stft align_to_window should only be set when center = false")
        half = n_fft // 2
        x = pad(x.unsqueeze(1), (half, half), mode=pad_mode).squeeze(1)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"{op}: expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    if align_to_window:
        x = x.narrow(-1, (n_fft - win_length) // 2, length - (n_fft - win_length) // 2)
    w = _window(window, win_length, n_fft, x.device, op)
    frames = x.unfold(-1, n_fft, hop_length) * w  # [batch, frames, n_fft]
    complex_in = frames.dtype.is_complex
    onesided = not complex_in if onesided is None else onesided
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = (_fft.rfft if onesided else _fft.fft)(frames, dim=-1, norm=norm).transpose(-1, -2)
    if input.ndim == 1:
        spec = spec.squeeze(0)
    if return_complex is False:
        from . import view_as_real
        return view_as_real(spec.contiguous())
    return spec


def _overlap_add(frames, hop_length, total):
    """Sums frames [batch, n_fft, count], frame f at offset f * hop_length, into
    [batch, total]."""
    from .nn.functional import fold
    n_fft = frames.shape[1]
    out = fold(frames, output_size=(1, total), kernel_size=(1, n_fft), stride=(1, hop_length))
    return out.reshape(frames.shape[0], total)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of stft: the inverse transform of each frame, overlap-added and
    divided by the overlap-added squared window (the least-squares estimate)."""
    from . import fft as _fft
    from . import cat, zeros
    op = "istft"
    if not input.dtype.is_complex:
        raise TypeError("istft requires a complex-valued input tensor matching the output from stft with "
                        "return_complex=True.")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{op}: expected a tensor with 2 or 3 dimensions of complex, but got {input.ndim}D")
    hop_length, win_length = _lengths(op, n_fft, hop_length, win_length)
    spec = input if input.ndim == 3 else input.unsqueeze(0)
    bins, count = spec.shape[-2], spec.shape[-1]
    onesided = bins != n_fft if onesided is None else onesided
    want = n_fft // 2 + 1 if onesided else n_fft
    if bins != want:
        raise RuntimeError(f"{op}: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {bins}" if onesided else
                           f"{op}: expected the frequency dimension of the input tensor to match n_fft when "
                           f"onesided=False, but got {bins}")
    if onesided and return_complex:
        raise RuntimeError("cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    frames = spec.transpose(-1, -2)  # [batch, count, bins]
    frames = _fft.irfft(frames, n=n_fft, dim=-1, norm=norm) if onesided else _fft.ifft(frames, dim=-1, norm=norm)
    w = _window(window, win_length, n_fft, spec.device, op)
    if frames.dtype.is_complex and not return_complex:
        frames = frames.real
    frames = (frames * w).transpose(1, 2)  # [batch, n_fft, count]
    total = n_fft + hop_length * (count - 1)
    if frames.dtype.is_complex:
        from . import complex as _complex
        y = _complex(_overlap_add(frames.real.contiguous(), hop_length, total),
                     _overlap_add(frames.imag.contiguous(), hop_length, total))
    else:
        y = _overlap_add(frames, hop_length, total)
    w2 = (w.real if w.dtype.is_complex else w) ** 2
    envelope = _overlap_add(w2.reshape(1, n_fft, 1).expand(1, n_fft, count).contiguous(), hop_length, total)
    start = n_fft // 2 if center else 0
    end = total
    if length is not None:
        end = min(start + length, total)
    elif center:
        end = total - n_fft // 2
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    lowest = float(envelope.abs().min()) if envelope.numel() else 0.0
    if lowest <= 1e-11:
        raise RuntimeError(f"{op}: window overlap add min: {lowest:g}")
    y = y / envelope
    if length is not None and y.shape[-1] < length:
        y = cat([y, zeros(y.shape[0], length - y.shape[-1], dtype=y.dtype, device=y.device)], -1)
    return y.squeeze(0) if input.ndim == 2 else y
