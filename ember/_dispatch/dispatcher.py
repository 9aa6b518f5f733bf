"""The dispatcher: a two-dimensional table, operator x dispatch key.

An operator is *defined* once by a schema string in PyTorch's syntax
(`add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`); kernels are *implemented*
per dispatch key ("CPU", "Meta", later "CUDA"). Calling an op picks the key from its tensor
arguments: if any of them requires grad and grad mode is on, the "Autograd" kernel runs first --
it records the graph node and redispatches to the backend key below it. Above Autograd sits
"AutocastCPU", active inside `ember.autocast("cpu")` for the ops on PyTorch's autocast lists: it
casts their inputs and redispatches below itself (`ember/_aten/autocast.py`). A key with no kernel
falls back to a NotImplementedError naming the op and the key, unless the key has a boxed
fallback: "Lazy" (the lazy device, ember/_lazy) records every op through one. A
"CompositeImplicitAutograd" kernel is written in other ops and serves every key (autograd then
sees the ops it calls).

The hot path (`OpOverload.__call__` -> `_dispatch`) does no signature parsing: positions of the
tensor arguments are computed once, when the schema is parsed.
"""
from types import MethodType

from .._core.autocast_state import _autocast_state
from .._core.grad_mode import _grad_state
from .._core.tensor import Tensor
from .._core import memory_overlap as _memory_overlap
from .._core import torch_function as _tf
from .._core.mode_stack import modes as _modes
from .._core.device import device
from .._core.python_key import PYTHON_KEY
from .._core.math_bits import MathBits, MATH_KEYS
from .schema import Schema

BACKEND_KEYS = ("CPU", "Meta", "CUDA", "Lazy", "SparseCPU", "SparseCsrCPU")
# keys of the function transforms (ember/_functorch): never picked from a tensor's device, so the
# plain path never looks at them; a transform's dispatch mode redispatches to them
TRANSFORM_KEYS = ("FuncTorchBatched",)


class _QualifiedName(str):
    """An op's 'aten::mul.Tensor': a string (ember's `op.name`) that is also callable as
    PyTorch's `OpOverload.name()`."""
    __slots__ = ()

    def __call__(self):
        return str(self)


