"""What PyTorch's test_weak / test_futures / test_pytree / test_utils found missing or different,
each compared with torch on the same calls: torch.utils.weak's identity-keyed dict, Future
refusing pickling, torch._assert (plain, traced by fx, and inside jit.script), torch._utils'
render_call / try_import, _utils_internal.deprecated, utils._device.set_device, utils._traceback,
utils.collect_env, fx.immutable_collections, checkpoint's device-state helpers, and pytree's
register_dataclass / register_constant / Enum contexts."""
import copy
import gc
import json
import pickle
import sys
import traceback
import types
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from enum import Enum

import pytest

import ember
import ember.fx
import ember.utils._pytree as epytree
from ember._utils_internal import deprecated as ember_deprecated
from ember.fx.immutable_collections import immutable_dict as e_idict, immutable_list as e_ilist
from ember.utils import _traceback as e_traceback
from ember.utils import checkpoint as e_checkpoint
from ember.utils._device import set_device as e_set_device
from ember.utils.collect_env import get_pretty_env_info
from ember.utils.weak import WeakIdKeyDictionary as EWeak, WeakIdRef as EWeakRef

torch = pytest.importorskip("torch")
import torch.fx  # noqa: E402
import torch.utils._pytree as tpytree  # noqa: E402
from torch._utils_internal import deprecated as torch_deprecated  # noqa: E402
from torch.fx.immutable_collections import immutable_dict as t_idict  # noqa: E402
from torch.fx.immutable_collections import immutable_list as t_ilist  # noqa: E402
from torch.utils import _traceback as t_traceback  # noqa: E402
from torch.utils import checkpoint as t_checkpoint  # noqa: E402
from torch.utils._device import set_device as t_set_device  # noqa: E402
from torch.utils.weak import WeakIdKeyDictionary as TWeak, WeakIdRef as TWeakRef  # noqa: E402


def _outcome(call):
    try:
        return ("ok", call())
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return (type(e).__name__, str(e))


# ---- torch.utils.weak ------------------------------------------------------------------------
def _weak_script(lib, Weak, Ref):
    a, b, c = lib.ones(1), lib.ones(1), lib.zeros(2)
    d = Weak({a: 1, b: 2})
    out = [d[a], d[b], len(d), a in d, c in d, 13 in d, d.get(c, "none")]
    out.append(_outcome(lambda: d[c])[0])
    out.append(_outcome(lambda: d[13])[0])          # an int cannot be weakly referenced
    out.append(_outcome(lambda: d.__delitem__(13))[0])
    out.append(d.setdefault(c, 3))
    out.append(sorted((d | {c: 9}).values()))
    out.append(type(d | {c: 9}).__name__)
    out.append(type({c: 9} | d).__name__)
    out.append(d == Weak({a: 1, b: 2, c: 3}))        # compared by identity, not elementwise
    del b
    gc.collect()
    out.append((len(d), sorted(d.values())))        # b's entry went with b
    out.append(sorted(copy.deepcopy(d).values()))
    key, value = d.popitem()
    out.append((len(d), value in (1, 3)))
    out.append(repr(d).startswith(f"<{type(d).__name__} at 0x"))
    x = lib.ones(1)
    out.append((Ref(x) == Ref(x), hash(Ref(x)) == id(x), Ref(x) == Ref(lib.ones(1))))
    return out


def test_weak_id_key_dictionary_as_torch():
    assert _weak_script(ember, EWeak, EWeakRef) == _weak_script(torch, TWeak, TWeakRef)


def test_weak_dict_iteration_defers_removals():
    # a key dying while items() runs is removed when the walk ends, len() meanwhile right
    for lib, Weak in ((ember, EWeak), (torch, TWeak)):
        keys = [lib.ones(1) for _ in range(4)]
        d = Weak({k: i for i, k in enumerate(keys)})
        it = d.items()
        next(it)
        del keys[1:3]
        gc.collect()
        assert len(d) == 2 and len(d.data) == 4
        list(it)
        assert len(d.data) == 2


