"""PyTorch's deprecated Python overloads that put the scalars first (tools/autograd's
deprecated.yaml): `add(input, alpha, other)`, `addcmul(input, value, tensor1, tensor2)`,
`addmm(beta, input, alpha, mat1, mat2)` and `addmm(beta, input, mat1, mat2)`, and their
method and in-place forms. PyTorch 2.13 still binds them, with a one-time UserWarning naming the
overload. A generated binding of these ops takes the extra positional arguments as
`*_deprecated` (codegen.DEPRECATED) and hands such a call here, which reorders the arguments
into the modern call.
"""
import numbers
import warnings

from .._core.tensor import Tensor
from .._core._warnings import user_stacklevel as _user_stacklevel
from .._core.flags import is_warn_always_enabled

# op -> (the scalar that follows input: its name, or None when the scalars lead; tensor names)
_FORMS = {
    "add": ("alpha", ("other",)), "sub": ("alpha", ("other",)),
    "addcmul": ("value", ("tensor1", "tensor2")), "addcdiv": ("value", ("tensor1", "tensor2")),
    "addmm": (None, ("mat1", "mat2")), "addmv": (None, ("mat", "vec")),
    "addr": (None, ("vec1", "vec2")), "baddbmm": (None, ("batch1", "batch2")),
    "addbmm": (None, ("batch1", "batch2")), "sspaddmm": (None, ("mat1", "mat2")),
}
_warned = []


def _is_number(x):
    """What PyTorch's parser takes for a Scalar: a number, or a 0-dim tensor not requiring
    grad."""
    if isinstance(x, Tensor):
        return x.dim() == 0 and not x.requires_grad
    return isinstance(x, numbers.Number)


def _signatures(name, method, scalars, has_out):
    """(deprecated, modern) signatures as PyTorch's warning prints them."""
    base = name.rstrip("_")
    follows, tensors = _FORMS[base]
    ts = [f"Tensor {t}" for t in tensors]
    inp = [] if method else ["Tensor input"]
    out = ", *, Tensor out = None" if has_out else ""
    if follows:
        old = inp + [f"Number {follows}"] + ts
        new = ", ".join(inp + ts) + f", *, Number {follows} = 1"
    else:
        lead = ["Number beta"] + inp if not method else ["Number beta"]
        old = lead + (["Number alpha"] if "alpha" in scalars else []) + ts
        new = ", ".join(inp + ts) + ", *, Number beta = 1, Number alpha = 1"
    modern = f"{name}({new}{', Tensor out = None' if has_out else ''})"
    return f"{name}({', '.join(old)}{out})", modern


def call(public, name, method, args, out, keywords):
    """`public(*args)` in a deprecated form of op `name` (args: the receiver first for a method;
    `keywords`: the values of the modern form's keyword-only scalars, all 1 by default), run as
    the modern call; TypeError when the arguments fit no form."""
    follows, tensors = _FORMS[name.rstrip("_")]
    n = len(tensors)
    scalars = {}
    given_keywords = any(not (type(k) is int and k == 1) for k in keywords)
    if follows:  # (input, scalar, *tensors); a number may stand for a tensor here
        if len(args) == n + 2 and _is_number(args[1]) and not given_keywords:
            scalars = {follows: args[1]}
            head, rest = args[0], args[2:]
            if all(isinstance(a, Tensor) or _is_number(a) for a in rest):
                return _run(public, name, method, head, rest, scalars, out)
        positional = n + (0 if method else 1)
        raise TypeError(f"{name}() takes {positional} positional argument"
                        f"{'s' if positional > 1 else ''} but {len(args) - method} were given")
    else:  # method (self, beta[, alpha], *tensors); function (beta, input[, alpha], *tensors)
        lead = 1 if method else 0
        if len(args) in (n + 2, n + 3) and _is_number(args[lead]):
            head = args[0] if method else args[1]
            scalars = {"beta": args[lead]}
            if len(args) == n + 3:
                scalars["alpha"] = args[2]
            rest = args[len(args) - n:]
            if not all(isinstance(a, Tensor) for a in rest) or (
                    "alpha" in scalars and not _is_number(scalars["alpha"])):
                scalars = {}
    if not scalars or given_keywords or not all(isinstance(a, Tensor) for a in rest):
        given = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({given}), but expected {_signatures(name, method, (), False)[1]}")
    return _run(public, name, method, head, rest, scalars, out)


def _run(public, name, method, head, rest, scalars, out):
    if not _warned or is_warn_always_enabled():   # PyTorch's TORCH_WARN_ONCE
        _warned.append(True)
        old, new = _signatures(name, method, scalars, not method and out is not _NO_OUT)
        warnings.warn(f"This overload of {name} is deprecated:\n\t{old}\nConsider using one of "
                      f"the following signatures instead:\n\t{new}", UserWarning,
                      stacklevel=_user_stacklevel())
    kwargs = {} if out is _NO_OUT or out is None else {"out": out}
    scalars = {k: v.item() if isinstance(v, Tensor) else v for k, v in scalars.items()}
    return public(head, *rest, **scalars, **kwargs)


_NO_OUT = object()   # a method, or an in-place form: no out= at all