class OpOverload:
    """One operator: its schema and its row of the dispatch table. Named as PyTorch names its
    OpOverloads (`str(op)` 'aten.mul.Tensor', `op.__name__` 'mul.Tensor', `op.name()`
    'aten::mul.Tensor', `op.__module__` 'torch._ops.aten'), which `__torch_dispatch__`
    handlers read."""

    def __init__(self, schema):
        self.schema = schema
        self.name = _QualifiedName(schema.qualname)
        self._overloadname = schema.overload or "default"
        self._opname = schema.name
        self.namespace = schema.namespace
        self.__name__ = f"{schema.name}.{self._overloadname}"
        self.__qualname__ = schema.qualname     # 'aten::add.Tensor', 'aten::relu' (typename)
        # the name ember's tables and messages print: 'tanh', 'mul.Tensor'
        self.short_name = f"{schema.name}.{schema.overload}" if schema.overload else schema.name
        self.__module__ = f"torch._ops.{schema.namespace}"
        self._table = {}
        self._composite = None
        self.derivative = None
        self.functional = None  # for a derived in-place op (exp_): its out-of-place op (exp)
        self.autocast = None  # its autocast cast policy, if PyTorch lists it (_aten/autocast.py)
        args = schema.arguments
        self._nargs = len(args)
        self._tensor_pos = tuple(i for i, a in enumerate(args) if a.is_tensor)
        self._list_pos = tuple(i for i, a in enumerate(args) if a.is_tensor_list)
        self._device_pos = next((i for i, a in enumerate(args) if a.name == "device"), None)
        self._mutates = bool(schema.is_inplace)
        self._checks_overlap = self._mutates and _memory_overlap.inplace_check_for(schema.name)
        self._is_view = schema.returns_view

    def __deepcopy__(self, memo):
        return self   # one object per operator, as PyTorch's

    def decompose(self, *args, **kwargs):
        """The op run through its CompositeImplicitAutograd kernel, if it has one; else
        NotImplemented (PyTorch's OpOverload.decompose)."""
        if self._composite is None:
            return NotImplemented
        return self._composite(*args, **kwargs)

    def __reduce__(self):
        # pickled by name (a pickled fx graph holds ops as call targets)
        return (_op_by_name, (self.namespace, self._opname, self._overloadname))

    def __repr__(self):
        return (f"<OpOverload(op='{self.namespace}.{self._opname}', "
                f"overload='{self._overloadname}')>")

    def __str__(self):
        return f"{self.namespace}.{self.__name__}"

    # handlers registered with torch.library.register_torch_dispatch: {class: fn}
    _torch_dispatch_rules = {}

    @property
    def _schema(self):  # PyTorch's name for it
        return self.schema

    @property
    def overloadpacket(self):
        return _packets[(self.namespace, self._opname)]

    @property
    def is_view(self):
        return self._is_view

    # the torch.Tag list its definition gave (Library.define(tags=...)); aten ops are all
    # pt2_compliant_tag, as PyTorch's codegen marks them
    _tags = ()
    _defined_in_python = False   # True for an op a torch.library.Library defined

    @property
    def tags(self):
        from .tags import Tag
        return [Tag.pt2_compliant_tag] if self.namespace == "aten" else list(self._tags)

    def __get__(self, obj, objtype=None):
        # an op stored on a class binds like a function: Tensor.__mul__ = mul op
        return self if obj is None else MethodType(self, obj)

    def __call__(self, *args, **kwargs):
        if kwargs or len(args) != self._nargs:
            args = self.schema.bind(args, kwargs, self.__name__)
        if _modes:
            return call_in_modes(self, args, len(_modes) - 1)
        return self._dispatch(args)

    def call_positional(self, *args):
        """The call with every argument given, positionally and in schema order, as the
        generated bindings and the Tensor operators make it. A bound method: calling it skips
        what calling the op object costs Python (the `__call__` lookup, packing **kwargs)."""
        if _modes:
            return call_in_modes(self, args, len(_modes) - 1)
        return self._dispatch(args)

    def _key_and_grad(self, args):
        """The backend key of the tensor arguments, and whether any of them requires grad."""
        key = None
        grad = False
        values, positions = args, self._tensor_pos  # no list built without a Tensor[] argument
        if self._list_pos:
            values = [args[i] for i in positions] + [t for i in self._list_pos for t in args[i]]
            positions = range(len(values))
        for i in positions:
            a = values[i]
            if isinstance(a, Tensor):
                if a._rg:
                    grad = True
                k = a._device._key if a._sparse is None else _sparse_key(a)
                if key is None:
                    key = k
                elif key is not k and key != k:
                    key = self._mixed_key(key, k, a, args)
        return key or self._default_key(args), grad

    def _default_key(self, args):
        """The key of an op called without tensors: its `device` argument's, else CPU."""
        dp = self._device_pos
        if dp is not None and args[dp] is not None:
            d = args[dp]
            return (d if type(d) is device else device(d))._key
        return "CPU"

    def _mixed_key(self, key, k, a, args):
        """Tensors on two devices: 0-dim CPU tensors go along with the others (as a wrapped
        number does in PyTorch); anything else is an error. copy_ copies between devices: the
        destination's backend runs it."""
        if key in MATH_KEYS or k in MATH_KEYS:  # the bits' keys are above all others, Negative first
            return key if key == "Negative" or k not in MATH_KEYS else k
        if "Python" in (key, k):   # the Python key is above every backend's
            return "Python"
        if self.name == "aten::copy_":
            return args[0]._device._key
        if k == "CPU" and not a.ndim:
            return key
        if k == "CPU" and self.name in _INDICES_ANYWHERE and any(a is i for i in args[1] or ()):
            return key   # indexing takes CPU indices for a tensor on any device
        if {key, k} == _META_AND_CPU and self.name in _META_LOOKUP_WITH_CPU_INDICES:
            return "Meta"   # PyTorch's meta lookups do not check their indices' device
        sparse = _SPARSE_MIX.get(frozenset((key, k)))
        if sparse is not None:
            return sparse
        tensors = [args[i] for i in self._tensor_pos]
        for i in self._list_pos:
            tensors.extend(args[i])
        if "CPU" in (key, k) and _only_scalars_on("CPU", tensors):
            return k if key == "CPU" else key
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            f"{key.lower()} and {k.lower()}! (when checking arguments for {self.__name__})")

    def _dispatch(self, args):
        if self.autocast is not None and _autocast_state.cpu:
            return _fallbacks["AutocastCPU"](self, args)
        if self._composite is not None:
            return self._composite(*args)
        if self._list_pos:
            key, grad = self._key_and_grad(args)
        else:  # _key_and_grad written out, for the commonest call
            key = None
            grad = False
            for i in self._tensor_pos:
                a = args[i]
                if isinstance(a, Tensor):
                    if a._rg:
                        grad = True
                    k = a._device._key if a._sparse is None else _sparse_key(a)
                    if key is None:
                        key = k
                    elif key is not k and key != k:  # (`!=` of a str and None is slow)
                        key = self._mixed_key(key, k, a, args)
            if key is None:
                key = self._default_key(args)
        if grad and _grad_state.enabled:
            return _fallbacks["Autograd"](self, key, args)
        kernel = self._table.get(key)
        if kernel is None or self._mutates:
            return self.redispatch(key, args)
        return kernel(*args)

    def _dispatch_to_python(self, args):
        """_dispatch for a call a TorchDispatchMode sees: the keys above Python run as usual
        (autocast, a composite's decomposition, autograd), then the Python key's fallback
        instead of the backend kernel (ember/_dispatch/python_dispatch.py)."""
        if self.autocast is not None and _autocast_state.cpu:
            return _fallbacks["AutocastCPU"](self, args)
        if self._composite is not None:
            return self._composite(*args)
        _, grad = self._key_and_grad(args)
        if grad and _grad_state.enabled:
            return _fallbacks["Autograd"](self, "Python", args)
        return _fallbacks["Python"](self, "Python", args)

    def redispatch(self, key, args):
        """Run the kernel for a backend key (what the Autograd kernel calls below itself)."""
        kernel = self._table.get(key)
        if kernel is None:
            return self._fallback(key, args)
        if self._mutates:
            if args[0]._inference and not _grad_state.inference:
                raise RuntimeError(
                    "Inplace update to inference tensor outside InferenceMode is not allowed."
                    "You can make a clone to get a normal tensor before doing inplace update."
                    "See https://github.com/pytorch/rfcs/pull/17 for more details.")
            if self._checks_overlap:
                self._checks_overlap(args)
            out = kernel(*args)
            args[0]._storage_()._version += 1
            return out
        return kernel(*args)

    def _fallback(self, key, args):
        fallback = _fallbacks.get(key)
        if fallback is not None:
            return fallback(self, key, args)
        raise self.no_kernel_error(key)

    def no_kernel_error(self, key):
        """PyTorch's error for an op that has no kernel for a dispatch key."""
        return NotImplementedError(
            f"Could not run '{self.name}' with arguments from the '{key}' backend. "
            f"'{self.name}' is only available for these backends: "
            f"[{', '.join(sorted(self._table)) or 'none'}].")

    def has_kernel_for(self, key):
        return key in self._table or self._composite is not None


