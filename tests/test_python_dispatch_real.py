"""Behaviours from PyTorch's test/test_python_dispatch.py, each written once and run on ember and
on torch: the two must give the same result or raise the same exception with the same message.

`both(case)` calls `case(lib)` with lib = torch, then ember; `case` returns something comparable
(types are compared by name, tensors as lists) or raises.
"""
import copy

import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
import ember.testing._internal.logging_tensor as ember_logging  # noqa: E402
import torch.testing._internal.logging_tensor as torch_logging  # noqa: E402
from ember.utils import _python_dispatch as ember_pd  # noqa: E402
from torch.utils import _python_dispatch as torch_pd  # noqa: E402

LOGGING = {torch: torch_logging, ember: ember_logging}
PD = {torch: torch_pd, ember: ember_pd}


def _outcome(case, lib):
    try:
        return "ok", _plain(case(lib))
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return type(e).__name__, str(e)


def _plain(v):
    if isinstance(v, (list, tuple)):
        return type(v).__name__, [_plain(x) for x in v]
    if isinstance(v, type):
        return "type", v.__name__
    if isinstance(v, (torch.dtype, ember.dtype)):
        return str(v)
    if isinstance(v, (torch.Tensor, ember.Tensor)):
        return type(v).__name__, str(v.dtype), v.detach().tolist() if _is_plain(v) else None
    return v


def both(case):
    expected = _outcome(case, torch)
    got = _outcome(case, ember)
    assert got == expected
    return got


def _is_plain(t):
    return type(t).__torch_dispatch__ in (torch.Tensor.__torch_dispatch__,
                                          ember.Tensor.__torch_dispatch__)


# ---- creating subclass instances ---------------------------------------------------------------
def _plain_subclass(lib):
    class Foo(lib.Tensor):
        pass
    return Foo


@pytest.mark.parametrize("how", ["make_subclass", "as_subclass", "constructor"])
def test_subclass_of_a_handler_result_is_refused(how):
    def case(lib):
        Foo = _plain_subclass(lib)
        lt = LOGGING[lib].LoggingTensor(lib.rand(2))
        if how == "make_subclass":
            return lib.Tensor._make_subclass(Foo, lt)
        if how == "as_subclass":
            return lt.as_subclass(Foo)
        return Foo(lt)
    assert both(case)[0] == "RuntimeError"


def test_wrapper_subclass_without_handler_is_a_type_error():
    assert both(lambda lib: lib.Tensor._make_wrapper_subclass(_plain_subclass(lib), (2, 2)))[0] \
        == "TypeError"


def test_mode_with_classmethod_handler_is_refused():
    def case(lib):
        class A(PD[lib].TorchDispatchMode):
            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        x = lib.tensor(5.)
        with A():
            return x + x
    assert both(case)[0] == "RuntimeError"


# ---- deepcopy of subclasses ----------------------------------------------------------------------
def test_deepcopy_non_wrapper_subclass_needs_new_empty_of_its_type():
    def case(lib, new_empty=None):
        body = {} if new_empty is None else {"new_empty": new_empty}
        Sub = type("Sub", (lib.Tensor,), body)
        return type(copy.deepcopy(Sub(3)))
    assert both(case)[0] == "RuntimeError"
    assert both(lambda lib: case(lib, lambda self, shape: lib.Tensor(shape)))[0] == "RuntimeError"
    assert both(lambda lib: case(lib, lambda self, shape: type(self)(shape))) == ("ok", ("type", "Sub"))


def test_deepcopy_wrapper_subclass_needs_clone_of_its_type():
    def case(lib):
        class W(lib.Tensor):
            @staticmethod
            def __new__(cls, elem):
                r = lib.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype)
                r.elem = elem
                return r

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                if func.overloadpacket.__name__ == "clone":
                    return args[0].elem.clone()
                raise RuntimeError("NYI")
        return copy.deepcopy(W(lib.randn(3)))
    assert both(case)[0] == "RuntimeError"
    # a LoggingTensor's clone is a LoggingTensor: the copy keeps the type and the values
    lt = both(lambda lib: copy.deepcopy(LOGGING[lib].LoggingTensor(lib.ones(2))).elem)
    assert lt == ("ok", ("Tensor", "torch.float32", [1.0, 1.0]))


# ---- torch._C dispatcher bindings ----------------------------------------------------------------
def test_dispatcher_python_bindings():
    def case(lib):
        sin = lib._C._dispatch_find_schema_or_throw("aten::sin", "")
        x = lib.tensor([0.0, 0.5])
        with lib._C._EnablePythonDispatcher():
            y = lib._C._dispatch_call_boxed(sin, x)
        return y, lib._C._dispatch_isTensorSubclassLike(x), \
            lib._C._dispatch_isTensorSubclassLike(LOGGING[lib].LoggingTensor(x))
    assert both(case)[0] == "ok"


# ---- torch.library.Library ---------------------------------------------------------------------
def test_library_kind_and_reserved_namespace():
    assert both(lambda lib: lib.library.Library("pydisp_ns", "BLA")) == \
        ("ValueError", "Unsupported kind: BLA")
    assert both(lambda lib: lib.library.Library("prim", "FRAGMENT"))[0] == "ValueError"


