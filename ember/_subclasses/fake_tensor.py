"""torch._subclasses.fake_tensor: tensors that carry only metadata (shape, dtype, strides, a
device) and the mode that computes with them, so a program can be run for its shapes alone.

A FakeTensor is a meta tensor that says it lives on another device (`fake_device`): its storage
is a meta storage (no bytes), shared with the fakes it aliases. FakeTensorMode is a
TorchDispatchMode: every aten op called inside it reaches `__torch_dispatch__`, which

  1. refuses real tensors (unless `allow_non_fake_inputs`, then converts them) and fakes of
     another mode;
  2. folds constants: a fake made by `torch.tensor(4.0)` keeps its real value in `.constant`
     (only for at most CONSTANT_NUMEL_LIMIT elements), and an op whose tensor inputs are all
     constants runs on the real values, so `.item()` of the result still works;
  3. raises DataDependentOutputException for `.item()` of a fake without a constant and
     DynamicOutputShapeException for ops whose output shape depends on the data (nonzero);
  4. otherwise runs the op's meta kernel on plain meta aliases of the fakes and wraps the
     results as fakes on the inputs' common device (a constructor: on its `device=`).

Step 4 is cached (Note [Fake dispatch cache] below): a call whose fakes have the same metadata
as an earlier one builds its results from the recorded metadata without running the kernel.

Outside the mode, an op on fakes goes to `FakeTensor.__torch_dispatch__`, which enters the
fakes' mode and calls the op again. Autograd sits above the Python key, so a fake that
requires grad records a graph as any tensor does.

FakeTensorConverter turns real tensors into fakes (`from_real_tensor`): one fake per real
tensor while both live, fakes of one real storage on one meta storage (MetaConverter's
storage memo), views as views of their base's fake.
"""
import dataclasses
import weakref

from .._core.tensor import Tensor
from .._core.device import device as _device_cls
from .._core.math_bits import MathBits, math_bits, set_math_bits
from .._dispatch.python_dispatch import DisableTorchDispatch
from ..overrides import TorchFunctionMode
from ..utils._python_dispatch import TorchDispatchMode
from .meta_utils import MetaConverter

__all__ = ["FakeTensor", "FakeTensorMode", "FakeTensorConverter", "FakeCopyMode",
           "TensorMetadata", "extract_tensor_metadata", "DispatchCacheInfo",
           "DataDependentOutputException", "DynamicOutputShapeException",
           "UnsupportedOperatorException", "MetadataMismatchError", "unset_fake_temporarily"]

CONSTANT_NUMEL_LIMIT = 1


@dataclasses.dataclass
class DynamicOutputShapeException(RuntimeError):
    func: object


@dataclasses.dataclass
class DataDependentOutputException(RuntimeError):
    func: object


@dataclasses.dataclass
class UnsupportedOperatorException(RuntimeError):
    func: object


@dataclasses.dataclass
class MetadataMismatchError(RuntimeError):
    reason: str


# ops whose output's shape depends on the input's values (PyTorch tags them
# `dynamic_output_shape`): no meta kernel can say how big the result is
_DYNAMIC_OUTPUT_SHAPE = frozenset((
    "nonzero", "masked_select", "unique", "_unique", "_unique2", "unique_dim",
    "unique_consecutive", "repeat_interleave.Tensor", "_ctc_loss", "bincount",
    "histc", "_segment_reduce"))

# ops that write a device of their own into their result (a copy keeps its destination's)
_DEVICE_INDEPENDENT = frozenset(("copy_", "_copy_from", "_to_copy", "to", "index_put_",
                                 "index_put", "_index_put_impl_", "resize_as_", "set_"))

# ops that change their input's shape or strides in place (PyTorch tags them `inplace_view`)
_INPLACE_VIEW = frozenset(("as_strided_", "detach_", "squeeze_", "unsqueeze_", "t_",
                           "transpose_", "swapaxes_", "swapdims_"))

_META = _device_cls("meta")


