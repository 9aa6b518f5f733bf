"""The legacy tensor types: `torch.FloatTensor`, `torch.LongTensor`, ... — one per dtype, named as
`Tensor.type()` names tensors. Not subclasses of Tensor but instances of a metaclass (PyTorch's
`torch.tensortype`): `isinstance(x, torch.FloatTensor)` asks whether x is a float32 CPU tensor,
and calling one is the legacy constructor in that dtype (`torch.LongTensor([1, 2])`,
`torch.FloatTensor(2, 3)` uninitialized). The `torch.cuda.*` ones exist but cannot be built here."""
from .._core.dtype import LEGACY_TYPE_NAMES, get_default_dtype
from .._core.python_key import PYTHON_KEY
from .._core.tensor import Tensor


def tensor_new(cls, *args, **kwargs):
    """`Tensor.__new__`: `torch.Tensor(...)` and a subclass's `Sub(...)` are the legacy
    constructor in the default dtype, on the CPU; `Sub(t)` views a tensor as the subclass."""
    if args and isinstance(args[0], Tensor) and cls is not Tensor:
        if args[0]._sparse is PYTHON_KEY:
            from .tensor_methods import check_unowned
            check_unowned(args[0], cls)
        return args[0]._as_subclass(cls)
    from .factories import legacy_construct
    t = legacy_construct(get_default_dtype(), kwargs.pop("device", None), args, kwargs,
                         form="base")
    return t if cls is Tensor else t._as_subclass(cls)  # a subclass built from sizes


class tensortype(type):
    """The metaclass: each legacy type is one of these, carrying its dtype and whether it is CUDA."""

    def __new__(mcls, name, bases, namespace):
        for base in bases:   # as PyTorch's C types, the legacy types cannot be subclassed
            if isinstance(base, tensortype):
                raise TypeError(f"type '{base.__module__}.{base.__name__}' is not an acceptable "
                                f"base type")
        return super().__new__(mcls, name, bases, namespace)

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and (obj.device.type == "cuda") == cls.is_cuda)

    def __call__(cls, *args, device=None, **kwargs):
        if cls.is_cuda:
            raise TypeError(f"type {cls.__module__}.{cls.__name__} not available. Torch not "
                            f"compiled with CUDA enabled.")
        from .factories import legacy_construct
        return legacy_construct(cls.dtype, device, args, kwargs)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _make(module, is_cuda):
    types = {}
    for dtype, name in LEGACY_TYPE_NAMES.items():
        if dtype.is_complex:
            continue  # torch has no ComplexFloatTensor constructor type
        t = tensortype(name, (), {"dtype": dtype, "is_cuda": is_cuda, "is_xpu": False,
                                  "is_sparse": False})
        t.__module__ = module
        types[name] = t
    return types


CPU_TYPES = _make("torch", False)
CUDA_TYPES = _make("torch.cuda", True)
