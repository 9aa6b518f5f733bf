"""InstanceNorm1d/2d/3d: every (sample, channel) normalized by its own statistics. The
parameters and buffers are BatchNorm's (_NormBase), but affine and track_running_stats default
to False, and an input without a batch dimension is accepted."""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from .batchnorm import _NormBase
from .. import functional as F


class _InstanceNorm(_NormBase):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype, bias=bias)

    def _get_no_batch_dim(self):
        """The input rank without the batch dimension (each subclass's)."""
        raise NotImplementedError

    def _check_input_dim(self, input):
        rank = self._get_no_batch_dim()
        if input.dim() not in (rank, rank + 1):
            raise ValueError(f"expected {rank}D or {rank + 1}D input (got {input.dim()}D "
                             "input)")

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                               self.bias, self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # Checkpoints from before versioning (PyTorch < 0.4) stored running statistics even
        # when the layer did not track them: report those keys and drop them.
        if local_metadata.get("version", None) is None and not self.track_running_stats:
            keys = [prefix + name for name in ("running_mean", "running_var")
                    if prefix + name in state_dict]
            if keys:
                klass = type(self).__name__
                names = " and ".join(f'"{k}"' for k in keys)
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {names} for {klass} with "
                    f"track_running_stats=False. If state_dict is a checkpoint saved before "
                    f"0.4.0, this may be expected because {klass} does not track running "
                    f"stats by default since 0.4.0. Please remove these keys from state_dict. "
                    f"If the running stats are actually needed, instead set "
                    f"track_running_stats=True in {klass} to enable them. See the "
                    f"documentation of {klass} for details.")
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. "
                          "You can silence this warning by not passing in num_features, which "
                          "is not used because affine=False", stacklevel=_user_stacklevel())
        if input.dim() == self._get_no_batch_dim():
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    def _get_no_batch_dim(self):
        return 2


class InstanceNorm2d(_InstanceNorm):
    def _get_no_batch_dim(self):
        return 3


class InstanceNorm3d(_InstanceNorm):
    def _get_no_batch_dim(self):
        return 4
