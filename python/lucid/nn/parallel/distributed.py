"""DistributedDataParallel (torch.nn.parallel.distributed): importable, so that programs which
wrap their model when launched on several processes import and run single-process; its
constructor says what is missing. lucid has no lucid.distributed yet (process groups,
all-reduce of gradients), which DistributedDataParallel is built on."""

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """A Module subclass, so `isinstance(model, DistributedDataParallel)` (the usual test before
    reaching for `model.module`) works and is False for everything lucid builds."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False, **kwargs):
        raise RuntimeError("DistributedDataParallel needs lucid.distributed (a process group and the all-reduce "
                           "of gradients across processes), which lucid does not have yet; run the module "
                           "itself in one process, or wrap it in lucid.nn.DataParallel")
