"""torch._C._nn: the bindings of the operators PyTorch declares in its `nn` Python module
(`python_module: nn` in native_functions.yaml: the pads, upsamplings, losses, activations, ...),
served from ember's operator table under the same names, and `_parse_to`, the argument parser
behind nn.Module.to(). It binds a call to one of Tensor.to's three signatures (device/dtype,
dtype, tensor) and answers (device, dtype, non_blocking, memory_format); a call no signature
takes is a TypeError, and `copy` -- which a module cannot honour -- a RuntimeError."""
from .._core import dtype as D
from .._core.device import device as _device
from .._core.memory_format import memory_format as _memory_format
from .._core.tensor import Tensor

_SIGNATURES = (("device", "dtype", "non_blocking", "copy"), ("dtype", "non_blocking", "copy"),
               ("tensor", "non_blocking", "copy"))
_EXPECTED = (" * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
             "bool copy = False, *, torch.memory_format memory_format = None)\n"
             " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
             "torch.memory_format memory_format = None)\n"
             " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
             "torch.memory_format memory_format = None)\n")


def _fits(kind, value):
    if value is None:
        return kind in ("device", "dtype", "memory_format")
    if kind == "device":
        return isinstance(value, (_device, str)) or type(value) is int
    if kind == "dtype":
        return isinstance(value, D.dtype) or (isinstance(value, type) and
                                              value in D.PYTHON_TYPE_DTYPES)
    if kind == "tensor":
        return isinstance(value, Tensor)
    if kind == "memory_format":
        return isinstance(value, _memory_format)
    return isinstance(value, bool)   # non_blocking, copy


def _bind(signature, args, kwargs):
    if len(args) > len(signature):
        return None
    bound = dict(zip(signature, args))
    for name, value in kwargs.items():
        if name in bound or (name not in signature and name != "memory_format"):
            return None
        bound[name] = value
    if signature[0] != "device" and bound.get(signature[0]) is None:
        return None   # the dtype / tensor signatures need their first argument
    return bound if all(_fits(k, v) for k, v in bound.items()) else None


def _type_name(value):
    if isinstance(value, Tensor):
        return "Tensor"
    if isinstance(value, (D.dtype, _device, _memory_format)):
        return "torch." + type(value).__name__
    return type(value).__name__


def _parse_to(*args, **kwargs):
    for signature in _SIGNATURES:
        bound = _bind(signature, args, kwargs)
        if bound is not None:
            break
    else:
        got = [_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
        raise TypeError(f"to() received an invalid combination of arguments - got "
                        f"({', '.join(got)}), but expected one of:\n{_EXPECTED}")
    if bound.get("copy", False):
        raise RuntimeError(".to() does not accept copy argument")
    device, dtype = bound.get("device"), bound.get("dtype")
    if "tensor" in bound:
        device, dtype = bound["tensor"].device, bound["tensor"].dtype
    if isinstance(dtype, type):
        dtype = D.PYTHON_TYPE_DTYPES[dtype]
    if device is not None and not isinstance(device, _device):
        device = _device(device) if isinstance(device, str) else _device("cuda", device)
    return device, dtype, bound.get("non_blocking", False), bound.get("memory_format")


def _upsample_nearest(name, input, output_size, out):
    """The nearest-neighbour upsampling ops as torch._C._nn binds them (F.interpolate's kernel;
    with `out=`, written into out as every out= op is). The scales PyTorch also takes matter
    only when they disagree with output_size, which F.interpolate never passes."""
    from ..nn.functional import interpolate
    from .._bindings.out import _copy_out
    result = interpolate(input, size=tuple(output_size), mode="nearest")
    if out is None:
        return result
    if out.dtype is not result.dtype:   # a structured kernel: out has the result's dtype
        if result.device.type == "meta":   # PyTorch's meta function words it differently
            raise RuntimeError(f"Expected out tensor to have dtype {result.dtype} but got "
                               f"{out.dtype} instead")
        raise RuntimeError(f"Expected out tensor to have dtype {D.c_type_name(result.dtype)}, "
                           f"but got {D.c_type_name(out.dtype)} instead")
    if out.device != result.device:
        raise RuntimeError(f"Attempting to copy from device {result.device.type} to device "
                           f"{out.device.type}, but cross-device copies are not allowed!")
    return _copy_out(out, result, name)


def upsample_nearest1d(input, output_size, scales=None, *, out=None):
    return _upsample_nearest("upsample_nearest1d", input, output_size, out)


def upsample_nearest2d(input, output_size, scales_h=None, scales_w=None, *, out=None):
    return _upsample_nearest("upsample_nearest2d", input, output_size, out)


def upsample_nearest3d(input, output_size, scales_d=None, scales_h=None, scales_w=None, *,
                       out=None):
    return _upsample_nearest("upsample_nearest3d", input, output_size, out)



def nll_loss2d(input, target, weight=None, reduction=0, ignore_index=-100, *, out=None):
    """aten::nll_loss2d: nll_loss over (N, C, H, W) scores and (N, H, W) targets, the spatial
    case F.nll_loss hands on (its Python binding, as PyTorch's, reduces nothing by default)."""
    from .._dispatch.ops import ops
    if target.dim() != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {target.dim()}")
    if input.dim() != 4:
        raise RuntimeError("only batches of spatial inputs supported (4D tensors), but got input "
                           f"of dimension: {input.dim()}")
    if (input.shape[0], *input.shape[2:]) != tuple(target.shape):
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                           f"{list(target.shape)}")
    args = (input, target, weight, reduction, ignore_index)
    if out is None:
        return ops.aten.nll_loss(*args)
    return call_with_out("nll_loss2d", ops.aten.nll_loss, args, {}, out)