class FakeTensor(Tensor):
    """A meta tensor that reports `fake_device` as its device, owned by one FakeTensorMode."""

    def __new__(cls, fake_mode, elem, device, constant=None):
        device = _normalize_device(device)
        if device.type == "meta" and not fake_mode.allow_meta:
            raise AssertionError("FakeTensor on the meta device: torch._functorch.config."
                                 "fake_tensor_allow_meta is False")
        self = Tensor._make_wrapper_subclass(cls, elem.shape, elem.stride(),
                                             elem.storage_offset(), dtype=elem.dtype,
                                             device=device)
        self._storage = elem._storage_()   # one meta storage for the fakes that alias
        self.fake_mode = fake_mode
        self.constant = constant
        bits = math_bits(elem)
        if bits is not None:
            self._fake_bits = bits
        return self

    # A fake's `_sparse` mark is the Python key's, so its conjugate/negative bits (a lazy
    # `conj()` view's) are kept here and given to the meta alias its kernels run on.
    _fake_bits = None

    def is_conj(self):
        return self._fake_bits is not None and self._fake_bits.conj

    def is_neg(self):
        return self._fake_bits is not None and self._fake_bits.neg

    def _set_math_bits(self, conj, neg):
        self._fake_bits = MathBits(conj, neg) if conj or neg else None

    def __init__(self, *args, **kwargs):
        pass

    @property
    def fake_device(self):
        return self._device

    @staticmethod
    def from_tensor(t, fake_mode):
        return fake_mode.from_tensor(t)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        # no FakeTensorMode is active: run the op in the fakes' own mode
        mode = next((a.fake_mode for a in _flat(args, kwargs) if isinstance(a, FakeTensor)),
                    None)
        if mode is None or any(not issubclass(t, FakeTensor) for t in types):
            return NotImplemented
        with mode:
            return func(*args, **(kwargs or {}))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        return self.fake_mode.fake_tensor_converter.from_meta_and_device(
            self.fake_mode, _meta_alias(self), self.fake_device)


def _normalize_device(device):
    device = _device_cls(device)
    if device.type == "cuda" and device.index is None:   # PyTorch names cuda's current device
        device = _device_cls("cuda", 0)
    return device


def _meta_alias(fake):
    """A plain meta tensor with `fake`'s metadata and storage: what the meta kernels run on."""
    m = Tensor._as_subclass(fake, Tensor)
    m._device = _META
    if fake._fake_bits is not None:
        set_math_bits(m, fake._fake_bits.conj, fake._fake_bits.neg)
    return m


def _flat(args, kwargs=None):
    for a in list(args) + list((kwargs or {}).values()):
        if isinstance(a, (list, tuple)):
            yield from a
        else:
            yield a


