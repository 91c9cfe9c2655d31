"""Upstream Lucid's own layers in nn.functional, the functions behind lucid.nn.NoisyLinear and
lucid.nn.VectorQuantizer: scaled_noise and noisy_linear (NoisyNet's factorised Gaussian
noise, Fortunato et al. 2017) and vector_quantize (VQ-VAE's nearest-codebook lookup with a
straight-through gradient, van den Oord et al. 2017). Compositions of differentiable ops,
with upstream's signatures and return values (lucid/nn/functional/linear.py and
lucid/nn/functional/sparse.py there)."""

__all__ = ["noisy_linear", "scaled_noise", "vector_quantize"]


def _lucid():
    import lucid
    return lucid


def scaled_noise(x):
    """f(x) = sign(x) sqrt(|x|), the transform the paper puts on both factorised noise vectors
    (the bias's noise too: it reuses the output vector rather than drawing its own)."""
    return x.sign() * x.abs().sqrt()


def _noisy_shapes(x, weight_mu, weight_sigma, bias_mu, bias_sigma):
    """(out_features, in_features) of a noisy layer, once every operand's shape agrees with
    weight_mu's: a mismatch caught here names the operand, where the matmul would not."""
    if weight_mu.dim() != 2:
        raise ValueError(f"noisy_linear: weight_mu must be 2-D (out_features, in_features), "
                         f"got shape {tuple(weight_mu.shape)}")
    out_features, in_features = (int(n) for n in weight_mu.shape)
    if tuple(weight_sigma.shape) != (out_features, in_features):
        raise ValueError(f"noisy_linear: weight_sigma must have weight_mu's shape {(out_features, in_features)}, "
                         f"got {tuple(weight_sigma.shape)}")
    if (bias_mu is None) != (bias_sigma is None):
        raise ValueError("noisy_linear: bias_mu and bias_sigma must be given together or not at all")
    for name, b in (("bias_mu", bias_mu), ("bias_sigma", bias_sigma)):
        if b is not None and tuple(b.shape) != (out_features,):
            raise ValueError(f"noisy_linear: {name} must have shape ({out_features},), got {tuple(b.shape)}")
    if x.dim() < 1 or int(x.shape[-1]) != in_features:
        raise ValueError(f"noisy_linear: x's last dimension must be in_features={in_features}, "
                         f"got shape {tuple(x.shape)}")
    return out_features, in_features


def _noise_vector(eps, size, name, like):
    """eps as given (checked to hold `size` draws), or `size` fresh unit Gaussian draws from
    lucid's generator on like's device and dtype (so lucid.manual_seed repeats them)."""
    if eps is None:
        return _lucid().randn(size, device=like.device, dtype=like.dtype)
    if tuple(eps.shape) != (size,):
        raise ValueError(f"noisy_linear: {name} must have shape ({size},), got {tuple(eps.shape)}")
    return eps


def noisy_linear(x, weight_mu, weight_sigma, bias_mu=None, bias_sigma=None, epsilon_in=None, epsilon_out=None):
    """y = x (mu_w + sigma_w * eps_w)^T + (mu_b + sigma_b * eps_b), with factorised noise
    eps_w = f(eps_out) f(eps_in)^T and eps_b = f(eps_out), f = scaled_noise.

    epsilon_in [in_features] and epsilon_out [out_features] are the raw unit Gaussian draws
    (f is applied here); None draws them. They are arguments because a sample has to be held
    fixed across a forward and backward pass (for an agent, often across an episode): a
    function that drew them itself would be a different network at every call. Factorising
    costs in + out draws instead of in * out, the paper's reason for it. sigma_w and sigma_b
    get gradients through the noise, so the exploration scale is learned."""
    out_features, in_features = _noisy_shapes(x, weight_mu, weight_sigma, bias_mu, bias_sigma)
    f_in = scaled_noise(_noise_vector(epsilon_in, in_features, "epsilon_in", weight_mu))
    f_out = scaled_noise(_noise_vector(epsilon_out, out_features, "epsilon_out", weight_mu))
    weight = weight_mu + weight_sigma * (f_out.reshape(out_features, 1) * f_in.reshape(1, in_features))
    bias = None if bias_mu is None else bias_mu + bias_sigma * f_out
    return _lucid().nn.functional.linear(x, weight, bias)


def _check_codebook(x, codebook, owner):
    """The quantiser's operands: a [K, D] floating codebook with K >= 1 and an input of its
    dtype whose trailing axis is D (the framework's features-last convention; image layouts
    permute)."""
    if codebook.dim() != 2:
        raise ValueError(f"{owner}: codebook must be 2-D (K, D), got shape {tuple(codebook.shape)}")
    if int(codebook.shape[0]) < 1:
        raise ValueError(f"{owner}: codebook must have at least one entry, got shape {tuple(codebook.shape)}")
    for name, t in (("x", x), ("codebook", codebook)):
        if not t.dtype.is_floating_point:
            raise TypeError(f"{owner}: {name} must be a floating-point tensor, got {t.dtype}")
    if x.dtype != codebook.dtype:
        raise TypeError(f"{owner}: x ({x.dtype}) and the codebook ({codebook.dtype}) must have the same dtype")
    dim = int(codebook.shape[1])
    if x.dim() < 1 or int(x.shape[-1]) != dim:
        raise ValueError(f"{owner}: x's trailing axis must match the codebook's entry size {dim}, "
                         f"got shape {tuple(x.shape)}")


def _nearest_indices(x, codebook):
    """argmin_k ||x - e_k||^2 for each row of x [..., D] (int64 [...]). Written as
    argmin_k (||e_k||^2 - 2 x.e_k): ||x||^2 is the same for every k, and leaving it out
    spares the cancellation between it and the cross term when x is far from the origin.
    One [N, K] matrix, never the [N, K, D] differences; no gradient (an index has none)."""
    lucid = _lucid()
    with lucid.no_grad():
        flat = x.detach().reshape(-1, int(codebook.shape[1]))
        cb = codebook.detach()
        scores = (cb * cb).sum(-1) - 2 * (flat @ cb.mT)
        return scores.argmin(-1).reshape(tuple(x.shape[:-1]))


def vector_quantize(x, codebook):
    """(quantized, indices): each row of x [..., D] replaced by its nearest codebook [K, D]
    entry, and the int64 [...] indices of those entries.

    quantized equals the selected entries but its gradient is the identity on x (the
    straight-through estimator): argmin has no gradient, and this lets the encoder before
    the quantiser train as if quantisation were not there. Written sg[e] + (x - sg[x])
    rather than the usual x + sg[e - x], whose sum can miss e by a rounding step: here
    the added term is exactly zero, so quantized is the codebook entry to the bit. No
    gradient reaches the codebook through quantized; lucid.nn.VectorQuantizer's
    codebook_loss is the term that trains it."""
    _check_codebook(x, codebook, "vector_quantize")
    indices = _nearest_indices(x, codebook)
    return _straight_through_lookup(x, codebook, indices), indices


def _straight_through_lookup(x, codebook, indices):
    """The entries `indices` names, valued as the codebook's and differentiated as x."""
    hard = _lucid().nn.functional.embedding(indices, codebook.detach())
    return hard + (x - x.detach())
