"""Upstream Lucid's own layers, which torch.nn has no name for: NoisyLinear (NoisyNet's
linear layer with learned factorised Gaussian noise, Fortunato et al. 2017), VectorQuantizer
and its VectorQuantizerOutput (VQ-VAE's codebook, van den Oord et al. 2017) and FusedLinear
(a Linear and its activation as one layer). Names, arguments, parameter and buffer names,
defaults and outputs are upstream's (FusedLinear: lucid/nn/modules/linear.py there; the
other two as upstream's own tests and VQ-VAE model use them), so programs written for it run."""

import math
import numbers
from typing import NamedTuple

from .. import functional as F
from .. import init
from .._arg_checks import int_arg
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["FusedLinear", "NoisyLinear", "VectorQuantizer", "VectorQuantizerOutput"]


def _real(value):
    """value is a real number (not a bool)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _empty(*shape, device, dtype):
    from ..._creation import empty
    return empty(*shape, device=device, dtype=dtype)


class NoisyLinear(Module):
    """A linear layer whose weights carry learned noise, for exploration in reinforcement
    learning: y = x (mu_w + sigma_w * f(eps_out) f(eps_in)^T)^T + mu_b + sigma_b * f(eps_out),
    f(e) = sign(e) sqrt(|e|) (factorised Gaussian noise, F.noisy_linear).

    The noise sample is held in the buffers epsilon_in [in_features] and epsilon_out
    [out_features] (raw unit Gaussian draws) and changes only when reset_noise() (upstream's
    resample()) draws a new one: two forwards on one input are the same network, as the
    paper's gradient estimate and an agent acting for an episode both need. It is drawn from
    lucid's generator, so lucid.manual_seed repeats it. The noise is used in training mode;
    eval() gives the mean network (mu only), the deterministic policy.

    Initialised as the paper does for factorised noise: mu ~ U[-1/sqrt(in), 1/sqrt(in)],
    sigma = sigma_zero / sqrt(in), for weights and biases alike."""

    def __init__(self, in_features, out_features, bias=True, sigma_zero=0.5, device=None, dtype=None):
        super().__init__()
        self.in_features = int_arg("NoisyLinear", "in_features", in_features, minimum=1)
        self.out_features = int_arg("NoisyLinear", "out_features", out_features, minimum=1)
        if not _real(sigma_zero) or not sigma_zero > 0:
            raise ValueError(f"NoisyLinear: sigma_zero must be a positive number, got {sigma_zero!r}")
        self.sigma_zero = float(sigma_zero)
        self.weight_mu = Parameter(_empty(self.out_features, self.in_features, device=device, dtype=dtype))
        self.weight_sigma = Parameter(_empty(self.out_features, self.in_features, device=device, dtype=dtype))
        if bias:
            self.bias_mu = Parameter(_empty(self.out_features, device=device, dtype=dtype))
            self.bias_sigma = Parameter(_empty(self.out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_mu", None)
            self.register_parameter("bias_sigma", None)
        self.register_buffer("epsilon_in", _empty(self.in_features, device=device, dtype=dtype))
        self.register_buffer("epsilon_out", _empty(self.out_features, device=device, dtype=dtype))
        self.reset_parameters()
        self.reset_noise()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.in_features)
        sigma = self.sigma_zero / math.sqrt(self.in_features)
        init.uniform_(self.weight_mu, -bound, bound)
        init.constant_(self.weight_sigma, sigma)
        if self.bias_mu is not None:
            init.uniform_(self.bias_mu, -bound, bound)
            init.constant_(self.bias_sigma, sigma)

    def reset_noise(self):
        """Draw a new noise sample (in_features + out_features unit Gaussians) on the
        buffers' device and dtype."""
        from ... import no_grad, randn
        with no_grad():
            for eps in (self.epsilon_in, self.epsilon_out):
                eps.copy_(randn(eps.shape[0], device=eps.device, dtype=eps.dtype))

    def resample(self):
        """reset_noise under upstream's other name."""
        self.reset_noise()

    @property
    def noise_in(self):
        """epsilon_in, by upstream's other name."""
        return self.epsilon_in

    @property
    def noise_out(self):
        """epsilon_out, by upstream's other name."""
        return self.epsilon_out

    def forward(self, input):
        if not self.training:
            return F.linear(input, self.weight_mu, self.bias_mu)
        return F.noisy_linear(input, self.weight_mu, self.weight_sigma, self.bias_mu, self.bias_sigma,
                              self.epsilon_in, self.epsilon_out)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias_mu is not None}, sigma_zero={self.sigma_zero}")


class VectorQuantizerOutput(NamedTuple):
    """What VectorQuantizer returns, in upstream's order (it unpacks as a tuple too):
    quantized [..., D] (the entries, with the straight-through gradient to the input),
    indices int64 [...], codebook_loss and commitment_loss (unweighted scalars; the layer's
    loss() weighs them), and perplexity (exp of the entropy of the batch's code usage, from 1
    when one entry takes everything to K when all are used evenly: collapse shows as a fall)."""

    quantized: object
    indices: object
    codebook_loss: object
    commitment_loss: object
    perplexity: object


