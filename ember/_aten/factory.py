"""Factory kernels (CPU and Meta): empty, full, arange, linspace, eye, tensors from Python
data, and the random fills. Memory for `empty` comes from the device's allocator."""
import math

import numpy as np

from .. import _dtype as D
from .._dispatcher import impl
from .._storage import get_allocator
from .._tensor import Tensor, _wrap, _meta


def _dt(dtype):
    return dtype if dtype is not None else D.get_default_dtype()


def _check_size(size):
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
    return tuple(size)


@impl("empty.memory_format", "CPU")
def empty(size, dtype=None, device=None, requires_grad=False):
    size = _check_size(size)
    dt = _dt(dtype)
    n = math.prod(size)
    buf = get_allocator("cpu").allocate(n * dt.itemsize)
    return _wrap(buf.view(D.np_dtype(dt)).reshape(size))


@impl("empty.memory_format", "Meta")
def empty_meta(size, dtype=None, device=None, requires_grad=False):
    return _meta(_check_size(size), _dt(dtype))


@impl("empty_strided", "CPU")
def empty_strided(size, stride, dtype=None, device=None):
    dt = _dt(dtype)
    n = 1 + sum((s - 1) * k for s, k in zip(size, stride) if s > 0) if all(size) else 0
    buf = get_allocator("cpu").allocate(n * dt.itemsize).view(D.np_dtype(dt))
    it = dt.itemsize
    arr = np.lib.stride_tricks.as_strided(buf, tuple(size), tuple(k * it for k in stride))
    return _wrap(arr)


@impl("empty_strided", "Meta")
def empty_strided_meta(size, stride, dtype=None, device=None):
    return _meta(size, _dt(dtype), stride)


def _fill_dtype(value, dtype):
    if dtype is not None:
        return dtype
    return D.scalar_dtype(value)


@impl("full", "CPU")
def full(size, fill_value, dtype=None, device=None):
    dt = _fill_dtype(fill_value, dtype)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _wrap(np.full(_check_size(size), fill_value, dtype=D.np_dtype(dt)))


@impl("full", "Meta")
def full_meta(size, fill_value, dtype=None, device=None):
    return _meta(_check_size(size), _fill_dtype(fill_value, dtype))


def _arange_dtype(start, end, step, dtype):
    if dtype is not None:
        return dtype
    if all(isinstance(x, (int, np.integer)) or (isinstance(x, Tensor) and not
           x.dtype.is_floating_point) for x in (start, end, step)):
        return D.int64
    return D.get_default_dtype()


def _arange_len(start, end, step):
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    return max(0, math.ceil((end - start) / step))


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


@impl("arange.start_step", "CPU")
def arange(start, end, step=1, dtype=None, device=None):
    start, end, step = _num(start), _num(end), _num(step)
    dt = _arange_dtype(start, end, step, dtype)
    n = _arange_len(start, end, step)
    if dt.is_floating_point:
        # PyTorch computes start + i * step in double precision, then casts
        r = start + np.arange(n, dtype=np.float64) * step
        return _wrap(r.astype(D.np_dtype(dt)))
    return _wrap((start + np.arange(n, dtype=np.int64) * step).astype(dt._np))


@impl("arange.start_step", "Meta")
def arange_meta(start, end, step=1, dtype=None, device=None):
    start, end, step = _num(start), _num(end), _num(step)
    return _meta((_arange_len(start, end, step),), _arange_dtype(start, end, step, dtype))


@impl("linspace", "CPU")
def linspace(start, end, steps, dtype=None, device=None):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = _num(start), _num(end)
    dt = _dt(dtype)
    if steps == 1:
        return _wrap(np.full((1,), start, dtype=D.np_dtype(dt)))
    # PyTorch fills the first half forwards from start and the second half backwards from end
    step = (end - start) / (steps - 1)
    i = np.arange(steps, dtype=np.float64)
    half = steps // 2
    r = np.where(i < half, start + step * i, end - step * (steps - 1 - i))
    if not dt.is_floating_point:
        r = np.trunc(r)
    return _wrap(r.astype(D.np_dtype(dt)))


@impl("linspace", "Meta")
def linspace_meta(start, end, steps, dtype=None, device=None):
    return _meta((steps,), _dt(dtype))


@impl("eye.m", "CPU")
def eye(n, m, dtype=None, device=None):
    if n < 0 or m < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {min(n, m)}")
    return _wrap(np.eye(n, m, dtype=D.np_dtype(_dt(dtype))))


@impl("eye.m", "Meta")
def eye_meta(n, m, dtype=None, device=None):
    return _meta((n, m), _dt(dtype))


@impl("scalar_tensor", "CPU")
def scalar_tensor(s, dtype=None, device=None):
    return _wrap(np.array(s, dtype=D.np_dtype(_dt(dtype))))


@impl("scalar_tensor", "Meta")
def scalar_tensor_meta(s, dtype=None, device=None):
    return _meta((), _dt(dtype))


