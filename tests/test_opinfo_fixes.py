"""What PyTorch's OpInfo database (torch.testing._internal.common_methods_invocations) needs from
ember, compared with torch: the torch._foreach_* functions, torch._refs as ember's own ops, the
dtype bookkeeping of torch._prims_common, the vendored version parser, the harness helpers
(TrackedInputIter, is_iterable_of_tensors, _group_tensors_by_device_and_dtype), the ops the
database names (segment_reduce, _safe_softmax, hash_tensor, ...), and -- in a subprocess under
`python -m ember` -- that the database itself imports with torch's op names."""
import copy
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _values(x):
    if isinstance(x, (list, tuple)):
        return [type(x).__name__] + [_values(v) for v in x]
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        values = np.round(x.detach().double().numpy(), 5).astype(object)
        values = np.where(values != values, "nan", values).tolist() \
            if x.dtype.is_floating_point else x.tolist()
        return str(x.dtype).split(".")[1], tuple(x.shape), values
    return x


def _same(fn):
    """fn(lib) in ember and torch: equal values, dtypes, shapes, or the same exception."""
    out = []
    for lib in (ember, torch):
        try:
            out.append(_values(fn(lib)))
        except Exception as e:  # noqa: BLE001 -- the exception is the result compared
            out.append((type(e).__name__, str(e)))
    assert out[0] == out[1]


# ---- torch._foreach_* ------------------------------------------------------------------------
def _lists(m):
    return ([m.arange(1., 4.), m.arange(2., 6.).reshape(2, 2)],
            [m.full((3,), 2.), m.full((2, 2), 3.)])


@pytest.mark.parametrize("call", [
    lambda m, a, b: m._foreach_add(a, b, alpha=2),
    lambda m, a, b: m._foreach_add(a, [1, 2]),
    lambda m, a, b: m._foreach_mul(a, m.tensor(2.)),
    lambda m, a, b: m._foreach_pow(2., a),
    lambda m, a, b: m._foreach_maximum(a, 2.5),
    lambda m, a, b: m._foreach_minimum(a, b),
    lambda m, a, b: m._foreach_addcmul(a, a, b, [1, 2]),
    lambda m, a, b: m._foreach_addcdiv(a, a, b, m.tensor([1., 2.])),
    lambda m, a, b: m._foreach_lerp(a, b, b),
    lambda m, a, b: m._foreach_norm(a, 1),
    lambda m, a, b: m._foreach_max(a),
    lambda m, a, b: m._foreach_powsum(a, 3),
    lambda m, a, b: m._foreach_sqrt(a),
    lambda m, a, b: m._foreach_clamp_min(a, [2, 3]),
    lambda m, a, b: m._foreach_add([], 1),
    lambda m, a, b: m._foreach_add(a, b[:1]),
    lambda m, a, b: m._foreach_add(a, [1]),
    lambda m, a, b: m._foreach_add_([m.ones(2, dtype=m.int64)], 1.5),
])
def test_foreach_as_torch(call):
    _same(lambda m: call(m, *_lists(m)))


def test_foreach_inplace_returns_the_list_changed():
    for m in (ember, torch):
        a, b = _lists(m)
        assert m._foreach_add_(a, b, alpha=2) is a
        m._foreach_maximum_(a, 5.)
        m._foreach_zero_(b)
        m._foreach_copy_(b, a)
    e, t = _lists(ember)[0], _lists(torch)[0]
    for m, lst in ((ember, e), (torch, t)):
        m._foreach_add_(lst, 1)
        m._foreach_maximum_(lst, 3.)
    assert _values(e) == _values(t)
    assert sorted(n for n in dir(ember) if n.startswith("_foreach_")) == \
        sorted(n for n in dir(torch) if n.startswith("_foreach_"))