def _sparse_key(t):
    """The key of a tensor whose `_sparse` is set: a COO tensor holds a tuple, a compressed one
    its CompressedParts; a Tensor subclass with `__torch_dispatch__` has the Python key's mark;
    a tensor with the conjugate or negative bit, its MathBits (ember/_core/math_bits.py)."""
    if t._sparse is PYTHON_KEY:
        return "Python"
    if type(t._sparse) is MathBits:
        return t._sparse.key
    return "SparseCPU" if type(t._sparse) is tuple else "SparseCsrCPU"


# a sparse tensor with dense CPU ones runs its layout's kernel; a COO tensor with a compressed
# one, the compressed layout's
_SPARSE_MIX = {frozenset(("SparseCPU", "CPU")): "SparseCPU",
               frozenset(("SparseCsrCPU", "CPU")): "SparseCsrCPU",
               frozenset(("SparseCPU", "SparseCsrCPU")): "SparseCsrCPU"}


# ops whose indices (argument 1, a Tensor?[]) may be on the CPU whatever self's device
_INDICES_ANYWHERE = frozenset(("aten::index.Tensor", "aten::index_put", "aten::index_put_",
                               "aten::_index_put_impl_"))
_META_AND_CPU = {"Meta", "CPU"}
_META_LOOKUP_WITH_CPU_INDICES = frozenset((
    "aten::embedding", "aten::embedding_bag", "aten::embedding_bag.padding_idx",
    "aten::_embedding_bag", "aten::_embedding_bag_forward_only", "aten::index_select"))


def _only_scalars_on(key, tensors):
    """Whether every tensor on `key`'s device is 0-dim."""
    return all(not isinstance(t, Tensor) or t.ndim == 0 or t._device._key != key
               for t in tensors)


def _op_by_name(namespace, name, overload=None):
    """Unpickling an op: `ember.ops.<namespace>.<name>[.<overload>]`."""
    packet = _packets[(namespace, name)]
    return packet if overload is None else getattr(packet, overload)


# packet -> the `.out` overload of an op declared with the `out` variant, or None: set by
# ember/_bindings/out.py, which holds PyTorch's out= semantics
OUT_OVERLOAD = None


