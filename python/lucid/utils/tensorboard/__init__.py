"""torch.utils.tensorboard's SummaryWriter for lucid: writes TensorBoard event files
(TFRecord-framed protobuf events) with its own small encoder, so neither tensorboard
nor protobuf is needed to log; only viewing the logs needs TensorBoard.
"""

from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]