def test_library_impl_checks_its_arguments():
    def not_callable(lib):
        return lib.library.Library("aten", "IMPL").impl(lib.ops.aten.neg.default, [], "CPU")

    def other_namespace(lib):
        my_lib = lib.library.Library("pydisp_other", "DEF")
        try:
            my_lib.define("neg(Tensor self) -> Tensor")
            my_lib.impl(lib.ops.aten.neg.default, lambda x: x, "CPU")
        finally:
            my_lib._destroy()

    def other_key(lib):
        return lib.library.Library("aten", "IMPL", "CPU").impl("neg", lambda x: x, "Conjugate")

    assert both(not_callable)[0] == "TypeError"
    assert both(other_namespace)[0] == "RuntimeError"
    assert both(other_key)[0] == "RuntimeError"


def test_library_kernels_last_as_long_as_their_library():
    def case(lib):
        x = lib.tensor([1.0, -2.0])
        seen = []
        lib1, lib2 = lib.library.Library("aten", "IMPL"), lib.library.Library("aten", "IMPL")
        lib1.impl("neg", lambda t: t * 10, "CPU")
        seen.append(lib.neg(x))
        lib2.impl("aten::neg", lambda t: t * 100, "CPU")
        seen.append(lib.neg(x))
        del lib1   # lib2's kernel stays
        seen.append(lib.neg(x))
        del lib2   # the built-in one is back
        seen.append(lib.neg(x))
        return seen

    def new_op(lib):
        my_lib = lib.library.Library("pydisp_new", "FRAGMENT")
        my_lib.define("twice(Tensor self) -> Tensor")
        lib.library.impl(my_lib, "twice", "CPU")(lambda t: t * 2)
        out = lib.ops.pydisp_new.twice(lib.tensor([1, 2]))
        del my_lib   # the op is gone with its library
        return out, hasattr(lib.ops.pydisp_new, "twice")

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # PyTorch warns of the overridden kernels
        assert both(case)[0] == "ok"
    assert both(new_op)[0] == "ok"


# ---- what a __torch_dispatch__ handler sees ------------------------------------------------------
def _counting_subclass(lib, seen):
    class SubTensor(lib.Tensor):
        __torch_function__ = lib._C._disabled_torch_function_impl

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return super().__torch_dispatch__(func, types, args, kwargs)
    return SubTensor


def test_data_and_set_go_through_the_handler():
    def case(lib):
        seen = []
        x = _counting_subclass(lib, seen)(lib.zeros(2))
        d = x.data                       # aten.detach
        x.data = lib.ones(2)             # no op
        x.set_(lib.full((3,), 2.0))      # aten.set_.source_Tensor
        v = x._version
        x.data.add_(1)                   # .data has a version counter of its own
        return seen, type(d), type(x), v == x._version, x.shape
    assert both(case)[0] == "ok"