# ---- torch._refs, _prims_common, _vendor.packaging -------------------------------------------
def test_refs_resolve_to_ops_of_the_same_meaning():
    import ember._refs as R
    x = [[1., -2., 3.], [0.5, 4., -1.]]
    _same(lambda m: (m._refs.linalg.cross(m.tensor(x), m.tensor(x[::-1])) if m is torch
                     else R.linalg.cross(m.tensor(x), m.tensor(x[::-1]))))
    assert R.linalg.cross is ember.linalg.cross and R.linalg.svd is ember.linalg.svd
    assert R.nn.functional.relu is ember.nn.functional.relu
    assert R.special.zeta is ember.special.zeta and R.fft.rfft is ember.fft.rfft
    t = ember.tensor(x)
    assert R.T(t).shape == (3, 2) and R._conversions.double(t).dtype == ember.float64
    assert R.view(t, 3, 2).shape == (3, 2) and R.expand(t[:1], 4, 3).shape == (4, 3)
    assert R.cauchy(t).shape == t.shape and R.exponential(t).dtype == t.dtype
    for missing in (lambda: R.no_such_op, lambda: R.nn.functional.no_such_op,
                    lambda: R.special.no_such_op):
        with pytest.raises(AttributeError, match="no_such_op"):
            missing()
    assert not hasattr(ember, "cauchy")   # the functional samplers are not torch.* names


def test_prims_common_dtypes_as_torch():
    from torch import _prims_common as tpc
    from ember import _prims_common as epc
    kinds = [k.name for k in tpc.ELEMENTWISE_TYPE_PROMOTION_KIND]
    assert kinds == [k.name for k in epc.ELEMENTWISE_TYPE_PROMOTION_KIND]
    cases = [lambda m: (m.ones(2, dtype=m.float16), 2.0), lambda m: (m.ones(2, dtype=m.int32), 2),
             lambda m: (m.ones(2, dtype=m.bool), m.tensor(True)),
             lambda m: (m.ones(2, dtype=m.int64), m.tensor(1.5, dtype=m.float64)),
             lambda m: (m.ones(2, dtype=m.complex64), 1.0),
             lambda m: (m.ones((), dtype=m.float64), m.ones(3, dtype=m.int16))]
    for case in cases:
        for kind in kinds:
            got = [str(lib.elementwise_dtypes(*case(m), type_promotion_kind=getattr(
                lib.ELEMENTWISE_TYPE_PROMOTION_KIND, kind))) for lib, m in
                ((epc, ember), (tpc, torch))]
            assert got[0] == got[1], (kind, got)
    for name in ("bool", "uint8", "int64", "float16", "bfloat16", "float64", "complex64"):
        assert epc.dtype_to_type(getattr(ember, name)) is tpc.dtype_to_type(getattr(torch, name))


def test_vendored_version_as_torch():
    from torch._vendor.packaging import version as tv
    from ember._vendor.packaging import version as ev
    texts = ["1.4.0", "1.10.2rc1", "2.13.0+cpu", "1.2", "2.0.0.dev20230101", "0.14.1.post2"]
    for a in texts:
        e, t = ev.parse(a), tv.parse(a)
        assert (e.release, e.major, e.minor, e.micro, e.is_prerelease, e.local, e.base_version) \
            == (t.release, t.major, t.minor, t.micro, t.is_prerelease, t.local, t.base_version)
        for b in texts:
            assert (ev.parse(a) < ev.parse(b)) == (tv.parse(a) < tv.parse(b)), (a, b)
    with pytest.raises(ev.InvalidVersion):
        ev.parse("not a version")


# ---- harness helpers ---------------------------------------------------------------------------
def test_harness_helpers_as_torch():
    from torch.testing._internal import common_utils as tcu
    from torch.utils import _foreach_utils as tfu
    from ember.testing._internal import common_utils as ecu
    from ember.utils import _foreach_utils as efu
    for m, cu in ((ember, ecu), (torch, tcu)):
        assert cu.is_iterable_of_tensors([m.ones(1)]) and not cu.is_iterable_of_tensors(m.ones(2))
        assert cu.is_iterable_of_tensors([], include_empty=True)
        assert not cu.is_iterable_of_tensors([m.ones(1), 1]) and not cu.is_iterable_of_tensors(3)
        it = cu.TrackedInputIter(iter("abcd"), "sample input", item_callback=lambda x, i: (i, x),
                                 set_seed=False, restrict_to_index=2)
        assert list(it) == [(2, "c")]
    groups = []
    for m, fu in ((ember, efu), (torch, tfu)):
        a = [m.ones(1), m.ones(1, dtype=m.float64), m.ones(2)]
        for with_indices in (False, True):
            g = fu._group_tensors_by_device_and_dtype([a, [None] * 3, []], with_indices)
            groups.append(sorted((str(k[1]), [[None if t is None else tuple(t.shape) for t in lst]
                                              for lst in v[0]], v[1]) for k, v in g.items()))
        assert fu._get_foreach_kernels_supported_devices() == \
            ["cuda", "xpu", "mtia", "privateuseone"]
    assert groups[:2] == groups[2:]