class FakeTensorConverter:
    """Real (or meta) tensors to fakes of a mode, memoized per tensor while it lives."""

    def __init__(self, *, copy_data=False, export=False):
        self.meta_converter = MetaConverter(copy_data=copy_data)
        self.tensor_memo = weakref.WeakValueDictionary()   # id(real tensor) -> fake
        self.constant_storage_mapping = {}   # id(constant's storage) -> [weakref to fake]
        self.export = export

    def _memo_get(self, t):
        return self.tensor_memo.get(id(t))

    def _memo_set(self, t, fake):
        key = id(t)
        self.tensor_memo[key] = fake
        weakref.finalize(t, self.tensor_memo.pop, key, None)
        fake._real_ref = weakref.ref(t)

    def from_real_tensor(self, fake_mode, t, make_constant=False, shape_env=None, *,
                         source=None, symbolic_context=None, trace=True):
        if isinstance(t, FakeTensor):
            if t.fake_mode is fake_mode:
                return t
            return self.from_meta_and_device(fake_mode, _meta_alias(t), t.fake_device)
        fake = self._memo_get(t)
        if fake is not None:
            return fake
        import ember
        from .._C import _functorch
        if _functorch.is_batchedtensor(t):   # a vmap level's tensor: its value made fake
            inner = self.from_real_tensor(fake_mode, _functorch.get_unwrapped(t), make_constant)
            fake = _functorch._add_batch_dim(inner, t._bdim, t._level)
            self._memo_set(t, fake)
            return fake
        if t._is_view() and t._base is not None and t._base.dtype == t.dtype \
                and t.is_conj() == t._base.is_conj() and t.is_neg() == t._base.is_neg():
            base = self.from_real_tensor(fake_mode, t._base)
            if t.requires_grad:   # a view in autograd's graph: made by the mode, recorded
                with fake_mode, ember.enable_grad():
                    fake = base.as_strided(t.shape, t.stride(), t.storage_offset())
            else:   # the base's meta alias viewed directly (no constant folding)
                with DisableTorchDispatch():
                    view = _meta_alias(base).as_strided(t.shape, t.stride(),
                                                        t.storage_offset())
                fake = FakeTensor(fake_mode, view, t.device)
        else:
            storage = self.meta_converter._meta_storage(t)
            with DisableTorchDispatch():   # plain meta tensors, whatever modes are active
                meta = ember.empty((0,), dtype=t.dtype, device="meta")
                meta.set_(storage, t.storage_offset(), t.shape, t.stride())
            fake = FakeTensor(fake_mode, meta, t.device)
            if t.requires_grad:
                fake.requires_grad_(True)
                if not t.is_leaf:   # a result of autograd: give it a history of its own
                    with fake_mode, ember.enable_grad():
                        fake = fake.clone()
            if t.is_leaf and t.grad is not None:
                fake.grad = self.from_real_tensor(fake_mode, t.grad)
            if t.is_inference():
                fake._inference = True
        if isinstance(t, ember.nn.Parameter):
            with fake_mode:
                fake = ember.nn.Parameter(fake, requires_grad=t.requires_grad)
        if make_constant:
            self.add_constant_storage_mapping(fake, t)
        self._memo_set(t, fake)
        return fake

    def from_meta_and_device(self, fake_mode, t, device):
        fake = self._memo_get(t)
        if fake is None:
            fake = FakeTensor(fake_mode, t, device)
            self._memo_set(t, fake)
        return fake

    def add_constant_storage_mapping(self, fake, constant):
        fake.constant = constant
        key = id(constant.untyped_storage())
        self.constant_storage_mapping.setdefault(key, []).append(weakref.ref(fake))

    def invalidate_constant_aliases(self, tensor):
        """Forget the constant of every fake whose constant shares `tensor`'s storage."""
        for ref in self.constant_storage_mapping.pop(id(tensor.untyped_storage()), ()):
            fake = ref()
            if fake is not None:
                fake.constant = None


