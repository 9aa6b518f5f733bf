"""PyTorch's conjugate and negative bits: a view whose values are its memory's conjugated
(`x.conj()`) or negated (`torch._neg_view(x)`, `x.conj().imag`), computed only when read.

The bits are a tensor's `_sparse` mark (as the Python key's is, ember/_core/python_key.py): the
dispatcher's key loop reads `_sparse` for every tensor argument already and looks further only
when it is set, so a tensor without the bits costs nothing. A marked tensor picks the
dispatch key "Conjugate" or "Negative", whose fallback (ember/_dispatch/math_bits.py)
materializes it before the backend kernel runs. Its layout is strided: the mark is not sparse.
"""
from .layout import strided
from .python_key import sparse_in_slot


class MathBits:
    """The `_sparse` mark of a tensor with the conjugate bit, the negative bit, or both."""
    __slots__ = ("conj", "neg", "key")
    layout = strided

    def __init__(self, conj, neg):
        self.conj, self.neg = conj, neg
        # PyTorch's Negative key sits above its Conjugate key: its fallback runs first
        self.key = "Negative" if neg else "Conjugate"

    def __repr__(self):
        return f"MathBits(conj={self.conj}, neg={self.neg})"


_MARKS = {(c, n): MathBits(c, n) for c in (False, True) for n in (False, True) if c or n}
MATH_KEYS = ("Negative", "Conjugate")   # highest first


def math_bits(t):
    """`t`'s MathBits, or None."""
    mark = t._sparse
    return mark if type(mark) is MathBits else None


def resolved_values(t):
    """`t`, or for a tensor with bits a new tensor of the values it stands for (the bits
    applied). Code outside the dispatcher that reads a tensor's array (`t._np`, `numpy()`)
    reads it through this; a kernel need not, the keys' fallback resolved its arguments."""
    if type(t._sparse) is MathBits:
        return t.resolve_conj().resolve_neg()
    return t


def set_math_bits(t, conj, neg):
    """Give `t` (a view made just now) the bits; both False takes the mark off."""
    mark = _MARKS.get((conj, neg))
    if mark is None:
        if sparse_in_slot(type(t)):
            t._sparse = None
        else:  # the bits were in the instance dict, beside the class's Python-key mark
            t.__dict__.pop("_sparse", None)
    else:
        t._sparse = mark
    return t
