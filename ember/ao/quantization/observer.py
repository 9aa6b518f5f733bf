"""torch.ao.quantization.observer: modules that watch the float tensors flowing through them and
derive quantization parameters (scale, zero_point) from what they saw.

An observer is an identity in forward: it records statistics of its input (running min/max,
per channel or for the whole tensor, or a histogram) and returns the input unchanged.
`calculate_qparams()` turns the statistics into the affine map of an integer range
[quant_min, quant_max]: x_q = round(x / scale) + zero_point. Nothing here needs a quantized
tensor -- ember has none -- so quantization-aware training modules (ao.nn.qat) can use them.

`Observer.with_args(...)` is a factory with some constructor arguments bound (a QConfig holds
factories, not instances: each module it configures gets observers of its own).
"""
import warnings
from abc import ABCMeta, abstractmethod
from functools import partial

import numpy as np

from ..._core import dtype as D
from ..._core import qscheme as Q
from ..._core.type_info import finfo, iinfo
from ...nn import factory_kwargs as _factory_kwargs
from ...nn.modules.module import Module
from .utils import (calculate_qmin_qmax, check_min_max_valid, is_per_channel, is_per_tensor,
                    validate_qmin_qmax)

__all__ = ["ObserverBase", "UniformQuantizationObserverBase", "MinMaxObserver",
           "PerChannelMinMaxObserver", "HistogramObserver", "default_observer",
           "default_weight_observer", "default_histogram_observer",
           "default_per_channel_weight_observer"]


def _ember():
    import ember
    return ember


class _PartialWrapper:
    """A constructor with bound keywords (`functools.partial`), plus keywords whose values are
    computed by calling a function each time an instance is built (`with_callable_args`)."""

    def __init__(self, p):
        self.p = p
        self.callable_args = {}

    def __call__(self, *args, **keywords):
        for name, make in self.callable_args.items():
            if name not in keywords:
                keywords = {**keywords, name: make()}
        return self.p(*args, **keywords)

    def __repr__(self):
        return self.p.__repr__() + self.callable_args.__repr__()

    def with_args(self, **kwargs):
        return _with_args(self, **kwargs)

    def with_callable_args(self, **kwargs):
        result = _PartialWrapper(p=self.p)
        result.callable_args = {**self.callable_args, **kwargs}
        return result


def _with_args(cls_or_self, **kwargs):
    return _PartialWrapper(partial(cls_or_self, **kwargs))


def _with_callable_args(cls_or_self, **kwargs):
    return _PartialWrapper(partial(cls_or_self)).with_callable_args(**kwargs)


ABC = ABCMeta("ABC", (object,), {})


