"""replace_all_batch_norm_modules_ (torch/_functorch/batch_norm_replacement.py): batch norm
without running statistics, so that vmap over a model does not write per-example statistics
into shared buffers."""


def replace_all_batch_norm_modules_(root):
    """Set `running_mean`/`running_var` to None and `track_running_stats` to False on every
    batch-norm module under `root` (in place); returns `root`."""
    from ..nn.modules.batchnorm import _BatchNorm
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
