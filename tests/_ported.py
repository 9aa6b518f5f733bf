"""The shim that runs checks ported from PyTorch's own test suite against ember and torch.

PyTorch's tests use `torch.testing._internal` (make_tensor, TestCase.assertEqual, @dtypes),
which does not import under ember. A ported check here is instead a function `fn(lib)` written
once against the public API; `same(fn)` runs it with `lib = torch` and with `lib = ember` and
compares what comes out: tensors by dtype, shape, requires_grad and values (torch's default
tolerances for the dtype), Sizes/dtypes/devices by name, containers element by element, and
a raised exception by its builtin class and, when the original test matched a regex, by that
regex on both messages.
"""
import re

import numpy as np
import torch

import ember

# torch.testing's default (rtol, atol) per dtype, as assertEqual uses them
_TOL = {"torch.float16": (1e-3, 1e-5), "torch.bfloat16": (1.6e-2, 1e-5),
        "torch.float32": (1.3e-6, 1e-5), "torch.complex64": (1.3e-6, 1e-5),
        "torch.float64": (1e-7, 1e-7), "torch.complex128": (1e-7, 1e-7)}


def plain(x):
    """A value of either library as plain Python/NumPy, library names replaced by 'torch'."""
    if isinstance(x, (torch.Tensor, ember.Tensor)):
        lib = torch if isinstance(x, torch.Tensor) else ember
        d = x.detach()
        if d.layout != lib.strided:
            d = d.to_dense()
        if d.dtype == lib.bfloat16:
            d = d.float()
        values = None if d.device.type == "meta" else d.resolve_conj().resolve_neg().numpy().copy()
        return ("Tensor", str(x.dtype), tuple(x.shape), x.requires_grad, values)
    if isinstance(x, (torch.Size, ember.Size)):
        return ("Size", tuple(x))
    if isinstance(x, (torch.dtype, ember.dtype, torch.device, ember.device, torch.layout,
                      ember.layout, torch.memory_format, ember.memory_format)):
        return (type(x).__name__, str(x))
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(plain(v) for v in x) if type(x) in (tuple, list) else \
            (type(x).__name__, tuple(plain(v) for v in x))
    if isinstance(x, str):
        return x.replace("ember", "torch")
    return x


def assert_plain_equal(e, t, path="out"):
    if isinstance(t, tuple) and len(t) == 5 and t[0] == "Tensor":
        assert isinstance(e, tuple) and e[:1] == ("Tensor",), f"{path}: {e!r} is not a Tensor"
        assert e[1:4] == t[1:4], f"{path}: dtype/shape/requires_grad {e[1:4]} != {t[1:4]}"
        if t[4] is not None:
            rtol, atol = _TOL.get(t[1], (0, 0))
            np.testing.assert_allclose(e[4], t[4], rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=path)
    elif isinstance(t, dict):
        assert isinstance(e, dict) and list(e) == list(t), f"{path}: keys {list(e)} != {list(t)}"
        for k in t:
            assert_plain_equal(e[k], t[k], f"{path}[{k!r}]")
    elif isinstance(t, (tuple, list)):
        assert type(e) is type(t) and len(e) == len(t), f"{path}: {e!r} != {t!r}"
        for i, (a, b) in enumerate(zip(e, t)):
            assert_plain_equal(a, b, f"{path}[{i}]")
    elif isinstance(t, float) and isinstance(e, float):
        np.testing.assert_allclose(e, t, rtol=1.3e-6, atol=1e-5, equal_nan=True, err_msg=path)
    else:
        assert type(e) is type(t) and e == t, f"{path}: {e!r} != {t!r}"


def _outcome(fn, lib):
    try:
        return fn(lib), None
    except Exception as exc:  # the check compares what each library raised
        return None, exc


def _builtin_class(exc):
    return next(c for c in type(exc).__mro__ if c.__module__ == "builtins")


def same(fn, *, match=None):
    """fn(torch) and fn(ember) return equal values, or raise the same builtin exception class
    (whose message matches the regex `match` in both, when given)."""
    t, t_exc = _outcome(fn, torch)
    e, e_exc = _outcome(fn, ember)
    if t_exc is not None:
        assert e_exc is not None, f"torch raised {t_exc!r}, ember returned {e!r}"
        assert isinstance(e_exc, _builtin_class(t_exc)), \
            f"torch raised {type(t_exc).__name__}: {t_exc}; ember raised {type(e_exc).__name__}: {e_exc}"
        if match is not None:
            assert re.search(match, str(t_exc)), f"torch's message {str(t_exc)!r} !~ {match!r}"
            assert re.search(match, str(e_exc)), f"ember's message {str(e_exc)!r} !~ {match!r}"
        return
    if e_exc is not None:
        raise AssertionError(f"torch returned {t!r}, ember raised") from e_exc
    assert_plain_equal(plain(e), plain(t))


def outcomes(L, makes):
    """("ok", value) or (exception class name, message) for each call in `makes` (object
    addresses in messages left out, as they differ between runs and libraries)."""
    out = []
    for make in makes:
        try:
            out.append(("ok", make()))
        except Exception as exc:  # the checks compare what each library raised
            out.append((type(exc).__name__, re.sub(" at 0x[0-9a-f]+", "", str(exc))))
    return out


def error_line(fn, lib):
    """fn(lib)'s exception as (class name, first line of its message); None if it returns."""
    try:
        fn(lib)
    except Exception as exc:  # the checks compare what each library raised
        return type(exc).__name__, str(exc).split("\n")[0]
    return None


def raises(lib, fn):
    """Run fn(); return the exception's class name and message (for checks that compare them)."""
    try:
        fn()
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return None