# ---- torch.futures ---------------------------------------------------------------------------
def test_future_refuses_pickle_copy_and_save(tmp_path):
    for lib in (ember, torch):
        f = lib.futures.Future()
        for call in (lambda: pickle.dumps(f), lambda: copy.deepcopy(f),
                     lambda: lib.save(f, tmp_path / "f.pt")):
            assert _outcome(call) == ("RuntimeError", "Can not pickle torch.futures.Future")


# ---- torch._assert ---------------------------------------------------------------------------
class _AssertPositive:
    @staticmethod
    def module(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                lib._assert(x.sum() > 0, "foo")
                return x
        return M()


def test_assert_values_and_messages():
    for cond in (True, False, [True], [False]):
        results = [_outcome(lambda: lib._assert(lib.tensor(cond) if isinstance(cond, list)
                                                else cond, "bar")) for lib in (ember, torch)]
        assert results[0] == results[1]
    both = [_outcome(lambda: lib._assert(lib.tensor([True, False]), "bar"))[0]
            for lib in (ember, torch)]
    assert both[0] == both[1] == "RuntimeError"


def test_assert_is_traced_by_fx():
    graphs = []
    for lib in (ember, torch):
        gm = lib.fx.symbolic_trace(_AssertPositive.module(lib))
        graphs.append([(n.op, getattr(n.target, "__name__", str(n.target)), len(n.args))
                       for n in gm.graph.nodes])
        assert _outcome(lambda: gm(lib.zeros(2))) == ("AssertionError", "foo")
    assert graphs[0] == graphs[1]


class _ScriptAssert(torch.nn.Module):
    def forward(self, x):
        torch._assert(x.sum() > 0, "foo")
        return x + torch.ones(2)


class _EmberScriptAssert(ember.nn.Module):
    def forward(self, x):
        ember._assert(x.sum() > 0, "foo")
        return x + ember.ones(2)


def test_jit_script_assert_raises_jit_error():
    for lib, module in ((ember, _EmberScriptAssert()), (torch, _ScriptAssert())):
        scripted = lib.jit.script(module)
        scripted(lib.ones(2))
        with pytest.raises(lib.jit.Error, match="AssertionError: foo") as info:
            scripted(lib.zeros(2))
        assert not isinstance(info.value, RuntimeError)
        assert str(info.value).startswith("The following operation failed in the TorchScript "
                                          "interpreter.")
        # an op's own error keeps its type
        with pytest.raises(RuntimeError, match="must match the size"):
            scripted(lib.ones(3))


# ---- torch._utils, torch._utils_internal ----------------------------------------------------
def test_render_call_and_try_import():
    for args in (([lambda lib: lib.randn(100)], {"dim": 0}),
                 ([lambda lib: lib.randn(100, 100)], {"dim": 0}),
                 ([lambda lib: lib.tensor(1.5)], {})):
        rendered = [lib._utils.render_call(lib.sum, [make(lib) for make in args[0]], args[1])
                    for lib in (ember, torch)]
        assert rendered[0] == rendered[1]
    assert ember._utils.try_import("os") is sys.modules["os"]
    assert ember._utils.try_import("no_such_module_here") is None


def _deprecated_run(deprecated):
    module = types.ModuleType("_utilsmisc_deprecated_probe")
    sys.modules[module.__name__] = module
    try:
        exec("def _api(x, y=15):\n    return x + y\n", module.__dict__)
        assert deprecated()(module._api) is module._api
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            values = (module.api(1, 2), module.api(1), module._api(1, y=2))
        # (torch's message holds a run of spaces from a line continuation: compare words)
        again = " ".join(str(_outcome(lambda: deprecated()(module._api))).split())
        bad = _outcome(lambda: deprecated()(lambda: 0))
        return (values, module.api.__name__, module.api.__qualname__,
                [(w.category.__name__, str(w.message)) for w in caught], again, bad)
    finally:
        del sys.modules[module.__name__]


def test_deprecated_publishes_warning_alias():
    assert _deprecated_run(ember_deprecated) == _deprecated_run(torch_deprecated)


# ---- torch.utils._device, _traceback, collect_env --------------------------------------------
def _device_run(lib, set_device):
    @set_device("meta")
    def f():
        return lib.empty(3, 3)

    @set_device("meta")
    def g():
        yield lib.empty(1)
        yield lib.zeros(2)

    outside = g()
    first = next(outside)
    between = lib.empty(1).device.type     # not meta: the context is on only inside g's code
    return [f().device.type, first.device.type, next(outside).device.type, between,
            lib.empty(1).device.type]


def test_set_device_decorator():
    assert _device_run(ember, e_set_device) == _device_run(torch, t_set_device) == \
        ["meta", "meta", "meta", "cpu", "cpu"]


def test_traceback_helpers():
    source = "def f(x):\n    def g(x):\n        raise RuntimeError  # HEYA\n\n    return g(x) + 1\n"
    for tb in (e_traceback, t_traceback):
        out = {}
        exec(source, {"__compile_source__": source}, out)
        with pytest.raises(RuntimeError) as info:
            with tb.report_compile_source_on_error():
                out["f"](1)
        assert "HEYA" in "".join(traceback.format_tb(info.value.__traceback__))
        try:
            raise ValueError
        except ValueError as e:
            short = tb.format_traceback_short(e.__traceback__)
        assert short.endswith("test_utilsmisc_fixes.py:" + short.split(":")[-1])
        assert short.split(" in ")[-1] == "test_traceback_helpers"


def test_captured_traceback():
    # (torch's first CapturedTraceback.format symbolizes for ~8 s: its behaviour, written down
    # here as traceback.format_list's text of the caller's frames, is checked on ember only)
    for tb in (e_traceback,):
        captured = tb.CapturedTraceback.extract()
        formatted = captured.format()
        assert formatted[-1].startswith(f'  File "{__file__}", line ')
        assert formatted[-1].split("\n")[0].endswith("in test_captured_traceback")
        assert "captured = tb.CapturedTraceback.extract()" in formatted[-1]
        both = tb.CapturedTraceback.format_all([captured, tb.CapturedTraceback.extract()])
        assert len(both) == 2 and both[0] == formatted
        captured.cleanup()
        assert captured.format() == []


def test_collect_env_report():
    text = get_pretty_env_info()
    assert text.count("\n") >= 17
    assert text.startswith(f"PyTorch version: {ember.__version__}\n")


# ---- torch.fx.immutable_collections ----------------------------------------------------------
def test_immutable_collections_as_torch():
    for ours, theirs, value in ((e_ilist, t_ilist, [1, 2]), (e_idict, t_idict, {"a": 1})):
        a, b = ours(value), theirs(value)
        for name in ("__setitem__", "__delitem__", "clear", "pop", "update" if ours is e_idict
                     else "append"):
            args = {"__setitem__": (0, 1), "__delitem__": (0,), "update": ({},),
                    "append": (3,)}.get(name, ())
            assert _outcome(lambda: getattr(a, name)(*args)) == \
                _outcome(lambda: getattr(b, name)(*args))
        assert hash(a) == hash(b)
        assert pickle.loads(pickle.dumps(a)) == a and type(pickle.loads(pickle.dumps(a))) is ours
        leaves, spec = epytree.tree_flatten(ours([ours(value)]) if ours is e_ilist else a)
        rebuilt = epytree.tree_unflatten(leaves, spec)
        assert type(rebuilt) is ours
        t_leaves, _ = tpytree.tree_flatten(theirs([theirs(value)]) if ours is e_ilist else b)
        assert leaves == t_leaves


# ---- torch.utils.checkpoint's device-state helpers -------------------------------------------
def test_checkpoint_device_state_helpers():
    for lib, cp in ((ember, e_checkpoint), (torch, t_checkpoint)):
        assert cp._infer_device_type({"foo": lib.rand(10, device="meta")}) == "meta"
        assert cp._infer_device_type([lib.rand(2)]) == "cpu"
        assert cp.get_device_states({"a": lib.rand(2), "b": [lib.rand(2, device="meta")]}) == \
            ([], [])
        assert cp.DefaultDeviceType.get_device_type() == "cpu"


# ---- pytree ----------------------------------------------------------------------------------
class _Color(Enum):
    RED = 1


def _dataclass_run(pytree, lib):
    @dataclass
    class Data:
        a: object
        b: str = "moo"
        c: object = None
        d: str = field(init=False, default="")

    pytree.register_dataclass(Data)
    try:
        data = Data(lib.tensor(3), "b", None)
        leaves, spec = pytree.tree_flatten(data)
        rebuilt = pytree.tree_map(lambda x: x, data)
        paths = [pytree.keystr(kp) for kp, _ in pytree.tree_flatten_with_path(data)[0]]
        out = [len(leaves), leaves[1], spec.context, rebuilt.b, rebuilt.c, rebuilt.d, paths]
    finally:
        pytree._deregister_pytree_node(Data)
    for names, drop in ((["a", "b"], None), (["a", "b", "c", "d"], None), (["a"], ["b"])):
        out.append(_outcome(lambda: pytree.register_dataclass(Data, field_names=names,
                                                              drop_field_names=drop)))
    out.append(_outcome(lambda: pytree.register_dataclass(type("Plain", (), {}))))
    return out


def test_register_dataclass_as_torch():
    assert _dataclass_run(epytree, ember) == _dataclass_run(tpytree, torch)


def test_register_constant_as_torch():
    @dataclass(frozen=True)
    class Config:
        norm: str

    class NoEq:
        pass

    class NoHash:
        def __eq__(self, other):
            return True

    results = []
    for pytree in (epytree, tpytree):
        pytree.register_constant(Config)
        try:
            leaves, spec = pytree.tree_flatten([Config("l1"), 2])
            results.append((leaves, spec.children()[0].context.value,
                            pytree.tree_unflatten([5], spec),
                            _outcome(lambda: pytree.register_constant(NoEq)),
                            _outcome(lambda: pytree.register_constant(NoHash))))
        finally:
            pytree._deregister_pytree_node(Config)
    assert results[0] == results[1]


def test_enum_contexts_serialize_as_torch():
    trees = [{_Color.RED: 5}, defaultdict(list, {_Color.RED: [1]})]
    for tree in trees:
        texts = [p.treespec_dumps(p.tree_structure(tree)) for p in (epytree, tpytree)]
        assert json.loads(texts[0]) == json.loads(texts[1])
        # a dict's keys come back as members; a defaultdict's stay JSON objects, as in torch
        loaded = [repr(p.treespec_loads(texts[1])) for p in (epytree, tpytree)]
        assert loaded[0] == loaded[1]
    spec = epytree.tree_structure(trees[0])
    assert epytree.treespec_loads(epytree.treespec_dumps(spec)) == spec
    assert _outcome(lambda: epytree.treespec_dumps("random_blurb")) == \
        _outcome(lambda: tpytree.treespec_dumps("random_blurb"))


# ---- factories under `with torch.device("meta")` (test_utils' test_device_mode_ops) -----------
def test_meta_linspace_from_meta_tensors_and_kaiser_window():
    for lib in (ember, torch):
        beta = lib.tensor(2.0, device="meta")
        out = lib.linspace(-beta, beta, 5, device="meta", dtype=lib.float64)
        assert (out.device.type, tuple(out.shape), str(out.dtype)) == \
            ("meta", (5,), "torch.float64")
        with lib.device("meta"):
            window = lib.signal.windows.kaiser(4, sym=True)
        assert (window.device.type, tuple(window.shape), str(window.dtype)) == \
            ("meta", (4,), "torch.float32")