def test_set_is_seen_by_a_dispatch_mode():
    def case(lib):
        seen = []

        class Mode(PD[lib].TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(str(func))
                return func(*args, **(kwargs or {}))
        x, y = lib.zeros(2), lib.ones(4)
        with Mode():
            x.set_(y)
        return seen, x
    assert both(case)[0] == "ok"


def test_index_holding_torch_function_subclasses_calls_their_override():
    def case(lib):
        calls = []

        class T(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                calls.append((func.__name__, len(args)))
                return "handled"
        a = lib.rand(3)
        got = [a[[T(), T()]], a[(slice(None), T())]]
        a[[T(), T()]] = 1
        return got, calls
    assert both(case)[0] == "ok"


# ---- factories that read a tensor ----------------------------------------------------------------
_LIKE_CALLS = [
    lambda lib, t: lib.empty_like(t), lambda lib, t: lib.full_like(t, 1.0),
    lambda lib, t: lib.rand_like(t), lambda lib, t: lib.randn_like(t),
    lambda lib, t: lib.randint_like(t, 3), lambda lib, t: lib.randint_like(t, 1, 3),
    lambda lib, t: t.new_ones(3), lambda lib, t: t.new_zeros((2,)),
    lambda lib, t: t.new_empty(2, dtype=lib.int64), lambda lib, t: t.new_full((2,), 5),
    lambda lib, t: t.new_zeros(()), lambda lib, t: t.new_empty([]), lambda lib, t: t.new_full([], 1),
]


def test_factories_reading_a_subclass_go_to_its_handler():
    def case(lib, call):
        seen = []

        class MyTensor(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                seen.append((str(func), len(args), sorted(kwargs or {})))
                return MyTensor(3)
        return type(_LIKE_CALLS[call](lib, MyTensor(2))), seen
    for call in range(len(_LIKE_CALLS)):
        assert both(lambda lib: case(lib, call))[1][1][0] == ("type", "MyTensor")


@pytest.mark.parametrize("name", ["zeros_like", "ones_like"])
def test_zeros_and_ones_like_of_a_subclass_are_its_handlers(name):
    # (ember's handler sees these as aten.full_like, their decomposition; PyTorch's, whole)
    def case(lib):
        class MyTensor(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                return MyTensor(3)
        return type(getattr(lib, name)(MyTensor(2)))
    assert both(case) == ("ok", ("type", "MyTensor"))


def test_factories_reading_a_tensor_are_seen_by_a_mode():
    def case(lib, call):
        seen = []

        class Mode(PD[lib].TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append((str(func), [a for a in args if not isinstance(a, lib.Tensor)],
                             {k: str(v) for k, v in (kwargs or {}).items()}))
                return func(*args, **(kwargs or {}))
        t = lib.ones(2, dtype=lib.float64)
        with Mode():
            out = _LIKE_CALLS[call](lib, t)
        return seen, out.shape, out.dtype
    for call in range(len(_LIKE_CALLS)):
        assert both(lambda lib: case(lib, call))[0] == "ok"


# ---- torch.Stream through the dispatcher ---------------------------------------------------------
def test_stream_objects():
    def case(lib):
        s = lib.Stream(stream_id=1, device_index=2, device_type=3)
        return (repr(s), str(s.device), s.stream_id, s == lib.Stream(stream_id=1, device_index=2,
                                                                      device_type=3),
                repr(lib.Stream()), lib.Stream().query())
    assert both(case)[0] == "ok"
    assert both(lambda lib: lib.Stream(stream_id=1, device_index=2, device_type=3).query())[0] \
        == "RuntimeError"


def test_record_stream_is_an_op_a_mode_sees():
    def case(lib):
        t, s = lib.tensor(5.), lib.Stream(stream_id=1, device_index=2, device_type=3)
        seen = []

        class Mode(PD[lib].TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append((func.name(), repr(args[1])))
        with Mode():
            result = t.record_stream(s)
        return seen, result
    assert both(case)[0] == "ok"
    # (the message's middle differs: ember's names no build options)
    for lib in (torch, ember):
        assert _outcome(lambda lib: lib.tensor(5.).record_stream(lib.Stream()), lib)[0] == \
            "NotImplementedError"


def test_custom_op_returning_a_stream():
    def case(lib):
        l_def = lib.library.Library("pydisp_stream", "DEF")
        l_impl = lib.library.Library("pydisp_stream", "IMPL", "CPU")
        try:
            l_def.define("return_stream(Tensor self) -> Stream")
            l_impl.impl("return_stream", lambda _: lib.Stream(stream_id=0, device_index=1,
                                                               device_type=2))
            return repr(lib.ops.pydisp_stream.return_stream(lib.tensor(5.)))
        finally:
            l_impl._destroy()
            l_def._destroy()
    assert both(case)[0] == "ok"


# ---- dispatch_sizes_strides_policy="strides": metadata queries ask the handler -----------------
def _policy_tensor(lib, answers, seen, wrapper):
    class Example(lib.Tensor):
        @staticmethod
        def __new__(cls, data):
            if wrapper:
                return lib.Tensor._make_wrapper_subclass(
                    cls, data.size(), dtype=data.dtype, device=data.device,
                    dispatch_sizes_strides_policy="strides")
            return lib.Tensor._make_subclass(cls, data, False,
                                             dispatch_sizes_strides_policy="strides")

        @classmethod
        def __torch_dispatch__(cls, func, types, args, kwargs):
            name = str(func)
            seen.append((name, [str(a) for a in args[1:]]))
            return answers.get(name)
    return Example(lib.randn(6, 2))


@pytest.mark.parametrize("wrapper", [False, True])
def test_strides_policy_asks_the_handler(wrapper):
    def case(lib, answers):
        seen = []
        e = _policy_tensor(lib, answers, seen, wrapper)
        out = [e.is_contiguous(), e.is_contiguous(memory_format=lib.channels_last), e.stride(),
               e.stride(0), lib.ops.aten.is_strides_like_format.default(e, lib.channels_last),
               lib.ops.aten.is_non_overlapping_and_dense.default(e)]
        return out, seen
    assert both(lambda lib: case(lib, {}))[0] == "ok"   # None: the tensor's own geometry
    custom = {"aten.is_contiguous.default": False, "aten.sym_stride.default": (4, 2),
              "aten.is_non_overlapping_and_dense.default": False}
    assert both(lambda lib: case(lib, custom))[0] == "ok"


def test_factories_reading_a_tensor_under_vmap_batch_without_warnings():
    import warnings

    def case(lib):
        x = lib.arange(8.).reshape(4, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("error")   # no "batching rule not implemented" fallback
            return [lib.func.vmap(f)(x) for f in (
                lambda t: t.new_ones(3) * t.sum(), lambda t: t.new_zeros(()) + t.sum(),
                lambda t: t.new_full((2,), 2.) * t, lambda t: lib.empty_like(t).fill_(1) * t,
                lambda t: lib.zeros_like(t) + t, lambda t: lib.ones_like(t) * t)]
    assert both(case)[0] == "ok"