class VectorQuantizer(Module):
    """VQ-VAE's quantiser: each vector along the input's trailing axis snapped to its nearest
    entry of a learned codebook `weight` [num_embeddings, embedding_dim].

    forward(x) returns a VectorQuantizerOutput. quantized passes the gradient to x unchanged
    (straight-through, F.vector_quantize) and none to the codebook; the two loss terms are
    codebook_loss = mean (sg[x] - e)^2, which moves the entries toward the inputs assigned to
    them and is the only thing that trains the codebook, and commitment_loss = mean
    (x - sg[e])^2, which keeps the encoder near the entries it picks. loss(out) is
    codebook_loss + commitment_cost * commitment_loss, the paper's objective less the
    reconstruction term. assign(x) gives the indices alone, lookup(indices) their entries.

    The codebook starts as U(-1/K, 1/K), K = num_embeddings (the common VQ-VAE
    initialisation, and upstream's)."""

    def __init__(self, num_embeddings, embedding_dim, commitment_cost=0.25, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = int_arg("VectorQuantizer", "num_embeddings", num_embeddings, minimum=1)
        self.embedding_dim = int_arg("VectorQuantizer", "embedding_dim", embedding_dim, minimum=1)
        if not _real(commitment_cost) or not commitment_cost >= 0:
            raise ValueError(f"VectorQuantizer: commitment_cost must be a number >= 0, got {commitment_cost!r}")
        self.commitment_cost = float(commitment_cost)
        self.weight = Parameter(_empty(self.num_embeddings, self.embedding_dim, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.uniform_(self.weight, -1 / self.num_embeddings, 1 / self.num_embeddings)

    def _check(self, x):
        from .._functional_lucid_layers import _check_codebook
        _check_codebook(x, self.weight, "VectorQuantizer")

    def assign(self, x):
        """The index of the nearest entry for every vector of x [..., embedding_dim]."""
        from .._functional_lucid_layers import _nearest_indices
        self._check(x)
        return _nearest_indices(x, self.weight)

    def lookup(self, indices):
        """The codebook entries `indices` names ([..., embedding_dim]; differentiable in the
        codebook)."""
        return F.embedding(indices, self.weight)

    def loss(self, output):
        """codebook_loss + commitment_cost * commitment_loss of a forward's output."""
        return output.codebook_loss + self.commitment_cost * output.commitment_loss

    def _perplexity(self, indices, dtype):
        """exp(-sum_k p_k log p_k) of the share p_k of positions that picked entry k."""
        from ... import bincount, no_grad, where
        with no_grad():
            counts = bincount(indices.reshape(-1), minlength=self.num_embeddings).to(dtype)
            p = counts / max(indices.numel(), 1)
            plogp = where(p > 0, p * p.clamp_min(1e-30).log(), 0.0)
            return (-plogp.sum()).exp()

    def forward(self, input):
        from .._functional_lucid_layers import _straight_through_lookup
        indices = self.assign(input)
        entries = self.lookup(indices)
        quantized = _straight_through_lookup(input, self.weight, indices)
        codebook_loss = F.mse_loss(entries, input.detach())
        commitment_loss = F.mse_loss(input, entries.detach())
        return VectorQuantizerOutput(quantized, indices, codebook_loss, commitment_loss,
                                     self._perplexity(indices, quantized.dtype))

    def extra_repr(self):
        return (f"num_embeddings={self.num_embeddings}, embedding_dim={self.embedding_dim}, "
                f"commitment_cost={self.commitment_cost}")


class FusedLinear(Module):
    """activation(x W^T + b) as one layer, activation "relu" (the default) or "gelu" (its
    tanh approximation, what upstream's fused kernel computes).

    The parameters are weight [out_features, in_features] and bias [out_features], named,
    shaped and initialised as nn.Linear's (the same draws under the same seed), so a Linear's
    state_dict loads into a FusedLinear and back. Not a Linear subclass, as upstream's is not:
    code that treats every isinstance(m, nn.Linear) as affine would be wrong about it."""

    _ACTIVATIONS = ("gelu", "relu")

    def __init__(self, in_features, out_features, activation="relu", bias=True, device=None, dtype=None):
        super().__init__()
        if activation not in self._ACTIVATIONS:
            raise ValueError(f"FusedLinear: unsupported activation {activation!r}; "
                             f"choose from {list(self._ACTIVATIONS)}")
        self.in_features = int_arg("FusedLinear", "in_features", in_features, minimum=1)
        self.out_features = int_arg("FusedLinear", "out_features", out_features, minimum=1)
        self.activation = activation
        self.weight = Parameter(_empty(self.out_features, self.in_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(self.out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    reset_parameters = Linear.reset_parameters  # (the same draws as a Linear's)

    def forward(self, input):
        y = F.linear(input, self.weight, self.bias)
        return F.relu(y) if self.activation == "relu" else F.gelu(y, approximate="tanh")

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"activation={self.activation!r}, bias={self.bias is not None}")