class FakeTensorMode(TorchDispatchMode):
    """Within it, factory functions make FakeTensors and ops on fakes make fakes (see the
    module's docstring for what a call goes through)."""
    makes_tensors_of_any_device = True   # factories let a fake CUDA tensor through to it

    def __init__(self, *, allow_fallback_kernels=True, allow_non_fake_inputs=False,
                 shape_env=None, static_shapes=None, export=False):
        super().__init__()
        from .._functorch import config
        self.allow_fallback_kernels = allow_fallback_kernels
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.allow_meta = config.fake_tensor_allow_meta
        self.shape_env = shape_env
        self.static_shapes = shape_env is None if static_shapes is None else static_shapes
        self.export = export
        self.in_kernel_invocation = False
        self.fake_tensor_converter = FakeTensorConverter(export=export)

    def is_our_fake(self, t):
        return isinstance(t, FakeTensor) and t.fake_mode is self

    def from_tensor(self, tensor, *, static_shapes=None, source=None, symbolic_context=None,
                    trace=True):
        return self.fake_tensor_converter.from_real_tensor(self, tensor)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if any(not issubclass(t, FakeTensor) for t in types):
            return NotImplemented   # another subclass: its own handler goes first
        args = func.schema.bind(tuple(args), kwargs or {}, func.__name__)
        name = func._opname
        if name == "_local_scalar_dense":
            if args[0].constant is not None:
                return args[0].constant.item()
            raise DataDependentOutputException(func)
        if name in _DYNAMIC_OUTPUT_SHAPE or func.short_name in _DYNAMIC_OUTPUT_SHAPE:
            raise DynamicOutputShapeException(func)
        tensors = [a for a in _tensor_args(func, args)]
        if not tensors:
            return self._constructor(func, args)
        args = self._validate_and_convert(func, args)
        fakes = [a for a in _tensor_args(func, args)]
        if all(f.constant is not None for f in fakes) and not _random(func):
            out = self._fold_constants(func, args)
            if out is not None:
                return out
        self._invalidate_written_constants(func, fakes)
        return self._cached_run_meta(func, args, fakes)

    # ---- the paths of a call ----------------------------------------------------------------
    def _constructor(self, func, args):
        """A call without tensor arguments: a factory (`device=`) runs its meta kernel; the
        others (torch.tensor's `_tensor_from_data`, `div(4, 4)`) run for real and keep their
        small results as constants."""
        pos = func._device_pos
        if pos is not None and func._opname != "_tensor_from_data":
            device = args[pos]
            if device is None:
                from .._core.device import get_default_device
                device = get_default_device()
            args = args[:pos] + (_META,) + args[pos + 1:]
            with DisableTorchDispatch():
                return _wrap(self, func(*args), device)
        device = None
        if pos is not None and args[pos] is not None and _device_cls(args[pos]).type != "cpu":
            device, args = args[pos], args[:pos] + (None,) + args[pos + 1:]
        with DisableTorchDispatch():
            out = func(*args)
        if device is not None:
            return _wrap(self, _meta_like(out), device)
        return _map_tensors(out, lambda t: self.fake_tensor_converter.from_real_tensor(
            self, t, make_constant=self._may_turn_const(t)))

    def _validate_and_convert(self, func, args):
        def convert(a):
            if isinstance(a, FakeTensor):
                if a.fake_mode is not self:
                    raise AssertionError(f"Mixing fake modes NYI x.fake_mode={a.fake_mode} "
                                         f"vs self={self}")
                return a
            if not self.allow_non_fake_inputs:
                raise AssertionError(
                    "Please convert all Tensors to FakeTensors first or instantiate "
                    "FakeTensorMode with 'allow_non_fake_inputs'. Found in "
                    f"{func}{_call_text(args)}")
            return self.fake_tensor_converter.from_real_tensor(self, a)
        return _map_tensor_args(func, args, convert)

    def _fold_constants(self, func, args):
        """Run `func` on the constants of its inputs; the results are fakes with constants
        when they are small, else None (and the inputs' aliases forget their constants)."""
        with DisableTorchDispatch():
            out = func(*_map_tensor_args(func, args, lambda f: f.constant))
        results = [t for t in _flat((out,)) if isinstance(t, Tensor)]
        if all(self._may_turn_const(t) for t in results):
            return _map_tensors(out, lambda t: self.fake_tensor_converter.from_real_tensor(
                self, t, make_constant=True))
        for t in results:
            self.fake_tensor_converter.invalidate_constant_aliases(t)
        return None

    def _invalidate_written_constants(self, func, fakes):
        if func._mutates:
            for f in fakes:
                if f.constant is not None:
                    self.fake_tensor_converter.invalidate_constant_aliases(f.constant)

    # ---- Note [Fake dispatch cache] -----------------------------------------------------------
    # A meta kernel's results depend only on the metadata of its inputs (and on the default
    # dtype and device, and inference mode), so FakeTensorMode records, per call key, the
    # metadata of what came out: for each result, its TensorMetadata and which argument it is
    # (an in-place op's `self`) or aliases (a view's storage). A later call with the same key
    # builds its results from that record. The cache, and its hit/miss/bypass counters, are
    # shared by every FakeTensorMode (`FakeTensorMode.cache_info()`). Calls that the record
    # could not reproduce bypass it: ops that restride their input in place ("inplace view"),
    # real tensors, fakes holding constants, and calls that changed an argument's metadata.
    cache = {}
    cache_hits = 0
    cache_misses = 0
    cache_bypasses = {}

    @classmethod
    def cache_info(cls):
        return DispatchCacheInfo(cls.cache_hits, cls.cache_misses, dict(cls.cache_bypasses),
                                 len(cls.cache))

    @classmethod
    def cache_clear(cls):
        cls.cache_hits = cls.cache_misses = 0
        cls.cache_bypasses.clear()
        cls.cache.clear()

    def _cache_key(self, state, func, args, kwargs):
        from .._core import dtype as D
        from .._core.device import get_default_device
        from .._core.grad_mode import is_inference_mode_enabled
        return (func, _hashable(args), _hashable(kwargs), D.get_default_dtype(),
                get_default_device(), is_inference_mode_enabled())

    def _bypass(self, reason):
        FakeTensorMode.cache_bypasses[reason] = FakeTensorMode.cache_bypasses.get(reason, 0) + 1

    def _cached_run_meta(self, func, args, fakes):
        if func._opname in _INPLACE_VIEW:
            self._bypass("inplace view")
            return self._run_meta(func, args, fakes)
        try:
            key = self._cache_key(_CacheKeyState(), func, args, {})
        except _BypassDispatchCache as e:
            self._bypass(e.reason)
            return self._run_meta(func, args, fakes)
        entry = FakeTensorMode.cache.get(key)
        if entry is not None:
            FakeTensorMode.cache_hits += 1
            return self._output_from_cache_entry(entry, func, args)
        FakeTensorMode.cache_misses += 1
        before = [extract_tensor_metadata(f) for f in fakes]
        out = self._run_meta(func, args, fakes)
        if any(extract_tensor_metadata(f) != b for f, b in zip(fakes, before)):
            self._bypass("argument metadata mutated")
        else:
            entry = self._cache_entry(func, args, out)
            if entry is not None:
                FakeTensorMode.cache[key] = entry
        return out

    def _cache_entry(self, func, args, out):
        """(is a tuple, [(metadata, index of the argument it is, index of the argument whose
        storage it views)]) for the results `out` of `func(*args)`; None if they are not
        all fakes."""
        positions = [(i, a) for i, a in enumerate(args) if isinstance(a, FakeTensor)]
        results = list(out) if isinstance(out, (tuple, list)) else [out]
        if not all(isinstance(r, FakeTensor) for r in results):
            self._bypass("non-FakeTensor output")
            return None
        entries = []
        for r in results:
            same = next((i for i, a in positions if a is r), None)
            view = None
            if same is None and r._base is not None:
                view = next((i for i, a in positions
                             if a.untyped_storage() is r.untyped_storage()), None)
                if view is not None and args[view].dtype != r.dtype:   # view_as_real, .view(dtype)
                    self._bypass("view of another dtype")
                    return None
            entries.append((extract_tensor_metadata(r), same, view))
        return isinstance(out, (tuple, list)), type(out), entries

    def _output_from_cache_entry(self, entry, func, args):
        is_seq, seq_type, entries = entry
        results = []
        for meta, same, view in entries:
            if same is not None:
                results.append(args[same])
                continue
            with DisableTorchDispatch():
                if view is not None:
                    source = args[view]
                    m = _meta_alias(source).as_strided(meta.shape, meta.stride,
                                                       meta.storage_offset)
                else:
                    m = _empty_meta(meta)
                set_math_bits(m, meta.is_conj, meta.is_neg)   # as recorded, not the source's
            fake = FakeTensor(self, m, meta.device)
            if meta.is_inference:
                fake._inference = True
            if view is not None:
                source = args[view]
                fake._base = source._base if source._base is not None else source
            results.append(fake)
        return seq_type(results) if is_seq else results[0]

    def _run_meta(self, func, args, fakes):
        device = _common_device(func, fakes)
        aliases = {}

        def to_meta(f):
            m = _meta_alias(f)
            aliases[id(m)] = (f, m)
            return m
        meta_args = _map_tensor_args(func, args, to_meta)
        pos = func._device_pos
        if pos is not None and meta_args[pos] is not None:   # `empty_like(x, device=...)`
            device = meta_args[pos]
            meta_args = meta_args[:pos] + (_META,) + meta_args[pos + 1:]
        try:
            with DisableTorchDispatch():   # plain meta tensors: no mode below sees the call
                out = func(*meta_args)
        except NotImplementedError:
            if func.namespace not in ("aten", "prims"):
                raise UnsupportedOperatorException(func) from None
            raise
        for f, m in aliases.values():   # an in-place op may have resized or restrided it
            f._size, f._stride_, f._offset_, f._storage = \
                m._size, m._stride_, m._offset_, m._storage_()

        def wrap(t):
            if id(t) in aliases:   # an in-place op returns its input
                return aliases[id(t)][0]
            fake = FakeTensor(self, t, device)
            if t._inference:
                fake._inference = True
            source = aliases.get(id(t._base))
            if source is not None:   # a view of an input: a view of that fake's base
                fake._base = source[0]._base if source[0]._base is not None else source[0]
            return fake
        return _map_tensors(out, wrap)

    def _may_turn_const(self, t):
        return (t.numel() <= CONSTANT_NUMEL_LIMIT and not t.is_sparse
                and t.device.type != "meta" and not isinstance(t, FakeTensor))


