"""Fixes found running PyTorch's test_stateless, test_namedtuple_return_api,
test_segment_reductions, test_autocast and test_overrides on ember; each compares with torch."""
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
from tests._torch_oracle import check, same_error  # noqa: E402


# ---- functional_call ----------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["script", "trace"])
def test_functional_call_refuses_jitted_modules(kind):
    def call(lib):
        m = lib.nn.Linear(1, 1)
        jitted = lib.jit.script(m) if kind == "script" else lib.jit.trace(m, lib.ones(1, 1))
        lib.func.functional_call(jitted, {"weight": lib.ones(1, 1)}, (lib.ones(1, 1),))
    assert same_error(call)[0] == "RuntimeError"


# ---- torch.return_types are struct sequences ----------------------------------------------------
def test_return_type_is_a_struct_sequence():
    x = np.array([[1., 5.], [3., 2.]], dtype=np.float32)
    ours, theirs = ember.max(ember.tensor(x), 1), torch.max(torch.tensor(x), 1)
    for lib, r in ((ember, ours), (torch, theirs)):
        cls = type(r)
        assert (cls.n_fields, cls.n_sequence_fields, cls.n_unnamed_fields) == (2, 2, 0)
        assert not hasattr(r, "_fields") and cls.__match_args__ == ("values", "indices")
        assert cls([r.values, r.indices]).indices is r.indices      # built from one sequence
        rebuild, args = r.__reduce__()  # what pickle stores
        assert type(rebuild(*args)) is cls and rebuild(*args).values.tolist() == [5.0, 3.0]
    assert pickle.loads(pickle.dumps(theirs)).values.tolist() == [5.0, 3.0]
    assert repr(ours) == repr(theirs)
    for bad in (lambda lib: lib.return_types.max(lib.ones(1), lib.ones(1)),
                lambda lib: lib.return_types.max([1, 2, 3]),
                lambda lib: lib.return_types.max([1])):
        assert same_error(bad)[0] == "TypeError"
    with pytest.raises(TypeError):
        type("Sub", (type(ours),), {})


def test_return_type_is_its_own_pytree_node():
    import torch.utils._pytree as tp
    import ember.utils._pytree as ep
    x = np.array([[1., 5.], [3., 2.]], dtype=np.float32)
    leaves_e, spec_e = ep.tree_flatten(ember.aminmax(ember.tensor(x)))
    leaves_t, spec_t = tp.tree_flatten(torch.aminmax(torch.tensor(x)))
    assert spec_e.type is type(ember.aminmax(ember.tensor(x))) and spec_t.type.__name__ == "aminmax"
    assert ep.is_structseq(ember.aminmax(ember.tensor(x))) and not ep.is_namedtuple(
        ember.aminmax(ember.tensor(x)))
    back = ep.tree_unflatten([t * 2 for t in leaves_e], spec_e)
    assert back.max.tolist() == (torch.aminmax(torch.tensor(x)).max * 2).tolist()


# ---- segment_reduce: PyTorch's gradients for max/min/prod ---------------------------------------
_DATA = np.array([1, np.nan, 3, 4, 5, 5], dtype=np.float64)
_DATA2 = np.array([[1, 1], [np.nan, 1], [3, np.nan], [4, 1], [3, 2], [2, 3]], dtype=np.float64)


@pytest.mark.parametrize("reduce,initial", [("max", 0), ("max", 2), ("min", 1000), ("min", None),
                                            ("prod", None), ("prod", 2), ("mean", 0)])
def test_segment_reduce_values_and_grads(reduce, initial):
    for data in (_DATA, _DATA2):  # NaNs, ties, an empty segment
        check(lambda lib, x: lib.segment_reduce(x, reduce, lengths=lib.tensor([1, 2, 3, 0]),
                                                initial=initial), data)


def test_segment_reduce_messages():
    same_error(lambda lib: lib.segment_reduce(lib.ones(3), "sum"))
    same_error(lambda lib: lib.segment_reduce(lib.ones(3), "foo", lengths=lib.tensor([3])))


# ---- autocast-listed ops ----------------------------------------------------------------------
def test_aten_margin_ranking_loss_broadcasts_functional_checks_ranks():
    a, t = np.random.RandomState(0).randn(4, 4), np.random.RandomState(1).randn(4)
    check(lambda lib, a, t: lib.margin_ranking_loss(a, a * 0.5, t), a, t)
    same_error(lambda lib: lib.nn.functional.margin_ranking_loss(lib.ones(4, 4), lib.ones(4, 4),
                                                                 lib.ones(4)))


def test_nn_nll_loss2d():
    x = np.random.RandomState(0).randn(2, 3, 4, 5)
    target = np.random.RandomState(1).randint(0, 3, (2, 4, 5))
    check(lambda lib, x: lib._C._nn.nll_loss2d(x, lib.tensor(target)), x)
    check(lambda lib, x: lib._C._nn.nll_loss2d(x, lib.tensor(target), reduction=1), x)
    same_error(lambda lib: lib._C._nn.nll_loss2d(lib.ones(2, 3, 4), lib.zeros(2, 4, 5).long()))
    same_error(lambda lib: lib._C._nn.nll_loss2d(lib.ones(2, 3, 4, 5), lib.zeros(2, 4).long()))
    same_error(lambda lib: lib._C._nn.nll_loss2d(lib.ones(2, 3, 4, 5), lib.zeros(2, 4, 6).long()))


# ---- torch.overrides --------------------------------------------------------------------------
def _required_count(lib, fn):
    import inspect
    spec = inspect.getfullargspec(lib.overrides.get_testing_overrides()[fn])
    return len(spec.args) - len(spec.defaults or ())


@pytest.mark.parametrize("name", ["add", "cumsum", "index_select", "eq"])
def test_testing_override_shows_required_parameters(name):
    # PyTorch's generated __torch_function__ tests pass one tensor-like per parameter without
    # a default; ember's NumPy-name sentinel defaults must not hide them
    assert _required_count(ember, getattr(ember, name)) == _required_count(torch,
                                                                           getattr(torch, name))
    assert _required_count(ember, getattr(ember.Tensor, name)) == _required_count(
        torch, getattr(torch.Tensor, name))


def test_tensorless_state_functions_are_ignored_not_overridable():
    names = ["get_autocast_cpu_dtype", "is_autocast_enabled", "clear_autocast_cache",
             "init_num_threads", "is_anomaly_enabled", "get_device_module"]
    ignored_t, ignored_e = torch.overrides.get_ignored_functions(), \
        ember.overrides.get_ignored_functions()
    overridable_e = ember.overrides.get_overridable_functions()[ember]
    for name in names:
        assert getattr(torch, name) in ignored_t
        assert getattr(ember, name) in ignored_e and getattr(ember, name) not in overridable_e


def test_testing_override_of_add_has_torchs_positional_shape():
    import inspect
    for lib in (ember, torch):
        spec = inspect.getfullargspec(lib.overrides.get_testing_overrides()[lib.add])
        assert spec.varargs is None and spec.args[:2] == ["input", "other"]
    assert ember.Tensor.__torch_dispatch__ in ember.overrides.get_ignored_functions()
    assert ember.Tensor.__torch_dispatch__ not in ember.overrides.get_testing_overrides()
