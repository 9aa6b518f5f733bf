"""The optimizers' updates with `differentiable=True`: the same update functions, run on tensors.

Note [differentiable updates]
    Each optimizer's update is one function written on NumPy arrays (`_adam_update`, ...): a chain
    of `np.multiply(a, b, out=c)` calls and the helpers of _foreach.py. It runs without autograd,
    which is what a plain `step()` wants. With `differentiable=True`, PyTorch runs its update with
    grad mode on, so that the new parameters are functions of the old ones, of the gradients and
    of tensor hyperparameters, and a meta-learning loss can be differentiated through the step.

    ember does not write every update twice. Like Chainer, whose kernels take the array module of
    their inputs (NumPy or CuPy), the update's code is run again with the names `np` and `F` bound
    to the ember-op versions below (`on_tensors`: the same code object, other globals). Every call
    is then an ember op, recorded by autograd:

    * `out=` a parameter or a state tensor writes into it in place (`copy_`), as PyTorch's
      `param.addcdiv_(...)` and `exp_avg.lerp_(...)` do: a leaf that requires grad is refused
      with PyTorch's in-place error, a non-leaf (a parameter computed from others) takes the
      update into its graph.
    * `out=` a scratch temporary (`s.a`, `s.b`, `s.c`) rebinds the temporary to the new tensor
      instead: the NumPy path reuses its temporaries to save memory, but a temporary that autograd
      saved for backward must not be overwritten afterwards. For the same reason a parameter or
      state tensor is read through a clone (PyTorch's differentiable paths clone them too).

    The result is PyTorch's single-tensor update op for op; only its speed differs from the NumPy
    path (a few dispatcher calls per op).
"""
import types

from .._core.tensor import Tensor


class _Temp:
    """A scratch temporary of the differentiable path: a name for the latest tensor written to
    it (see the Note)."""
    __slots__ = ("t",)

    def __init__(self, t=None):
        self.t = t

    def __setitem__(self, key, value):  # `sign[sign > 0] = etaplus` (Rprop)
        t = self.t.clone()
        t[_val(key)] = value
        self.t = t

    def __getitem__(self, key):
        return self.t[_val(key)]

    def __gt__(self, other):
        return self.t > _val(other)

    def __lt__(self, other):
        return self.t < _val(other)

    def __eq__(self, other):
        return self.t == _val(other)

    __hash__ = None


def _val(x):
    """An operand: a temporary's current tensor; a parameter or state tensor is read through a
    clone, since autograd may save the operand and the tensor is written in place later (as
    PyTorch's differentiable updates read `exp_avg.clone()`)."""
    if isinstance(x, _Temp):
        return x.t
    return x.clone() if isinstance(x, Tensor) else x


def _write(out, value):
    """np's `out=`: a temporary is rebound, a parameter or state tensor is written in place."""
    if out is None:
        return value
    if isinstance(out, _Temp):
        out.t = value
        return out
    out.copy_(value)
    return out


def _add(x, y, alpha):
    """x.add(y, alpha=alpha); a tensor alpha (a differentiable lr or weight decay) as a
    product, so that the gradient reaches it."""
    if isinstance(alpha, Tensor):
        return x + y * alpha
    return x.add(y, alpha=alpha)


def _tensor(x, like):
    return x if isinstance(x, Tensor) else like.new_tensor(x)


class _TensorNumPy:
    """The NumPy functions the updates call, as ember ops."""

    @staticmethod
    def multiply(a, b, out=None):
        return _write(out, _val(a) * _val(b))

    @staticmethod
    def add(a, b, out=None):
        return _write(out, _val(a) + _val(b))

    @staticmethod
    def subtract(a, b, out=None):
        return _write(out, _val(a) - _val(b))

    @staticmethod
    def divide(a, b, out=None):
        return _write(out, _val(a) / _val(b))

    @staticmethod
    def sqrt(a, out=None):
        return _write(out, _val(a).sqrt())

    @staticmethod
    def abs(a, out=None):
        return _write(out, _val(a).abs())

    @staticmethod
    def sign(a, out=None):
        return _write(out, _val(a).sign())

    @staticmethod
    def negative(a, out=None):
        return _write(out, -_val(a))

    @staticmethod
    def reciprocal(a, out=None):
        return _write(out, _val(a).reciprocal())

    @staticmethod
    def maximum(a, b, out=None):
        a = _val(a)
        return _write(out, a.maximum(_tensor(_val(b), a)))

    @staticmethod
    def clip(a, lo, hi, out=None):
        return _write(out, _val(a).clamp(lo, hi))

    @staticmethod
    def copyto(dst, src):
        _write(dst, _val(src))


class _TensorForeach:
    """_foreach.py's helpers (PyTorch's in-place ops), as the ember ops they stand for."""

    @staticmethod
    def add(x, y, alpha, out, tmp):
        return _write(out, _add(_val(x), _val(y), alpha))

    @staticmethod
    def lerp_(x, end, weight, tmp):
        return _write(x, _val(x).lerp(_val(end), weight))

    @staticmethod
    def addcmul_(x, t1, t2, value, tmp):
        return _write(x, _val(x).addcmul(_val(t1), _val(t2), value=value))

    @staticmethod
    def addcdiv_(x, t1, t2, value, tmp):
        return _write(x, _val(x).addcdiv(_val(t1), _val(t2), value=value))

    @staticmethod
    def start_buffer(buf, g):
        _write(buf, _val(g).detach())

    @staticmethod
    def decayed_grad(s, param, grad, maximize, weight_decay):
        g = -grad if maximize else grad
        if isinstance(weight_decay, Tensor) or weight_decay != 0:
            g = _add(g, _val(param), weight_decay)
        return g


_on_tensors = {}  # NumPy update function -> the same code bound to the ember-op names


def on_tensors(fn):
    """`fn` (an update written on NumPy arrays) with `np` and `F` meaning ember ops; the update
    functions it calls from other ember.optim modules (NAdam's `update_moments`) likewise."""
    run = _on_tensors.get(fn)
    if run is None:
        namespace = dict(fn.__globals__, np=_TensorNumPy, F=_TensorForeach)
        for name in fn.__code__.co_names:
            value = fn.__globals__.get(name)
            if (isinstance(value, types.FunctionType) and value is not fn
                    and value.__module__.startswith("ember.optim.")
                    and value.__module__ != __name__):
                namespace[name] = on_tensors(value)
        run = _on_tensors[fn] = types.FunctionType(fn.__code__, namespace, fn.__name__,
                                                   fn.__defaults__, fn.__closure__)
        run.__kwdefaults__ = fn.__kwdefaults__
    return run


class _Scratch:
    __slots__ = ("a", "b", "c")

    def __init__(self):
        self.a, self.b, self.c = _Temp(), _Temp(), _Temp()


def _real(t):
    return t.view_as_real() if t.is_complex() else t


def apply(update, param, grad, states, **hyper):
    """`_foreach.apply` for differentiable=True: the update on the tensors themselves, recorded
    by autograd (complex ones through their real view, as PyTorch does)."""
    on_tensors(update)(_Scratch(), _real(param), _real(grad), *[_real(s) for s in states],
                       **hyper)