@dataclasses.dataclass(frozen=True)
class TensorMetadata:
    """What a fake's dispatch depends on: everything about a tensor but its data."""
    dtype: object
    shape: tuple
    stride: tuple
    device: object
    layout: object
    memory_format: object
    storage_offset: int
    storage_bytes: object
    requires_grad: bool
    is_quantized: bool
    is_conj: bool
    is_neg: bool
    is_inference: bool
    is_sparse: bool
    is_coalesced: object
    dense_dim: object
    sparse_dim: object


def extract_tensor_metadata(t):
    from .._core.memory_format import suggest_memory_format
    sparse = t.is_sparse
    return TensorMetadata(
        t.dtype, tuple(t.shape), None if sparse else t.stride(), t.device, t.layout,
        None if sparse else suggest_memory_format(t), 0 if sparse else t.storage_offset(),
        None if sparse else t.untyped_storage().nbytes(), t.requires_grad, t.is_quantized,
        t.is_conj(), t.is_neg(), t.is_inference(), sparse,
        t.is_coalesced() if sparse else None, t.dense_dim() if sparse else None,
        t.sparse_dim() if sparse else None)


@dataclasses.dataclass(frozen=True)
class DispatchCacheInfo:
    hits: int
    misses: int
    bypasses: dict
    size: int