def test_op_overloads_deepcopy_to_themselves():
    for m in (ember, torch):
        packet = m.ops.aten.add
        assert copy.deepcopy(packet) is packet and copy.deepcopy(packet.Tensor) is packet.Tensor
    with pytest.raises(AttributeError, match="no overload"):
        ember.ops.aten.add.nope


def test_container_and_module_list_as_torch():
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = m.nn.Container(a=m.nn.Linear(1, 1))
        assert [w.category for w in caught] == [FutureWarning] and list(c._modules) == ["a"]
    assert set(ember.nn.modules.__all__) <= set(torch.nn.modules.__all__)
    assert ember.ao.nn.quantized.MaxPool2d is ember.nn.MaxPool2d
    assert repr(ember.per_channel_affine) == repr(torch.per_channel_affine)


# ---- the ops the database names --------------------------------------------------------------
def test_segment_reduce_initial_and_empty_segments_as_torch():
    x = [[1., 2.], [3., 4.], [5., 6.]]
    for reduce in ("sum", "mean", "max", "min", "prod"):
        for initial in (None, 2.5):
            _same(lambda m: m.segment_reduce(m.tensor(x), reduce, lengths=m.tensor([2, 0, 1]),
                                             initial=initial))
            _same(lambda m: m.segment_reduce(m.tensor(x).t(), reduce, axis=1, initial=initial,
                                             offsets=m.tensor([[0, 1, 3], [0, 3, 3]])))
    _same(lambda m: m.segment_reduce(m.tensor(x), "sum", lengths=m.tensor([1, 1])))
    _same(lambda m: m.segment_reduce(m.tensor(x), "sum", lengths=m.tensor([-1, 4])))


def test_safe_softmax_zeroes_masked_rows_and_their_gradient():
    def run(m):
        x = m.tensor([[1., 2., 3.], [float("-inf")] * 3], requires_grad=True)
        y = m.ops.aten._safe_softmax(x, -1)
        (y * m.arange(6.).reshape(2, 3)).sum().backward()
        return y, x.grad
    _same(run)
    _same(lambda m: m.ops.aten._safe_softmax(m.ones(2, 3, dtype=m.int64), -1))


def test_hash_tensor_and_the_batch_norm_entry_points_as_torch():
    x = [[1.5, -2.], [3., 4.25]]
    for dtype in ("float32", "float16", "int8", "uint8", "bool"):
        _same(lambda m: m.hash_tensor(m.tensor(x).to(getattr(m, dtype)), 1, keepdim=True))
    _same(lambda m: m.hash_tensor(m.ones(0)))
    _same(lambda m: m.hash_tensor(m.ones(2, dtype=m.complex64)))

    def bn(m):
        g = m.Generator().manual_seed(0)
        x, rm, rv = m.randn(2, 3, 4, generator=g), m.zeros(3), m.ones(3)
        a = m._native_batch_norm_legit(x, m.ones(3), None, rm, rv, True, 0.1, 1e-5)
        b = m._native_batch_norm_legit(x, None, None, True, 0.1, 1e-5)
        c = m.ops.aten._batch_norm_with_update(x, None, None, rm, rv, 0.1, 1e-5)
        return a, b, c, rm, rv
    _same(bn)
    for m in (ember, torch):
        with pytest.raises(NotImplementedError, match="Could not run 'aten::_flash_attention_"
                                                      "forward' with arguments from the 'CPU'"):
            m.ops.aten._flash_attention_forward(m.ones(1, 1, 1, 8), m.ones(1, 1, 1, 8),
                                                m.ones(1, 1, 1, 8), None, None, 1, 1, 0.0,
                                                False, False)