class ObserverBase(ABC, Module):
    """An observer: `forward` records statistics of its input and returns it; `calculate_qparams`
    gives the quantization parameters those statistics call for. `dtype` is the quantized dtype
    the parameters are for."""

    def __init__(self, dtype, is_dynamic=False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    @abstractmethod
    def forward(self, x):
        pass

    @abstractmethod
    def calculate_qparams(self, **kwargs):
        pass

    with_args = classmethod(_with_args)
    with_callable_args = classmethod(_with_callable_args)


_ALLOWED_DTYPES = (D.qint8, D.quint8, D.quint4x2, D.qint32, D.int8, D.uint8, D.int16, D.int32,
                   D.float8_e5m2, D.float8_e4m3fn, D.uint16)


class UniformQuantizationObserverBase(ObserverBase):
    """Observers whose parameters describe a uniform (affine or symmetric) integer grid, per
    tensor or per channel. `eps` (a buffer) is the smallest scale they will return.

    State-dict versions: 2 added the `eps` buffer (older dicts get the float32 eps); 3 made the
    uninitialized min/max of a HistogramObserver 0-dim and renamed per-channel observers'
    `min_vals`/`max_vals` to `min_val`/`max_val`."""
    _version = 3

    def __init__(self, dtype=D.quint8, qscheme=Q.per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=finfo(D.float32).eps, is_dynamic=False, **kwargs):
        factory_kwargs = _factory_kwargs(factory_kwargs)
        super().__init__(dtype=dtype, is_dynamic=is_dynamic, **kwargs)
        self.qscheme = qscheme
        if reduce_range:
            warnings.warn("Please use quant_min and quant_max to specify the range for "
                          "observers.                     reduce_range will be deprecated in a "
                          "future release of PyTorch.", stacklevel=2)
        self.reduce_range = reduce_range
        self.register_buffer("eps", _ember().tensor([eps], **factory_kwargs))
        if not (is_per_tensor(qscheme) or is_per_channel(qscheme)):
            raise AssertionError("Default Observer only works for per_tensor_affine, "
                                 "per_tensor_symmetric, per_channel_affine, "
                                 "per_channel_symmetric and per_channel_float_qparams "
                                 "quantization scheme")
        if self.dtype not in _ALLOWED_DTYPES:
            raise AssertionError(f"Default Observer only works for {_ALLOWED_DTYPES} data type")
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            validate_qmin_qmax(quant_min, quant_max)
        self.quant_min, self.quant_max = calculate_qmin_qmax(
            quant_min, quant_max, self.has_customized_qrange, self.dtype, self.reduce_range)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if version is None or version == 1:   # before eps was a buffer
            state_dict[prefix + "eps"] = _ember().tensor([finfo(D.float32).eps])
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def _register_min_max(self, factory_kwargs, per_channel=False):
        """The running-range buffers `min_val`, `max_val`: empty per channel (the first tensor
        gives their length), else inf and -inf (the first tensor's min and max replace them)."""
        torch = _ember()
        factory_kwargs = _factory_kwargs(factory_kwargs)
        for name, init in (("min_val", float("inf")), ("max_val", float("-inf"))):
            self.register_buffer(name, torch.tensor([] if per_channel else init,
                                                    **factory_kwargs))

    def _validate_qmin_qmax(self, quant_min, quant_max):
        validate_qmin_qmax(quant_min, quant_max)

    def _calculate_qparams(self, min_val, max_val):
        """scale and zero_point (one each, or one per channel) mapping [min_val, max_val] --
        widened to contain 0, so that 0.0 is exactly representable -- onto the integer range.

        Symmetric schemes center the grid: scale = max|x| / ((qmax - qmin) / 2), and the zero
        point is 0 for signed dtypes, the range's midpoint for unsigned ones (128 for quint8).
        Affine schemes stretch the grid over [min, max] and pick the zero point that lands 0.0
        on an integer. `per_channel_affine_float_qparams` keeps a float zero point, -min/scale.
        No scale falls below `eps`."""
        torch = _ember()
        if not check_min_max_valid(min_val, max_val):
            return (torch.tensor([1.0], device=min_val.device.type),
                    torch.tensor([0], device=min_val.device.type))
        quant_min, quant_max = self.quant_min, self.quant_max
        min_val_neg = torch.min(min_val, torch.zeros_like(min_val))
        max_val_pos = torch.max(max_val, torch.zeros_like(max_val))
        device = min_val_neg.device
        scale = torch.ones(min_val_neg.size(), dtype=D.float32, device=device)
        zero_point = torch.zeros(min_val_neg.size(), dtype=D.int64, device=device)
        if self.qscheme in (Q.per_tensor_symmetric, Q.per_channel_symmetric):
            max_val_pos = torch.max(-min_val_neg, max_val_pos)
            scale = max_val_pos / (float(quant_max - quant_min) / 2)
            scale = torch.max(scale, self.eps)
            if self.dtype in (D.quint8, D.uint8):
                mid = (quant_min + quant_max) // 2 if self.has_customized_qrange else 128
                zero_point = zero_point.new_full(zero_point.size(), mid)
            elif self.dtype is D.uint16:
                zero_point = zero_point.new_full(zero_point.size(), 2 ** 15)
        elif self.qscheme is Q.per_channel_affine_float_qparams:
            scale = (max_val - min_val) / float(quant_max - quant_min)
            scale = torch.where(scale > self.eps, scale, torch.ones_like(scale))
            zero_point = -1 * min_val / scale
        else:
            scale = (max_val_pos - min_val_neg) / float(quant_max - quant_min)
            scale = torch.max(scale, self.eps)
            zero_point = quant_min - torch.round(min_val_neg / scale).to(D.int32)
            zero_point = torch.clamp(zero_point, quant_min, quant_max)
        # per-tensor results are 1-element tensors, as FakeQuantize's defaults are
        if len(scale.shape) == 0:
            scale = torch.tensor([float(scale)], dtype=scale.dtype, device=device)
        if len(zero_point.shape) == 0:
            zero_point = torch.tensor([int(zero_point)], dtype=zero_point.dtype, device=device)
            if self.qscheme is Q.per_channel_affine_float_qparams:
                zero_point = torch.tensor([float(zero_point)], dtype=zero_point.dtype,
                                          device=device)
        return scale, zero_point

    def reset_min_max_vals(self):
        raise NotImplementedError("Cannot reset min/max values in the given observer.")


_ObserverBase = UniformQuantizationObserverBase   # its name before PyTorch 1.13


class MinMaxObserver(UniformQuantizationObserverBase):
    """Per-tensor quantization parameters from the running minimum and maximum of every tensor
    seen (buffers `min_val`, `max_val`; inf and -inf before the first)."""

    def __init__(self, dtype=D.quint8, qscheme=Q.per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=finfo(D.float32).eps, is_dynamic=False, **kwargs):
        if not is_per_tensor(qscheme):
            raise NotImplementedError("MinMaxObserver's qscheme only support "
                                      "torch.per_tensor_symmetric                     and "
                                      "torch.per_tensor_affine.")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self._register_min_max(factory_kwargs)
        if qscheme is Q.per_tensor_symmetric and reduce_range and dtype is D.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric                      "
                                      "                  quantization for quint8")

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        torch = _ember()
        x = x_orig.detach().to(self.min_val.dtype)
        min_val_cur, max_val_cur = torch.aminmax(x)
        self.min_val.copy_(torch.min(min_val_cur, self.min_val))
        self.max_val.copy_(torch.max(max_val_cur, self.max_val))
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def reset_min_max_vals(self):
        torch = _ember()
        self.min_val.copy_(torch.tensor(float("inf")))
        self.max_val.copy_(torch.tensor(float("-inf")))


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """Quantization parameters per channel (slices along `ch_axis`) from each channel's running
    min and max (the buffers are empty until the first tensor sets their length)."""

    def __init__(self, ch_axis=0, dtype=D.quint8, qscheme=Q.per_channel_affine,
                 reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=finfo(D.float32).eps, is_dynamic=False, **kwargs):
        if not is_per_channel(qscheme):
            raise NotImplementedError("PerChannelMinMaxObserver's qscheme only support          "
                                      "           torch.per_channel_symmetric, "
                                      "torch.per_channel_affine and "
                                      "torch.per_channel_affine_float_qparams.")
        if is_dynamic:
            raise NotImplementedError("PerChannelMinMaxObserver doesn't support dynamic "
                                      "quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.ch_axis = ch_axis
        self._register_min_max(factory_kwargs, per_channel=True)
        if qscheme is Q.per_channel_symmetric and reduce_range and dtype is D.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for "
                                      "quint8")

    def forward(self, x_orig):
        return self._forward(x_orig)

    def _forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        torch = _ember()
        x = x_orig.detach()
        order = list(range(x.dim()))
        order[self.ch_axis], order[0] = 0, self.ch_axis
        # one row per channel
        y = torch.flatten(x.permute(order).to(self.min_val.dtype), start_dim=1)
        min_val, max_val = torch.aminmax(y, dim=1)
        if self.min_val.numel() and self.max_val.numel():
            min_val = torch.min(min_val, self.min_val)
            max_val = torch.max(max_val, self.max_val)
        self.min_val.resize_(min_val.shape)
        self.max_val.resize_(max_val.shape)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # the buffers take the length of the loaded ones (they may still be empty here)
        version = local_metadata.get("version")
        old = version is not None and version < 3
        for name, buffer in (("min_vals" if old else "min_val", self.min_val),
                             ("max_vals" if old else "max_val", self.max_val)):
            key = prefix + name
            if key in state_dict:
                buffer.resize_(state_dict[key].shape)
            elif strict:
                missing_keys.append(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def reset_min_max_vals(self):
        torch = _ember()
        self.min_val = torch.rand(0)
        self.max_val = torch.rand(0)


class HistogramObserver(UniformQuantizationObserverBase):
    """Per-tensor parameters chosen from a histogram of everything seen: `bins` equal bins over
    the running [min_val, max_val]. When a new tensor widens the range, the old histogram is
    re-binned into the new range (each old bin split into `upsample_rate` slivers that land
    where their midpoints fall).

    calculate_qparams does not simply use [min, max]: it searches for the sub-range whose
    quantization into 2**bits levels loses least (an L2 estimate), shrinking the range from
    whichever end sheds fewer samples, step by step, and stopping when the error grows. Outliers
    therefore do not stretch the grid (PyTorch's port of caffe2's norm minimization)."""

    def __init__(self, bins=2048, dtype=D.quint8, qscheme=Q.per_tensor_affine,
                 reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=finfo(D.float32).eps, is_dynamic=False, **kwargs):
        if not is_per_tensor(qscheme):
            raise NotImplementedError("HistogramObserver's qscheme only support "
                                      "torch.per_tensor_symmetric                     and "
                                      "torch.per_tensor_affine.")
        if is_dynamic:
            raise NotImplementedError("HistogramObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.bins = bins
        self.register_buffer("histogram",
                             _ember().zeros(self.bins, **_factory_kwargs(factory_kwargs)))
        self._register_min_max(factory_kwargs)
        self.dst_nbins = 2 ** iinfo(self.dtype).bits
        self.upsample_rate = 16   # slivers per bin when re-binning

    def _get_norm(self, delta_begin, delta_end, density):
        """L2 error of values spread with `density` over [delta_begin, delta_end] (distances
        to the center of the level they round to): density * (end^3 - begin^3) / 3."""
        norm = (delta_end * delta_end * delta_end - delta_begin * delta_begin * delta_begin) / 3
        return density * norm

    def _compute_quantization_error(self, next_start_bin, next_end_bin):
        """The L2 error of quantizing the histogram with bins next_start_bin..next_end_bin
        spanning the dst_nbins levels: each source bin's mass against the level centers its
        span overlaps (partial first and last levels, whole levels in between)."""
        torch = _ember()
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_bin_width = bin_width * (next_end_bin - next_start_bin + 1) / self.dst_nbins
        if dst_bin_width == 0.0:
            return 0.0
        src_bin = torch.arange(self.bins, device=self.histogram.device)
        src_bin_begin = (src_bin - next_start_bin) * bin_width
        src_bin_end = src_bin_begin + bin_width
        last = self.dst_nbins - 1
        dst_bin_of_begin = torch.clamp(
            torch.div(src_bin_begin, dst_bin_width, rounding_mode="floor"), 0, last)
        dst_bin_of_begin_center = (dst_bin_of_begin + 0.5) * dst_bin_width
        dst_bin_of_end = torch.clamp(
            torch.div(src_bin_end, dst_bin_width, rounding_mode="floor"), 0, last)
        density = self.histogram / bin_width
        norm = torch.zeros(self.bins, device=self.histogram.device)
        norm += self._get_norm(src_bin_begin - dst_bin_of_begin_center,
                               torch.ones(self.bins, device=self.histogram.device)
                               * (dst_bin_width / 2), density)
        norm += (dst_bin_of_end - dst_bin_of_begin - 1) * self._get_norm(
            torch.tensor(-dst_bin_width / 2), torch.tensor(dst_bin_width / 2), density)
        dst_bin_of_end_center = dst_bin_of_end * dst_bin_width + dst_bin_width / 2
        norm += self._get_norm(torch.tensor(-dst_bin_width / 2),
                               src_bin_end - dst_bin_of_end_center, density)
        return norm.sum().item()

    def _non_linear_param_search(self):
        """The [min, max] that (approximately) minimizes the L2 quantization error: move the
        lower quantile bound alpha up or the upper one beta down by 1e-5 at a time, taking the
        bin on whichever side gives up more bins; stop when the error of the narrowed range
        exceeds the best so far."""
        if self.histogram.size()[0] != self.bins:
            raise AssertionError("bins mismatch")
        bin_width = (self.max_val - self.min_val) / self.bins
        total = self.histogram.sum().item()
        # the cumulative counts as float32, compared with float32 thresholds as PyTorch's
        # tensor-vs-scalar comparisons do
        csum = self.histogram.cumsum(0).detach().numpy()
        stepsize = 1e-5
        alpha, beta = 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha = alpha + stepsize
            next_beta = beta - stepsize
            lo_thresh = np.float32(next_alpha * total)
            hi_thresh = np.float32(next_beta * total)
            left, right = start_bin, end_bin
            while left < end_bin and csum[left] < lo_thresh:
                left += 1
            while right > start_bin and csum[right] > hi_thresh:
                right -= 1
            next_start_bin, next_end_bin = start_bin, end_bin
            if (left - start_bin) > (end_bin - right):
                next_start_bin = left
                alpha = next_alpha
            else:
                next_end_bin = right
                beta = next_beta
            if next_start_bin == start_bin and next_end_bin == end_bin:
                continue
            norm = self._compute_quantization_error(next_start_bin, next_end_bin)
            if norm > norm_min:
                break
            norm_min = norm
            start_bin, end_bin = next_start_bin, next_end_bin
        new_min = self.min_val + bin_width * start_bin
        new_max = self.min_val + bin_width * (end_bin + 1)
        return new_min, new_max

    def _upscale_histogram(self, histogram, orig_min, orig_max, update_min, update_max):
        """`histogram` (over [orig_min, orig_max]) re-binned over [update_min, update_max]:
        each bin split into upsample_rate equal slivers, each sliver counted in the new bin
        its midpoint falls in."""
        torch = _ember()
        histogram = histogram.repeat_interleave(self.upsample_rate) / self.upsample_rate
        n = self.bins * self.upsample_rate
        bin_size = (orig_max - orig_min) / n
        mid_points = (torch.linspace(orig_min, orig_max, n + 1, device=orig_min.device)[:-1]
                      .to(histogram.device) + 0.5 * bin_size)
        boundaries = torch.linspace(update_min, update_max, self.bins + 1,
                                    device=update_min.device).to(histogram.device)
        bucket = torch.bucketize(mid_points, boundaries, right=True) - 1
        # rounding can put a midpoint just outside the new range
        bucket[bucket >= self.bins] = self.bins - 1
        bucket[bucket < 0] = 0
        return torch.bincount(bucket, weights=histogram, minlength=self.bins)

    def _combine_histograms(self, orig_hist, orig_min, orig_max, update_hist, update_min,
                            update_max):
        torch = _ember()
        if update_min == orig_min and update_max == orig_max:
            return orig_hist + update_hist
        if orig_min == orig_max:   # all the old mass is at one value
            bin_value = torch.sum(orig_hist)
            transformed = torch.histc(orig_min, bins=self.bins, min=update_min,
                                      max=update_max) * bin_value
            return transformed + update_hist
        if update_min > orig_min:
            raise AssertionError("update_min must be <= orig_min")
        if update_max < orig_max:
            raise AssertionError("update_max must be >= orig_max")
        return update_hist + self._upscale_histogram(orig_hist, orig_min, orig_max,
                                                     update_min, update_max)

    def reset_histogram(self, x, min_val, max_val):
        torch = _ember()
        self.min_val.resize_(min_val.shape)
        self.min_val.copy_(min_val)
        self.max_val.resize_(max_val.shape)
        self.max_val.copy_(max_val)
        if min_val.numel() != 1 or max_val.numel() != 1:
            raise AssertionError("histogram min/max values must be scalar.")
        new_histogram = torch.histc(x, self.bins, min=min_val, max=max_val)
        self.histogram.detach_().resize_(new_histogram.shape)
        self.histogram.copy_(new_histogram)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        torch = _ember()
        x = x_orig.detach()
        x_min, x_max = torch.aminmax(x)
        if x_min == -float("inf") or x_max == float("inf"):
            # infinities would make the range infinite; they get clamped when quantized anyway
            warnings.warn("torch.inf detected in input tensor, ignoring input", stacklevel=2)
            x = x[x.abs() != float("inf")]
            if x.numel() == 0:
                return x_orig
            x_min, x_max = torch.aminmax(x)
        current_min, current_max = self.min_val, self.max_val
        if self.min_val == float("inf") or self.max_val == float("-inf"):
            self.reset_histogram(x, x_min, x_max)
            return x_orig
        new_min = torch.min(current_min, x_min).detach()
        new_max = torch.max(current_max, x_max).detach()
        update_histogram = torch.histc(x, self.bins, min=new_min, max=new_max) \
            .to(self.histogram.device)
        if new_min == current_min and new_max == current_max:
            combined = self.histogram + update_histogram
        else:
            combined = self._combine_histograms(self.histogram, current_min, current_max,
                                                update_histogram, new_min, new_max)
        self.histogram.detach_().resize_(combined.shape)
        self.histogram.copy_(combined)
        if not (new_min == current_min and new_max == current_max):
            self.min_val.detach_().resize_(new_min.shape)
            self.min_val.copy_(new_min)
            self.max_val.detach_().resize_(new_max.shape)
            self.max_val.copy_(new_max)
        return x_orig

    def calculate_qparams(self):
        torch = _ember()
        if self.min_val == float("inf") and self.max_val == float("-inf"):
            warnings.warn("must run observer before calling calculate_qparams.                "
                          "                    Returning default scale and zero point ",
                          stacklevel=2)
            return (torch.tensor([1.0], device=self.min_val.device.type),
                    torch.tensor([0], device=self.min_val.device.type))
        if self.bins != len(self.histogram):
            raise AssertionError("The number of bins in histogram should be equal to the number "
                                 "of bins supplied while making this observer")
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(new_min, new_max)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "min_val"] = self.min_val
        destination[prefix + "max_val"] = self.max_val

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        torch = _ember()
        version = local_metadata.get("version", None)
        if version is None or version < 3:   # uninitialized min/max were empty, not 0-dim
            for name, fill in (("min_val", float("inf")), ("max_val", float("-inf"))):
                key = prefix + name
                if key in state_dict and tuple(state_dict[key].shape) == (0,):
                    state_dict[key] = torch.tensor(fill)
        for name in ("min_val", "max_val"):
            key = prefix + name
            if key in state_dict:
                setattr(self, name, state_dict[key])
            elif strict:
                missing_keys.append(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_weight_observer = MinMaxObserver.with_args(dtype=D.qint8,
                                                   qscheme=Q.per_tensor_symmetric)
default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=D.qint8, qscheme=Q.per_channel_symmetric)