class _CacheKeyState:
    """What building one cache key keeps (PyTorch: the symbolic sizes met); ember's fakes have
    static shapes, so nothing."""

    def __init__(self, shape_env=None):
        self.shape_env = shape_env


class _BypassDispatchCache(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def _hashable(value):
    """`value` as a cache key part: a fake by its metadata, a number with its type (1 and 1.0
    are different calls), a sequence by its items."""
    if isinstance(value, FakeTensor):
        if value.constant is not None:
            raise _BypassDispatchCache("constant attribute")
        return extract_tensor_metadata(value)
    if isinstance(value, Tensor):
        raise _BypassDispatchCache("non-fake tensor")
    if isinstance(value, (list, tuple)):
        return (type(value),) + tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _hashable(v)) for k, v in value.items())
    try:
        hash(value)
    except TypeError:
        raise _BypassDispatchCache(f"unhashable argument {type(value).__name__}") from None
    return type(value), value


def _empty_meta(meta):
    import ember
    return ember.empty_strided(meta.shape, meta.stride, dtype=meta.dtype, device="meta")


def _random(func):
    name = func._opname
    return name.startswith(("rand", "normal", "bernoulli", "multinomial", "uniform",
                            "exponential", "geometric", "cauchy", "log_normal", "random",
                            "native_dropout", "dropout"))