class OpOverloadPacket:
    """`ember.ops.aten.add`: all overloads of one name; `.Tensor` picks one, a call tries each."""

    def __init__(self, namespace, name):
        self._namespace, self._name = namespace, name
        self._overloads = {}
        self.__name__ = name

    def __getattr__(self, overload):
        found = self.__dict__.get("_overloads", {}).get(overload)
        if found is None and overload == "out" and OUT_OVERLOAD is not None:
            found = OUT_OVERLOAD(self)  # made by the bindings' out= machinery, once
            if found is not None:
                self.__dict__["out"] = found
        if found is None:
            raise AttributeError(f"'{self.__dict__.get('_namespace')}.{self.__dict__.get('_name')}'"
                                 f" has no overload '{overload}'")
        return found

    @property
    def op(self):
        """The packet's callable (PyTorch's underlying builtin operator), in its module."""
        return self.__call__

    def __deepcopy__(self, memo):
        return self   # one object per operator, as PyTorch's (an OpInfo's asdict copies it)

    def __reduce__(self):
        return (_op_by_name, (self._namespace, self._name))

    def overloads(self):
        return list(self._overloads)

    def __call__(self, *args, **kwargs):
        # as PyTorch's torch.ops calls, a packet's call meets `__torch_function__` (a subclass's
        # or a mode's) before it picks an overload
        for a in (*args, *kwargs.values()):
            if type(a) not in _tf.FAST_ARGS:
                result = _tf.torch_function_dispatch(self, (*args, *kwargs.values()), args,
                                                     kwargs, skip_exact=Tensor)
                if result is not _tf.NOT_HANDLED:
                    return result
                break
        ops = list(self._overloads.values())
        if len(ops) == 1:
            return ops[0](*args, **kwargs)
        errors = []
        for op in ops:
            try:
                bound = op.schema.bind(args, kwargs, op.short_name)
            except RuntimeError as e:
                errors.append(str(e))
                continue
            if _matches(op.schema, bound):
                return op(*bound)
        raise TypeError(f"{self._namespace}.{self._name}() received an invalid combination of "
                        f"arguments; tried: {[o.schema.text for o in ops]}")

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._namespace}.{self._name}')>"

    def __str__(self):
        return f"{self._namespace}.{self._name}"


def _matches(schema, bound):
    for a, v in zip(schema.arguments, bound):
        is_t = isinstance(v, Tensor)
        if a.type == "Tensor" and not is_t:
            return False
        if a.type in ("Scalar", "int", "float") and is_t:
            return False
    return True


# ---- the registry -------------------------------------------------------------------------
_registry = {}          # qualified name -> OpOverload
_packets = {}           # (namespace, name) -> OpOverloadPacket
_fallbacks = {}         # key -> boxed fallback fn(op, key, args)


def define(schema_text, namespace="aten"):
    schema = Schema(schema_text, namespace)
    if schema.qualname in _registry:
        raise RuntimeError(f"operator {schema.qualname} is already defined")
    op = OpOverload(schema)
    _registry[schema.qualname] = op
    packet = _packets.get((namespace, schema.name))
    if packet is None:
        packet = _packets[(namespace, schema.name)] = OpOverloadPacket(namespace, schema.name)
    packet._overloads[schema.overload or "default"] = op
    return op


def lookup(name, namespace="aten"):
    """An op by 'name.overload' (or 'ns::name.overload')."""
    if "::" in name:
        namespace, name = name.split("::")
    base, _, overload = name.partition(".")
    qual = f"{namespace}::{base}" + (f".{overload}" if overload else "")
    op = _registry.get(qual)
    if op is None:
        raise RuntimeError(f"no operator named {qual}")
    return op


_looked_up = {}


def cached_lookup(name):
    """lookup(name) remembered, for code that names aten ops at call time (vmap, forward AD)."""
    op = _looked_up.get(name)
    if op is None:
        op = _looked_up[name] = lookup(name)
    return op


def register_kernel(op, key, fn):
    if key == "CompositeImplicitAutograd":
        op._composite = fn
    elif key in BACKEND_KEYS or key in TRANSFORM_KEYS:
        op._table[key] = fn
    else:
        raise ValueError(f"unknown dispatch key {key!r}; expected one of "
                         f"{BACKEND_KEYS + TRANSFORM_KEYS + ('CompositeImplicitAutograd',)}")


def impl(name, key, namespace="aten"):
    """Decorator: register `fn` as the kernel of op `name` for dispatch key `key`."""
    op = lookup(name, namespace) if isinstance(name, str) else name

    def deco(fn):
        keys = (key,) if isinstance(key, str) else key
        for k in keys:
            register_kernel(op, k, fn)
        return fn
    return deco


def register_fallback(key, fn):
    _fallbacks[key] = fn


def packets(namespace):
    return {name: p for (ns, name), p in _packets.items() if ns == namespace}


# ---- Python dispatch modes ------------------------------------------------------------------
# Code that must see every op call -- `ember.explain()` recording the dispatcher's choices,
# `inference_mode` marking the tensors it makes -- pushes a mode here (PyTorch's
# TorchDispatchMode stack). With no mode active, `OpOverload.__call__` pays one list check.
# An entry is a callable `entry(op, args, level)`; a TorchDispatchMode's is a
# python_dispatch.ModeEntry, which runs the keys above Python first.


def call_in_modes(op, args, level):
    """Run `op` through the mode at `level` of the stack; each mode continues at level - 1,
    and below the last mode is the dispatcher itself."""
    if level < 0:
        return op._dispatch(args)
    return _modes[level](op, args, level)
