"""Helpers shared by the derivative formulas of several op families."""
from ..._aten.elementwise import not_implemented
from ... import _refs as E
from ..._dispatch import dispatcher as _dispatcher
from ..._core import dtype as D
from ..._core.tensor import Tensor


class _FirstUse:
    """`_aten.<name>` for the formulas: the op (its one overload, else its packet), looked up
    at first use and kept as an attribute, so a backward pays no namespace or packet lookup.
    Calling it goes through the dispatcher as any op call does."""

    def __getattr__(self, name):
        packet = _dispatcher._packets.get(("aten", name))
        if packet is None:
            raise AttributeError(f"no operator aten::{name}")
        overloads = list(packet._overloads.values())
        op = overloads[0] if len(overloads) == 1 else packet
        setattr(self, name, op)
        return op


_aten = _FirstUse()


def _unsqueeze_dims(g, shape, dim, keepdim):
    """Put back reduced dims so a reduced gradient broadcasts against the input."""
    if keepdim or not shape:
        return g
    n = len(shape)
    dims = range(n) if dim is None or dim == [] or dim == () else \
        sorted(d % n for d in ((dim,) if isinstance(dim, int) else dim))
    for d in dims:
        g = g.unsqueeze(d)
    return g


def _zero(grad):
    """The gradient of an input the output does not move with: exact zeros (PyTorch's
    zeros_like), never grad * 0, which is NaN where grad is NaN or inf. Selected from grad, so
    that it stays a function of grad (forward AD reads tangents off this formula's own
    derivative: an in-place op's tangent becomes 0, not left as it was)."""
    return _masked(grad.new_zeros((), dtype=D.bool), grad)


def _masked(mask, grad):
    """grad where `mask` holds and exact zeros elsewhere: PyTorch's derivatives select (a NaN
    gradient of an element the output does not depend on is dropped), they do not multiply."""
    return E.where(mask, grad, grad.new_zeros(()))


def _conj(x):
    """conj for complex tensors and Python complex numbers; real ones are returned as they are."""
    if isinstance(x, Tensor):
        return x.conj() if x.dtype.is_complex else x
    return x.conjugate() if type(x) is complex else x


def _float_only_backward(kernel, self):
    """1, or PyTorch's error for a backward kernel compiled for float32/float64 only."""
    if self.dtype in (D.float16, D.bfloat16):
        raise not_implemented(kernel, self.dtype)
    return 1