def _tensor_args(func, args):
    for i in func._tensor_pos:
        if isinstance(args[i], Tensor):
            yield args[i]
    for i in func._list_pos:
        for t in args[i] or ():
            if isinstance(t, Tensor):
                yield t


def _map_tensor_args(func, args, fn):
    args = list(args)
    for i in func._tensor_pos:
        if isinstance(args[i], Tensor):
            args[i] = fn(args[i])
    for i in func._list_pos:
        if args[i] is not None:
            args[i] = [fn(t) if isinstance(t, Tensor) else t for t in args[i]]
    return tuple(args)


def _map_tensors(out, fn):
    if isinstance(out, Tensor):
        return fn(out)
    if isinstance(out, (list, tuple)):
        items = [_map_tensors(o, fn) for o in out]
        return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
    return out


def _wrap(mode, out, device):
    return _map_tensors(out, lambda t: FakeTensor(mode, t, device))


def _meta_like(t):
    return _map_tensors(t, lambda r: r.to("meta"))


def _common_device(func, fakes):
    """The device of the result: the inputs' one device, where 0-dim CPU tensors go along
    with any device and a meta tensor makes the result meta."""
    common = None
    cpu_scalar_only = True
    for f in fakes:
        d = f.fake_device
        is_cpu_scalar = d.type == "cpu" and f.dim() == 0
        if common is None:
            common, cpu_scalar_only = d, is_cpu_scalar
        elif d == common or is_cpu_scalar:
            continue
        elif cpu_scalar_only or d.type == "meta":
            common, cpu_scalar_only = d, False
        elif common.type == "meta" or func._opname in _DEVICE_INDEPENDENT:
            continue
        else:
            raise RuntimeError(f"Unhandled FakeTensor Device Propagation for {func}, found two "
                               f"different devices {common}, {d}")
    return common


def _call_text(args):
    return "(" + ", ".join(repr(a) for a in args) + ")"


def active_fake_mode():
    """The innermost FakeTensorMode active (PyTorch's detect_fake_mode without inputs), or
    None."""
    from .._core.mode_stack import torch_dispatch_modes
    for mode in reversed(torch_dispatch_modes):
        if isinstance(mode, FakeTensorMode):
            return mode
    return None


class unset_fake_temporarily:
    """Within it, no FakeTensorMode is active (the topmost one is popped and pushed back)."""

    def __enter__(self):
        from .._dispatch import python_dispatch as pd
        self._mode = None
        stack = pd.mode_stack()
        if stack and isinstance(stack[-1], FakeTensorMode):
            self._mode = pd.pop_mode()
        return self._mode

    def __exit__(self, *exc):
        if self._mode is not None:
            from .._dispatch import python_dispatch as pd
            pd.push_mode(self._mode)


class FakeCopyMode(TorchFunctionMode):
    """`copy.deepcopy` inside it copies tensors into fakes of `fake_mode` (a module's
    parameters stay Parameters; tensors that alias stay aliases: one memo)."""

    def __init__(self, fake_mode):
        self.fake_mode = fake_mode

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is Tensor.__deepcopy__:
            tensor, memo = args[0], args[1] if len(args) > 1 else kwargs["memo"]
            if id(tensor) not in memo:
                memo[id(tensor)] = self.fake_mode.from_tensor(tensor)
            return memo[id(tensor)]
        if func is Tensor.clone:   # Parameter.__deepcopy__ clones its data
            return func(self.fake_mode.from_tensor(args[0]), *args[1:], **kwargs)
        return func(*args, **kwargs)
