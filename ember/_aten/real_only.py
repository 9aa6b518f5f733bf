"""The ops PyTorch computes for real dtypes only, and the error each raises for a complex input.

A PyTorch CPU kernel is compiled for the dtypes its AT_DISPATCH macro lists; given another it
raises `NotImplementedError: "<kernel>" not implemented for 'ComplexFloat'`, and some ops check
first with a message of their own. NumPy computes most of these for complex numbers too (it
orders complex numbers lexicographically, has erf and floor_divide of complex arguments, ...),
so ember's kernels would return a value where PyTorch refuses. `refuse_complex()` wraps the CPU
kernel of each overload listed here, and of its in-place form, with the check (before the in-place
kernels that no family writes are derived from the out-of-place ones).
"""
from .._core.tensor import Tensor
from .._dispatch.dispatcher import impl, packets
from .elementwise import not_implemented

# op or op.overload -> the AT_DISPATCH kernel name PyTorch names, or (exception class, message),
# or a function of the arguments giving one of these (None: computed)
_CLAMP = (NotImplementedError, "clamp is not supported for complex types")
REAL_ONLY = {
    "amax": "max_values_cpu", "amin": "min_values_cpu", "aminmax": "aminmax_cpu",
    "argmax": (RuntimeError, "argmax(): does not support complex input"),
    "argmin": (RuntimeError, "argmin(): does not support complex input"),
    "max.default": "max_all", "min.default": "min_all",
    "max.dim": (RuntimeError, "max(): does not support complex input"),
    "min.dim": (RuntimeError, "min(): does not support complex input"),
    "sort": (RuntimeError, " Sort does not support complex dtypes on CPU"),
    # (topk and kthvalue refuse complex in their kernels, after their shape checks)
    "cummax": "cummax_cpu", "cummin": "cummin_cpu",
    "median": "median_cpu", "nanmedian": "median_cpu", "mode": "mode_cpu",
    "nansum": (RuntimeError, "nansum on CPU does not support complex inputs"),
    "_unique2": "unique", "bincount": "bincount_cpu",
    "searchsorted": "searchsorted_out_cpu", "bucketize": "searchsorted_out_cpu",
    "gt": "gt_cpu", "ge": "ge_cpu", "lt": "lt_cpu", "le": "le_cpu",
    "maximum": (RuntimeError, "maximum not implemented for complex tensors."),
    "minimum": (RuntimeError, "minimum not implemented for complex tensors."),
    "fmax": (RuntimeError, "fmax not implemented for complex tensors."),
    "fmin": (RuntimeError, "fmin not implemented for complex tensors."),
    "clamp": _CLAMP, "relu": _CLAMP, "hardtanh": _CLAMP,
    "sign": (NotImplementedError, "Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead."),
    "signbit": (NotImplementedError, "signbit is not implemented for complex tensors."),
    "isposinf": (RuntimeError, "isposinf does not support complex inputs."),
    "isneginf": (RuntimeError, "isneginf does not support complex inputs."),
    "heaviside": (RuntimeError, "heaviside is not yet implemented for complex tensors."),
    "abs_": (RuntimeError, "In-place abs is not supported for complex tensors."),
    "deg2rad": (RuntimeError, "deg2rad is not supported for complex tensors."),
    "rad2deg": (RuntimeError, "rad2deg is not supported for complex tensors."),
    "ceil": (NotImplementedError, "ceil is not supported for complex inputs"),
    "floor": (NotImplementedError, "floor is not supported for complex inputs"),
    "trunc": (NotImplementedError, "trunc is not supported for complex inputs"),
    "round.default": "round_vml_cpu", "frac": "frac_cpu",
    # decimals=0 runs round's own kernel
    "round.decimals": lambda args: "round_vml_cpu" if args[1] == 0 else "round_cpu",
    "floor_divide": "div_floor_cpu", "remainder": "remainder_cpu", "fmod": "fmod_cpu",
    "atan2": "atan2_cpu", "copysign": "copysign_cpu", "hypot": "hypot_cpu",
    "logaddexp2": "logaddexp2_cpu", "xlogy": "xlogy_cpu", "igamma": "igamma_cpu",
    "igammac": "igammac_cpu", "erf": "erf_vml_cpu", "erfc": "erfc_vml_cpu",
    "erfinv": "erfinv_vml_cpu", "i0": "i0_vml_cpu", "lgamma": "lgamma_vml_cpu",
    "digamma": "digamma", "logit": "logit_cpu", "hardshrink": "hardshrink_cpu",
    "softplus": "softplus_cpu", "gelu": "GeluKernelImpl", "leaky_relu": "leaky_relu_cpu",
    "elu": "elu_cpu", "threshold": "threshold_cpu", "log_sigmoid": "log_sigmoid_cpu",
    "bernoulli_.float": "bernoulli_scalar_cpu_", "geometric_": "geometric_cpu",
    "bernoulli.default": "bernoulli_tensor_cpu_self_", "random_.default": "random_kernel_cpu",
    # unique_consecutive runs unique_dim's kernel for a dim (but dim 0 of a 1-d tensor)
    "unique_consecutive": lambda args: "unique_dim" if len(args) > 3 and args[3] is not None
    and not (args[3] == 0 and args[0].dim() == 1) else "unique",
    "unique_dim": "unique_dim",
    "hardsigmoid": "hardsigmoid_cpu", "hardswish": "hardswish_cpu", "mish": "mish_cpu",
    "_prelu_kernel": "prelu_cpu", "special_i1": "i1_cpu",
    # the dim overloads run another kernel (after the entries for all overloads: outermost)
    "median.dim": "median_out", "nanmedian.dim": "median_out",
}


def _by_mode(at, refusals):
    """A refusal that depends on a string argument at position `at` (a rounding or reduce
    mode): `refusals` maps the modes PyTorch refuses for complex input to their refusal."""
    return lambda args: refusals.get(args[at]) if len(args) > at else None


REAL_ONLY.update({
    "div.Tensor_mode": _by_mode(2, {"floor": "div_floor_cpu", "trunc": "div_trunc_cpu"}),
    "scatter_reduce.two": _by_mode(4, {m: f"scatter_gather_tensor_cpu_reduce_a{m[-3:]}"
                                       for m in ("amax", "amin", "max", "min")}),
    "index_reduce": _by_mode(4, {"amax": "maximum_cpu", "amin": "minimum_cpu"}),
})


def _refusing(kernel, refusal):
    def run(*args):
        for a in args:
            if type(a) is Tensor and a.dtype.is_complex:
                why = refusal(args) if callable(refusal) else refusal
                if why is None:
                    break
                if isinstance(why, str):
                    raise not_implemented(why, a.dtype)
                raise why[0](why[1])
        return kernel(*args)
    run.__name__ = run.__qualname__ = getattr(kernel, "__name__", "kernel")
    return run


def refuse_complex():
    """Wrap the CPU kernels of the REAL_ONLY ops with their complex-input errors."""
    aten = packets("aten")
    for key, refusal in REAL_ONLY.items():
        name, _, overload = key.partition(".")
        for packet in (aten[name], aten.get(name + "_")):   # the op and its in-place form
            if packet is None:
                continue
            for o in [overload] if overload else packet.overloads():
                op = getattr(packet, o, None)
                kernel = op._table.get("CPU") if op is not None else None
                if kernel is not None:
                    impl(op, "CPU")(_refusing(kernel, refusal))