# The operators PyTorch binds in torch._C._nn (its other operators are torch.* functions).
_NN_OPS = frozenset("""
    _conv_depthwise2d _pad_circular _pad_enum _test_warn_in_autograd _upsample_bicubic2d_aa
    _upsample_bilinear2d_aa
    _upsample_nearest_exact1d _upsample_nearest_exact2d _upsample_nearest_exact3d
    adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool2d adaptive_max_pool3d avg_pool2d
    avg_pool3d binary_cross_entropy col2im conv_depthwise3d cross_entropy_loss elu elu_
    fractional_max_pool2d fractional_max_pool3d gelu gelu_ glu hardsigmoid hardsigmoid_
    hardswish hardswish_ hardtanh hardtanh_ huber_loss im2col l1_loss leaky_relu leaky_relu_
    linear log_sigmoid max_pool2d_with_indices max_pool3d_with_indices max_unpool2d max_unpool3d
    mish mish_ mse_loss multi_margin_loss multilabel_margin_loss nll_loss nll_loss2d nll_loss_nd
    one_hot pad reflection_pad1d reflection_pad2d reflection_pad3d relu6 relu6_
    replication_pad1d replication_pad2d replication_pad3d rrelu_with_noise rrelu_with_noise_
    scaled_dot_product_attention silu silu_ slow_conv3d slow_conv_dilated2d slow_conv_dilated3d
    slow_conv_transpose2d slow_conv_transpose3d smooth_l1_loss soft_margin_loss softplus
    softshrink thnn_conv2d upsample_bicubic2d upsample_bilinear2d upsample_linear1d
    upsample_nearest1d upsample_nearest2d upsample_nearest3d upsample_trilinear3d
""".split())


# ... and those of them PyTorch declares with an `.out` overload, whose binding takes `out=`
# (the OpInfos of F.gelu, F.linear, F.avg_pool2d, ... call these bindings with it).
_NN_OUT_OPS = frozenset("""
    _conv_depthwise2d _upsample_bicubic2d_aa _upsample_bilinear2d_aa _upsample_nearest_exact1d
    _upsample_nearest_exact2d _upsample_nearest_exact3d adaptive_avg_pool2d adaptive_avg_pool3d
    adaptive_max_pool2d adaptive_max_pool3d avg_pool2d avg_pool3d binary_cross_entropy col2im
    conv_depthwise3d elu gelu glu hardsigmoid hardswish hardtanh huber_loss im2col leaky_relu
    linear log_sigmoid max_pool2d_with_indices max_pool3d_with_indices max_unpool2d max_unpool3d
    mish mse_loss multi_margin_loss multilabel_margin_loss nll_loss nll_loss2d reflection_pad1d
    reflection_pad2d reflection_pad3d replication_pad1d replication_pad2d replication_pad3d
    rrelu_with_noise silu slow_conv3d slow_conv_dilated2d slow_conv_dilated3d
    slow_conv_transpose2d slow_conv_transpose3d smooth_l1_loss soft_margin_loss softplus
    softshrink thnn_conv2d upsample_bicubic2d upsample_bilinear2d upsample_linear1d
    upsample_nearest1d upsample_nearest2d upsample_nearest3d upsample_trilinear3d
""".split())


def call_with_out(name, fn, args, kwargs, out):
    """fn(*args, **kwargs) run as PyTorch's `.out` overload of the nn op `name`: the result
    written into `out` (a tensor, or one per output), checked as every out= op is
    (ember/_bindings/out.py)."""
    from .._bindings.out import _OutVariant, _finish
    with _OutVariant():
        result = fn(*args, **kwargs)
    inputs = tuple(a for a in (*args, *kwargs.values()) if isinstance(a, Tensor))
    if isinstance(result, Tensor):
        return _finish(result, False, out, name, inputs)
    return tuple(_finish(r, False, o, name, inputs) for r, o in zip(result, out))


def _out_binding(name, op):
    def binding(*args, out=None, **kwargs):
        if out is None:
            return op(*args, **kwargs)
        return call_with_out(name, op, args, kwargs, out)
    binding.__name__ = binding.__qualname__ = name
    return binding


def __getattr__(name):
    if name in _NN_OPS:
        from .._dispatch.ops import ops
        op = getattr(ops.aten, name, None)
        if op is not None:
            if name in _NN_OUT_OPS:
                op = globals()[name] = _out_binding(name, op)   # built once, on first use
            return op
    raise AttributeError(f"module 'torch._C._nn' has no attribute '{name}'")