# ---- tensors from Python data ------------------------------------------------------------------
def infer_dtype(data):
    """The dtype torch.tensor(data) picks: bool < int64 < default float < complex over all leaves."""
    cat = -1
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            d = x.dtype
            c = 3 if d.is_complex else 2 if d.is_floating_point else 0 if d is D.bool else 1
            if c >= cat:
                cat = c
                if x.dim() or True:
                    pass
            continue
        if isinstance(x, np.ndarray):
            d = D.from_numpy_dtype(x.dtype)
            c = 3 if d.is_complex else 2 if d.is_floating_point else 0 if d is D.bool else 1
            cat = max(cat, c)
            continue
        if isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        if isinstance(x, (bool, np.bool_)):
            cat = max(cat, 0)
        elif isinstance(x, (int, np.integer)):
            cat = max(cat, 1)
        elif isinstance(x, (float, np.floating)):
            cat = max(cat, 2)
        elif isinstance(x, (complex, np.complexfloating)):
            cat = max(cat, 3)
        else:
            raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    default = D.get_default_dtype()
    return {-1: default, 0: D.bool, 1: D.int64, 2: default,
            3: D.complex128 if default is D.float64 else D.complex64}[cat]


def _to_nested_numpy(data):
    if isinstance(data, Tensor):
        return data._np
    if isinstance(data, (list, tuple)):
        if any(isinstance(x, Tensor) for x in data):
            return [_to_nested_numpy(x) for x in data]
    return data


@impl("_tensor_from_data", "CPU")
def tensor_from_data(data, dtype=None, device=None):
    if isinstance(data, np.ndarray) and dtype is None:
        return _wrap(np.array(data, copy=True))
    dt = dtype if dtype is not None else infer_dtype(data)
    nd = D.np_dtype(dt)
    raw = _to_nested_numpy(data)
    try:
        if dt.is_floating_point or dt.is_complex or dt is D.bool:
            arr = np.array(raw, dtype=nd)
        else:
            arr = np.array(raw)
            if arr.dtype.kind == "f":
                arr = arr.astype(nd)
            else:
                arr = arr.astype(nd)
    except (ValueError, TypeError) as e:
        raise ValueError(f"expected sequence of equal-length lists: {e}") from None
    if arr.dtype == object:
        raise TypeError(f"can't convert to a tensor: {type(data).__name__}")
    return _wrap(arr if arr.base is None else arr.copy())


@impl("_tensor_from_data", "Meta")
def tensor_from_data_meta(data, dtype=None, device=None):
    t = tensor_from_data(data, dtype)
    return _meta(t._size, t.dtype)


# ---- random fills (streams bit-identical to PyTorch's CPU generator) ----------------------------
def _gen(generator):
    from .. import _generator
    return generator if generator is not None else _generator.default_generator


def _gen_impl(g):
    return getattr(g, "_impl", g)


@impl("uniform_", "CPU")
def uniform_(self, low=0.0, high=1.0, generator=None):
    g = _gen_impl(_gen(generator))
    self._np[...] = g.uniform(self._size, self._np.dtype, low, high)
    return self


@impl("normal_", "CPU")
def normal_(self, mean=0.0, std=1.0, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    g = _gen_impl(_gen(generator))
    self._np[...] = g.normal(self._size, self._np.dtype, mean, std)
    return self


@impl("random_.from", "CPU")
def random_(self, low, high=None, generator=None):
    g = _gen_impl(_gen(generator))
    if high is None:
        high = _dtype_max_plus_one(self.dtype)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    self._np[...] = g.random_int(self._size, self._np.dtype, low, high)
    return self


def _dtype_max_plus_one(dt):
    if dt.is_floating_point:
        return 2 ** {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[dt.name] + 1
    if dt is D.bool:
        return 2
    return int(np.iinfo(dt._np).max) + 1


@impl("bernoulli_.float", "CPU")
def bernoulli_(self, p=0.5, generator=None):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    g = _gen_impl(_gen(generator))
    self._np[...] = g.bernoulli(p, self._size, self._np.dtype)
    return self


@impl("bernoulli", "CPU")
def bernoulli(self, generator=None):
    g = _gen_impl(_gen(generator))
    return _wrap(np.asarray(g.bernoulli(self._np, self._size, self._np.dtype)))


@impl("randperm", "CPU")
def randperm(n, generator=None, dtype=None, device=None):
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    g = _gen_impl(_gen(generator))
    return _wrap(np.asarray(g.randperm(n, D.np_dtype(dtype or D.int64))))


for _n in ("uniform_", "normal_", "random_.from", "bernoulli_.float"):
    impl(_n, "Meta")(lambda self, *rest: self)
impl("bernoulli", "Meta")(lambda self, generator=None: _meta(self._size, self.dtype))
impl("randperm", "Meta")(lambda n, generator=None, dtype=None, device=None:
                         _meta((n,), dtype or D.int64))
