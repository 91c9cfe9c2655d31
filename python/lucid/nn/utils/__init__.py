"""lucid.nn.utils, as torch.nn.utils."""

from . import rnn  # noqa: F401
from . import parametrizations, parametrize, prune, stateless  # noqa: F401
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,  # noqa: F401
                        get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .copy_state import copy_parameters_and_buffers  # noqa: F401  (upstream Lucid's)
from .init import skip_init  # noqa: F401
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights  # noqa: F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401
# (upstream Lucid keeps the sequence packing here; torch in nn.utils.rnn, also here)
from .rnn import (PackedSequence, pack_padded_sequence, pack_sequence, pad_packed_sequence,  # noqa: F401
                  pad_sequence)