# ---- the database itself, under python -m ember -------------------------------------------------
_NAMES = ("import torch\n"
          "from torch.testing._internal.common_methods_invocations import op_db, python_ref_db\n"
          "import torch.testing._internal.common_optimizers as o\n"
          "import torch.testing._internal.common_modules as mm\n"
          "print(sorted((i.name, i.variant_test_name) for i in op_db),"
          " sorted(i.name for i in python_ref_db), sorted(i.name for i in o.optim_db))\n")


def test_op_db_imports_under_ember_with_torchs_op_names(tmp_path):
    script = tmp_path / "names.py"
    script.write_text(_NAMES)
    env = dict(os.environ, PYTHONPATH=ROOT)
    runs = [subprocess.Popen(cmd + [str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env, cwd=str(tmp_path))
            for cmd in ([sys.executable, "-m", "ember"], [sys.executable])]
    (ember_out, ember_err), (torch_out, torch_err) = (r.communicate(timeout=600) for r in runs)
    assert runs[0].returncode == 0, ember_err[-3000:]
    assert runs[1].returncode == 0, torch_err[-3000:]
    assert ember_out == torch_out


def test_ops_decorator_names_and_dtypes_as_torch():
    """@ops instantiates one test per op and dtype, named as PyTorch's, and applies the
    decorators the op hands out for that test and dtype."""
    import unittest
    from torch.testing._internal import common_device_type as tcd
    from ember.testing._internal import common_device_type as ecd

    def generated(lib, cd):
        class FakeOp:
            formatted_name = "fake_op"

            def supported_dtypes(self, device_type):
                return {lib.float32, lib.int64, lib.bool}

            supported_backward_dtypes = supported_dtypes

            def get_decorators(self, test_class, test_name, device, dtype, param_kwargs):
                skip = unittest.skip("skipped for int64")
                return [skip] if dtype == lib.int64 else []

        class TestFake(unittest.TestCase):
            @cd.ops([FakeOp()], allowed_dtypes=(lib.float32, lib.int64, lib.float64))
            def test_one(self, device, dtype, op):
                self.assertEqual(dtype, lib.float32)

            @cd.ops([FakeOp()], dtypes=cd.OpDTypes.none)
            def test_none(self, device, op):
                pass

            @cd.ops([FakeOp()], dtypes=cd.OpDTypes.any_one)
            def test_any(self, device, dtype, op):
                self.assertEqual(dtype, lib.float32)
        scope = {"TestFake": TestFake}
        cd.instantiate_device_type_tests(TestFake, scope, only_for="cpu")
        cls = scope["TestFakeCPU"]
        names = sorted(n for n in dir(cls) if "fake_op" in n)
        result = unittest.TestResult()
        unittest.defaultTestLoader.loadTestsFromTestCase(cls).run(result)
        return names, result.testsRun, len(result.failures), len(result.errors), \
            len(result.skipped)
    assert generated(ember, ecd) == generated(torch, tcd)


def test_fixes_test_ops_found_as_torch():
    """From running PyTorch's test_ops.py subset: torch.masked._input_mask, softmax /
    log_softmax with out= (exact dtype), var/std(x, unbiased, out=) refused (no such overload)."""
    x = [[1., -2., 3.], [0.5, 4., -1.]]
    _same(lambda m: m.masked._input_mask(m.tensor(x), 1, mask=m.tensor([True, False, True])))
    _same(lambda m: m.masked._input_mask(m.tensor(x), mask=None))
    for name in ("softmax", "log_softmax"):
        _same(lambda m: getattr(m, name)(m.tensor(x), 1, out=m.empty(2, 3)))
        _same(lambda m: getattr(m, name)(m.tensor(x), 1, m.float64, out=m.empty(2, 3)))
        _same(lambda m: getattr(m, name)(m.tensor(x), 0, out=m.empty(2, 3, dtype=m.float64)))
    for name in ("var", "std"):
        _same(lambda m: getattr(m, name)(m.tensor(x), True, out=m.empty(())).__class__)
        _same(lambda m: getattr(m, name)(m.tensor(x), 0, True, out=m.empty(3)))
