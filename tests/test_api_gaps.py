"""Small API gaps found by probes against torch 2.13: bad arguments raise what torch raises
(exception type and message), and the odd overloads compute what torch computes."""
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch 2.13 is the oracle")
import ember  # noqa: E402


def _raised(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return info.value


def same_error(fn, upto=None):
    """fn(ember) raises what fn(torch) raises: the same builtin class and message (the message
    compared up to `upto`, where torch's lists its overloads)."""
    t, e = _raised(fn, torch), _raised(fn, ember)
    assert type(e) is type(t), (type(e), type(t), str(e))
    tm, em = str(t).splitlines()[0], str(e).splitlines()[0]
    if upto is not None:
        tm, em = tm[:tm.index(upto)], em[:em.index(upto)]
    assert em == tm


# ---- 1. a factory or Tensor.to given a dtype that is no dtype ---------------------------------
ONE_SIGNATURE = {
    "empty": lambda m, d: m.empty(2, dtype=d),
    "zeros": lambda m, d: m.zeros(2, dtype=d),
    "ones": lambda m, d: m.ones(2, dtype=d),
    "full": lambda m, d: m.full((2,), 1.0, dtype=d),
    "tensor": lambda m, d: m.tensor([1.0], dtype=d),
    "as_tensor": lambda m, d: m.as_tensor([1.0], dtype=d),
    "empty_strided": lambda m, d: m.empty_strided((2,), (1,), dtype=d),
    "zeros_like": lambda m, d: m.zeros_like(m.ones(2), dtype=d),
    "ones_like": lambda m, d: m.ones_like(m.ones(2), dtype=d),
    "empty_like": lambda m, d: m.empty_like(m.ones(2), dtype=d),
    "full_like": lambda m, d: m.full_like(m.ones(2), 1, dtype=d),
    "scalar_tensor": lambda m, d: m.scalar_tensor(1, dtype=d),
    "tril_indices": lambda m, d: m.tril_indices(2, 2, dtype=d),
    "new_zeros": lambda m, d: m.ones(2).new_zeros(2, dtype=d),
    "new_ones": lambda m, d: m.ones(2).new_ones(2, dtype=d),
    "new_empty": lambda m, d: m.ones(2).new_empty(2, dtype=d),
    "new_full": lambda m, d: m.ones(2).new_full((2,), 1, dtype=d),
    "new_tensor": lambda m, d: m.ones(2).new_tensor([1], dtype=d),
}
OVERLOADED = {
    "arange": lambda m, d: m.arange(3, dtype=d),
    "arange_start": lambda m, d: m.arange(0, 3, dtype=d, requires_grad=False),
    "linspace": lambda m, d: m.linspace(0.0, 1, 3, dtype=d),
    "logspace": lambda m, d: m.logspace(0, 1, 3, dtype=d),
    "eye": lambda m, d: m.eye(2, dtype=d),
    "rand": lambda m, d: m.rand(2, 3, dtype=d),
    "randn": lambda m, d: m.randn((2, 3), dtype=d),
    "randint": lambda m, d: m.randint(3, (2,), dtype=d),
    "randperm": lambda m, d: m.randperm(3, dtype=d),
    "rand_like": lambda m, d: m.rand_like(m.ones(2), dtype=d),
    "randint_like": lambda m, d: m.randint_like(m.ones(2), 3, dtype=d),
    "to_kw": lambda m, d: m.ones(2).to(dtype=d),
}


@pytest.mark.parametrize("bad", ["float", 3, list], ids=["str", "int", "type"])
@pytest.mark.parametrize("name", sorted(ONE_SIGNATURE))
def test_factory_dtype_not_a_dtype(name, bad):
    same_error(lambda m: ONE_SIGNATURE[name](m, bad))


@pytest.mark.parametrize("name", sorted(OVERLOADED))
def test_overloaded_factory_dtype_not_a_dtype(name):
    same_error(lambda m: OVERLOADED[name](m, "float"), upto="got (")
    e = _raised(lambda m: OVERLOADED[name](m, "float"), ember)
    assert "dtype=str" in str(e)


@pytest.mark.parametrize("call", [
    lambda m: m.ones(2).to("cpu", "float"),
    lambda m: m.ones(2).to(m.ones(1), "float"),
    lambda m: m.ones(2).to(m.float64, "cpu"),
])
def test_to_invalid_combination(call):
    same_error(call, upto=", but expected")


def test_to_device_string_that_is_a_dtype_name():
    t, e = _raised(lambda m: m.ones(2).to("float"), torch), _raised(lambda m: m.ones(2).to("float"), ember)
    assert type(e) is type(t) is RuntimeError
    assert str(e).endswith("device type at start of device string: float")


@pytest.mark.parametrize("call", [
    lambda m: m.ones(2).to("cpu", m.float64),
    lambda m: m.ones(2).to(m.device("cpu"), m.float64, copy=True),
    lambda m: m.ones(2).to(m.float16, copy=True),
    lambda m: m.ones(2).to(None),
    lambda m: m.ones(2, dtype=m.int32).to(m.ones(1, dtype=m.float64)),
    lambda m: m.arange(3, dtype=None),
])
def test_valid_to_and_factories_still_work(call):
    t, e = call(torch), call(ember)
    assert str(e.dtype) == str(t.dtype)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("pytype", [float, int, bool, complex])
@pytest.mark.parametrize("call", [
    lambda m, d: m.zeros(2, dtype=d), lambda m, d: m.ones(2).to(d),
    lambda m, d: m.ones(2).to(dtype=d), lambda m, d: m.full((2,), 1, dtype=d),
    lambda m, d: m.tensor([1, 0], dtype=d), lambda m, d: m.ones(2).new_ones(3, dtype=d),
])
def test_python_number_type_as_dtype(call, pytype):
    t, e = call(torch, pytype), call(ember, pytype)
    assert str(e.dtype) == str(t.dtype)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


# ---- 2. addr promotes self and both vectors together ------------------------------------------
def _outcome(fn, lib):
    """What fn(lib) gives: (dtype name, values) or (exception class, first message line)."""
    try:
        r = fn(lib)
    except Exception as exc:  # compared with torch's below
        return type(exc), str(exc).splitlines()[0]
    return str(r.dtype), r.tolist()


def same_outcome(fn):
    t, e = _outcome(fn, torch), _outcome(fn, ember)
    assert e[0] == t[0], (e, t)
    if isinstance(t[1], str):
        if t[1].endswith(", but expected one of:"):  # torch's parser then lists its overloads
            assert e[1].startswith(t[1][:-len(" one of:")]), (e, t)
        else:
            assert e[1] == t[1]
    else:
        np.testing.assert_allclose(np.array(e[1], dtype=complex),
                                   np.array(t[1], dtype=complex), rtol=1e-3)


ADDR_DTYPES = [("float32", "float64", "float32"), ("int64", "float32", "float32"),
               ("float32", "int32", "int32"), ("int32", "int64", "int64"),
               ("float64", "float32", "float16"), ("bool", "bool", "bool"),
               ("float32", "float32", "complex64"), ("int64", "float16", "bfloat16"),
               ("float16", "bool", "bool"), ("bool", "bool", "int64"), ("int8", "uint8", "bool")]


@pytest.mark.parametrize("self_shape", [(2, 3), (), (3,)])
@pytest.mark.parametrize("dts", ADDR_DTYPES, ids="-".join)
def test_addr_mixed_dtypes(dts, self_shape):
    def call(m):
        s, a, b = (getattr(m, d) for d in dts)
        return m.addr(m.ones(self_shape).to(s), (m.arange(2) + 1).to(a), m.arange(3).to(b),
                      beta=2 if s is not m.bool else True, alpha=3 if s is not m.bool else True)
    same_outcome(call)


@pytest.mark.parametrize("call", [
    lambda m: m.ones(2, 3).addr_(m.arange(2).double(), m.arange(3).float()),
    lambda m: m.ones(2, 3, dtype=m.int64).addr_(m.arange(2).double(), m.arange(3).float()),
    lambda m: m.addr(m.ones(2, 3, dtype=m.int64), m.arange(2).double(), m.arange(3).float(),
                     out=m.empty(2, 3, dtype=m.int64)),
    lambda m: m.addr(m.ones(2, 3, dtype=m.int64), m.arange(2), m.arange(3).float(), beta=0.5),
    lambda m: m.addr(m.ones(2, 3, dtype=m.int64), m.arange(2), m.arange(3), beta=0.5),
    lambda m: m.addr(m.ones(2, 3, dtype=m.int64), m.arange(2), m.arange(3), alpha=0.5),
    lambda m: m.addr(m.ones(2, 3), m.arange(2.0), m.arange(3.0), alpha=True),
    lambda m: m.addr(m.ones(2, 3), m.arange(2.0), m.arange(3.0), beta=True, alpha=True),
    lambda m: m.addr(m.ones(2, 3), m.arange(2) > 0, m.arange(3) > 0, beta=True),
    lambda m: m.addr(m.ones(2, 3, dtype=m.bool), m.arange(2) > 0, m.arange(3) > 0, alpha=2),
], ids=range(10))
def test_addr_inplace_out_and_scalars(call):
    same_outcome(call)


def test_addr_mixed_dtypes_meta():
    def call(m):
        return m.addr(m.empty(2, 3, device="meta"), m.empty(2, dtype=m.float64, device="meta"),
                      m.empty(3, dtype=m.int32, device="meta"))
    t, e = call(torch), call(ember)
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)


# ---- 3. assorted argument checks -------------------------------------------------------------
NAN = float("nan")
ITEM3 = {
    "nansum_out_long": lambda m: m.nansum(m.tensor([1.0, NAN]), out=m.empty((), dtype=m.int64)),
    "nansum_dim_out_int": lambda m: m.nansum(m.tensor([[1.0, NAN]]).half(), 1,
                                             out=m.empty(1, dtype=m.int32)),
    "nansum_out_bool": lambda m: m.nansum(m.tensor([1.0, NAN]), out=m.empty((), dtype=m.bool)),
    "nansum_out_double": lambda m: m.nansum(m.tensor([1.0, NAN]), out=m.empty((), dtype=m.float64)),
    "nansum_int_out_long": lambda m: m.nansum(m.tensor([1, 2]), out=m.empty((), dtype=m.int64)),
    "nansum_int_out_float": lambda m: m.nansum(m.tensor([1, 2]), out=m.empty(())),
    "nansum_dtype_long": lambda m: m.nansum(m.tensor([1.7, 1.7, NAN]), dtype=m.int64),
    "nansum_dim_dtype_long": lambda m: m.nansum(m.tensor([[1.7], [1.7], [NAN]]), 1, dtype=m.int64),
    "nansum_dtype_bool": lambda m: m.nansum(m.tensor([1.7, NAN]), dtype=m.bool),
    "nansum_dtype_complex": lambda m: m.nansum(m.tensor([1.7, NAN]), 0, dtype=m.complex64),
    "sum_out_no_dim": lambda m: m.sum(m.ones(3), out=m.empty(())),
    "sum_out_dtype_no_dim": lambda m: m.sum(m.ones(3), out=m.empty(()), dtype=m.float64),
    "sum_out_keepdim_no_dim": lambda m: m.sum(m.ones(3), keepdim=True, out=m.empty(())),
    "sum_out_dim_none": lambda m: m.sum(m.ones(3), None, out=m.empty(())),
    "sum_out_dim_none_kw": lambda m: m.sum(m.ones(3), dim=None, out=m.empty(())),
    "sum_out_axis": lambda m: m.sum(m.ones(3), axis=0, out=m.empty(())),
    "sum_no_dim": lambda m: m.sum(m.ones(3), dtype=m.float64),
    "prod_out_no_dim": lambda m: m.prod(m.ones(3), out=m.empty(())),
    "prod_out_dtype_no_dim": lambda m: m.prod(m.ones(3), out=m.empty(()), dtype=m.float32),
    "prod_out_dim": lambda m: m.prod(m.ones(3), 0, out=m.empty(())),
}


@pytest.mark.parametrize("name", sorted(ITEM3))
def test_argument_checks(name):
    same_outcome(ITEM3[name])


SCATTER_DTYPES = [("int64", "int32"), ("int32", "int64"), ("int32", "uint8"),
                  ("float32", "float64"), ("float32", "int64"), ("int64", "bool"),
                  ("bool", "float32"), ("int64", "float32"), ("float32", "complex64")]


@pytest.mark.filterwarnings("ignore:Casting complex values")
@pytest.mark.parametrize("dts", SCATTER_DTYPES, ids="-".join)
@pytest.mark.parametrize("op", ["slice", "select", "diagonal"])
def test_view_scatter_mixed_dtypes(op, dts):
    def call(m):
        s, d = getattr(m, dts[0]), getattr(m, dts[1])
        base = m.zeros(3, 3, dtype=s)
        if op == "slice":
            return m.slice_scatter(base, m.full((3, 2), 1.7).to(d), 1, 0, 2)
        if op == "select":
            return m.select_scatter(base, m.full((3,), 1.7).to(d), 0, 1)
        return m.diagonal_scatter(base, m.full((3,), 1.7).to(d))
    same_outcome(call)


def test_slice_scatter_mixed_dtypes_gradients():
    grads = []
    for m in (torch, ember):
        a = m.zeros(4, requires_grad=True)
        b = m.ones(2, dtype=m.float64, requires_grad=True)
        r = m.slice_scatter(a, b * 3, 0, 0, 2)
        (r * m.arange(4)).sum().backward()
        grads.append((str(r.dtype), str(a.grad.dtype), a.grad.tolist(), str(b.grad.dtype),
                      b.grad.tolist()))
    assert grads[0] == grads[1]


ITEM3B = {
    "isin_complex": lambda m: m.isin(m.tensor([1 + 1j]), m.tensor([1 + 1j])),
    "isin_bool": lambda m: m.isin(m.tensor([True, False]), m.tensor([True])),
    "isin_int_bool": lambda m: m.isin(m.tensor([1, 2]), m.tensor([True])),
    "isin_float_complex": lambda m: m.isin(m.tensor([1.0, 2.0]), m.tensor([1 + 0j])),
    "isin_int_complex_scalar": lambda m: m.isin(m.tensor([1, 2]), 1 + 0j),
    "isin_bool_scalar": lambda m: m.isin(m.tensor([True]), True),
    "isin_bool_complex": lambda m: m.isin(m.tensor([True]), m.tensor([1 + 0j])),
    "isin_complex_bool": lambda m: m.isin(m.tensor([1 + 0j]), m.tensor([True])),
    "isin_scalar_bool": lambda m: m.isin(1, m.tensor([True])),
    "isin_complex_scalar_elements": lambda m: m.isin(1 + 1j, m.tensor([1, 2])),
    "isin_float_half": lambda m: m.isin(m.tensor([1.5, 2]), m.tensor([1.5], dtype=m.float16)),
    "isin_bf16_int": lambda m: m.isin(m.tensor([1, 2]).bfloat16(), m.tensor([1])),
    "isin_invert": lambda m: m.isin(m.tensor([1, 2, 3]), m.tensor([2]), invert=True),
    "polygamma0_complex": lambda m: m.polygamma(0, m.tensor([1 + 1j])),
    "polygamma1_complex": lambda m: m.polygamma(1, m.tensor([1 + 1j])),
    "polygamma2_complex": lambda m: m.polygamma(2, m.tensor([1 + 1j])),
    "polygamma3_complex128": lambda m: m.polygamma(3, m.tensor([1 + 1j], dtype=m.complex128)),
    "polygamma_inplace_complex": lambda m: m.tensor([1 + 1j]).polygamma_(1),
    "polygamma_method_complex": lambda m: m.tensor([1 + 1j]).polygamma(1),
    "special_polygamma_complex": lambda m: m.special.polygamma(0, m.tensor([1 + 1j])),
    "polygamma_negative_complex": lambda m: m.polygamma(-1, m.tensor([1 + 1j])),
    "polygamma_real": lambda m: m.polygamma(2, m.tensor([1.5, 2.5])),
}


@pytest.mark.parametrize("name", sorted(ITEM3B))
def test_isin_polygamma_dtypes(name):
    same_outcome(ITEM3B[name])


def test_polygamma_complex_meta():
    for m in (torch, ember):
        r = m.polygamma(1, m.tensor([1 + 1j], device="meta"))
        assert str(r.dtype) == "torch.complex64" and tuple(r.shape) == (1,)


ITEM3C = {
    "round_inplace_positional": lambda m: m.tensor([1.234, 5.678]).round_(2),
    "round_method_positional": lambda m: m.tensor([1.234, 5.678]).round(2),
    "round_method_none": lambda m: m.tensor([1.234, 5.678]).round(None),
    "round_function_positional": lambda m: m.round(m.tensor([1.234, 5.678]), 2),
    "round_inplace_function_positional": lambda m: m.round_(m.tensor([1.234, 5.678]), 2),
    "round_method_decimals": lambda m: m.tensor([1.234, 5.678]).round(decimals=2),
    "round_inplace_decimals": lambda m: m.tensor([1.234, 5.678]).round_(decimals=1),
    "round_function_decimals": lambda m: m.round_(m.tensor([1.234, 5.678]), decimals=1),
    "round_plain": lambda m: m.tensor([1.234, 5.678]).round(),
    "requires_grad_int": lambda m: m.ones(2).requires_grad_(2),
    "requires_grad_zero": lambda m: m.ones(2).requires_grad_(0),
    "requires_grad_none": lambda m: m.ones(2).requires_grad_(None),
    "requires_grad_str": lambda m: m.ones(2).requires_grad_("a"),
    "requires_grad_float": lambda m: m.ones(2).requires_grad_(1.0),
    "requires_grad_tensor": lambda m: m.ones(2).requires_grad_(m.tensor(True)),
    "requires_grad_numpy_bool": lambda m: m.ones(2).requires_grad_(np.True_),
    "requires_grad_true": lambda m: m.ones(2).requires_grad_(True).requires_grad,
    "requires_grad_default_int": lambda m: m.ones(2, dtype=m.int64).requires_grad_(),
    "requires_grad_false_int": lambda m: m.ones(2, dtype=m.int64).requires_grad_(False),
    "copy_float": lambda m: m.ones(2).copy_(3.0),
    "copy_float_into_int": lambda m: m.ones(2, dtype=m.int32).copy_(3.7),
    "copy_bool": lambda m: m.ones(2).copy_(True),
    "copy_int_into_bool": lambda m: m.zeros(2, dtype=m.bool).copy_(2),
    "copy_double_precision": lambda m: m.ones(2, dtype=m.float64).copy_(0.1),
    "copy_complex_into_complex": lambda m: m.ones(2, dtype=m.complex64).copy_(1 + 2j),
    "copy_nonblocking": lambda m: m.ones(2).copy_(3.0, non_blocking=True),
    "copy_tensor_positional_flag": lambda m: m.ones(2).copy_(m.tensor([1.0, 2.0]), True),
    "copy_other_keyword": lambda m: m.ones(2).copy_(other=m.zeros(2)),
    "copy_src_keyword": lambda m: m.ones(2).copy_(src=m.zeros(2)),
    "copy_str": lambda m: m.ones(2).copy_("a"),
    "copy_none": lambda m: m.ones(2).copy_(None),
    "copy_list": lambda m: m.ones(2).copy_([1, 2]),
    "copy_nothing": lambda m: m.ones(2).copy_(),
    "copy_nan_into_long": lambda m: m.ones(2, dtype=m.int64).copy_(NAN),
}


@pytest.mark.parametrize("name", sorted(ITEM3C))
def test_round_requires_grad_copy(name):
    same_outcome(lambda m: (lambda r: r if not isinstance(r, bool) else m.tensor(r))(ITEM3C[name](m)))


def test_copy_complex_number_into_real_warns():
    # (torch warns once per process, so only its value is compared)
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert ember.ones(2).copy_(1 + 2j).tolist() == [1.0, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.ones(2).copy_(1 + 2j).tolist() == [1.0, 1.0]


# ---- 4. the deprecated scalars-first overloads torch 2.13 still binds ---------------------------
def _deprecated_cases(m):
    x, y, M, B = m.ones(2), m.ones(2) * 2, m.ones(2, 2) * 1.5, m.ones(1, 2, 2) * 0.5
    return {
        "add": lambda: m.add(x, 2, y), "add_method": lambda: x.add(2, y),
        "sub": lambda: m.sub(x, 2, y), "sub_method": lambda: x.sub(2, y),
        "addcmul": lambda: m.addcmul(x, 2, y, y), "addcmul_method": lambda: x.addcmul(2, y, y),
        "addcdiv": lambda: m.addcdiv(x, 2, y, y),
        "add_": lambda: x.clone().add_(2, y), "sub_": lambda: x.clone().sub_(2, y),
        "addcdiv_": lambda: x.clone().addcdiv_(3, y, y),
        "addmm5": lambda: m.addmm(2, M, 3, M, M), "addmm4": lambda: m.addmm(2, M, M, M),
        "addmv": lambda: m.addmv(2, x, 3, M, x), "addr5": lambda: m.addr(2, M, 3, x, x),
        "addr4": lambda: m.addr(2, M, x, x), "baddbmm": lambda: m.baddbmm(2, B, 3, B, B),
        "addbmm": lambda: m.addbmm(2, M, 3, B, B),
        "addmm_method5": lambda: M.addmm(2, 3, M, M), "addmm_method4": lambda: M.addmm(2, M, M),
        "addmm_5": lambda: M.clone().addmm_(2, 3, M, M), "addmm_4": lambda: M.clone().addmm_(2, M, M),
        "addr_method": lambda: M.addr(2, x, x), "baddbmm_": lambda: B.clone().baddbmm_(2, 3, B, B),
        "add_out": lambda: m.add(x, 2, y, out=m.empty(2)),
        "addmm_out": lambda: m.addmm(2, M, 3, M, M, out=m.empty(2, 2)),
        "sspaddmm": lambda: m.sspaddmm(2, M.to_sparse(), 3, M.to_sparse(), M).to_dense(),
        "add_number_other": lambda: m.add(x, 2, 3),
        "add_float_alpha": lambda: m.add(x, 2.5, y),
        "add_long": lambda: m.add(x.long(), 2, y.long()),
        "add_long_float_alpha": lambda: m.add(x.long(), 2.5, y.long()),
        "add_bad_order": lambda: m.add(x, y, 2), "add_three_tensors": lambda: m.add(x, y, y),
        "add_method_bad": lambda: x.add(y, 2), "add_alpha_twice": lambda: m.add(x, 2, y, alpha=3),
        "addmm_no_scalar": lambda: m.addmm(M, M, M, M),
        "addmm_tensor_alpha": lambda: m.addmm(2, M, y, M, M),
    }


@pytest.mark.filterwarnings("ignore:This overload of")
@pytest.mark.parametrize("name", sorted(_deprecated_cases(torch)))
def test_deprecated_overloads(name):
    same_outcome(lambda m: _deprecated_cases(m)[name]())


def test_deprecated_overload_gradients():
    grads = []
    for m in (torch, ember):
        x, y = m.ones(2, requires_grad=True), m.full((2,), 3.0, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.addcmul(x, 2, y, y).sum().backward()
        grads.append((x.grad.tolist(), y.grad.tolist()))
    assert grads[0] == grads[1]


_ONCE_CALLS = ["torch.addmm(2, torch.ones(2, 2), 3, torch.ones(2, 2), torch.ones(2, 2))",
               "torch.ones(2).sub_(2, torch.ones(2))",
               "torch.ones(2, 2).addmm(2, torch.ones(2, 2), torch.ones(2, 2))"]


@pytest.fixture(scope="module")
def once_warnings():
    """{(library, call): (warnings the call gave, run twice; the first one's text; warnings
    another deprecated overload gave after it)}, each in a fresh process (the warning is once per
    process, for every overload together, as TORCH_WARN_ONCE is); the processes run at once."""
    import json
    import subprocess
    import sys
    code = ("import json, warnings, {lib} as torch\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    {call}; {call}\n"
            "    first = len(w)\n"
            "    {other}\n"
            "print(json.dumps((first, str(w[0].message), len(w) - first)))\n")
    runs = {}
    for lib in ("torch", "ember"):
        for i, call in enumerate(_ONCE_CALLS):
            other = _ONCE_CALLS[i - 1]
            runs[lib, call] = subprocess.Popen(
                [sys.executable, "-c", code.format(lib=lib, call=call, other=other)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    found = {}
    for key, proc in runs.items():
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        found[key] = json.loads(out.strip().splitlines()[-1])
    return found


@pytest.mark.parametrize("call", _ONCE_CALLS)
def test_deprecated_overload_warns_once_as_torch(once_warnings, call):
    """The one-time warning names the overload and the signatures to use, as torch's does, and
    no deprecated overload warns again in that process."""
    (ec, emsg, e_after), (tc, tmsg, t_after) = once_warnings["ember", call], \
        once_warnings["torch", call]
    assert ec == tc == 1 and e_after == t_after == 0
    tm = tmsg.split(" (Triggered")[0].split("\n")
    em = emsg.split(" (Triggered")[0].split("\n")
    assert em == tm[:len(em)] and len(em) >= 4


# ---- 5. optim.Muon and optim.swap_in_optimizer_params_and_state ---------------------------------
def _muon_run(m, kw, steps=5, shapes=((4, 3), (3, 5), (6, 6))):
    rng = np.random.default_rng(0)
    params = [m.tensor(rng.standard_normal(s).astype(np.float32)).requires_grad_()
              for s in shapes]
    opt = m.optim.Muon(params, **kw)
    history = []
    for _ in range(steps):
        opt.zero_grad()
        sum((p ** 3).sum() + (p * p).sum() for p in params).backward()
        opt.step()
        history.append([p.detach().numpy().copy() for p in params] +
                       [opt.state[p]["momentum_buffer"].numpy().copy() for p in params])
    return opt, params, history


@pytest.mark.parametrize("kw", [
    {}, dict(lr=0.02, momentum=0.9, nesterov=False, weight_decay=0.05),
    dict(lr=0.01, adjust_lr_fn="match_rms_adamw", ns_steps=3, eps=1e-5),
    dict(lr=0.01, adjust_lr_fn="original", ns_coefficients=(2.0, -1.5, 0.5), weight_decay=0.0),
], ids=["defaults", "plain_momentum", "match_rms_adamw", "coefficients"])
def test_muon_trajectory_matches_torch(kw):
    _, _, ht = _muon_run(torch, kw)
    _, _, he = _muon_run(ember, kw)
    for step, (te, ee) in enumerate(zip(ht, he)):
        for t, e in zip(te, ee):
            assert e.dtype == t.dtype and e.shape == t.shape
            np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6 * float(np.abs(t).max()),
                                       err_msg=f"step {step}")


def test_muon_defaults_and_state_dict():
    ot, pt, _ = _muon_run(torch, {}, steps=2)
    oe, pe, _ = _muon_run(ember, {}, steps=2)
    assert oe.defaults == ot.defaults
    st, se = ot.state_dict(), oe.state_dict()
    assert se["param_groups"] == st["param_groups"]
    assert sorted(se["state"]) == sorted(st["state"])
    for k in st["state"]:
        assert sorted(se["state"][k]) == sorted(st["state"][k])
        np.testing.assert_allclose(se["state"][k]["momentum_buffer"].numpy(),
                                   st["state"][k]["momentum_buffer"].numpy(), rtol=1e-5, atol=1e-7)
    # ember's state dict, loaded into a fresh ember Muon, continues the same trajectory
    fresh = ember.optim.Muon([p.detach().clone().requires_grad_() for p in pe])
    fresh.load_state_dict(se)
    assert fresh.state_dict()["param_groups"] == se["param_groups"]


@pytest.mark.parametrize("call", [
    lambda m: m.optim.Muon([m.ones(2, 2, requires_grad=True)], lr=-1.0),
    lambda m: m.optim.Muon([m.ones(2, 2, requires_grad=True)], momentum=-0.5),
    lambda m: m.optim.Muon([m.ones(2, 2, requires_grad=True)], weight_decay=-0.1),
    lambda m: m.optim.Muon([m.ones(2, 2, requires_grad=True)], adjust_lr_fn="bogus"),
    lambda m: m.optim.Muon([m.ones(2, 2, requires_grad=True)], lr=m.tensor([0.1, 0.2])),
    lambda m: m.optim.Muon([m.ones(3, requires_grad=True)]),
    lambda m: m.optim.Muon([m.ones(2, 2, 2, requires_grad=True)]),
])
def test_muon_argument_errors(call):
    same_outcome(call)


@pytest.mark.parametrize("setup", ["complex", "ns_steps", "coefficients"])
def test_muon_step_errors(setup):
    def call(m):
        if setup == "complex":
            p = m.ones(2, 2, dtype=m.complex64, requires_grad=True)
            opt = m.optim.Muon([p])
        else:
            p = m.ones(2, 2, requires_grad=True)
            opt = m.optim.Muon([p], **({"ns_steps": 100} if setup == "ns_steps" else
                                       {"ns_coefficients": (1.0, 2.0)}))
        p.grad = m.ones_like(p)
        opt.step()
        return p
    same_outcome(call)


def _swap_run(m):
    rng = np.random.default_rng(1)
    a = [rng.standard_normal(s).astype(np.float32) for s in ((3, 2), (4,), (2, 2))]
    params = [m.tensor(x).requires_grad_() for x in a]
    opt = m.optim.SGD([{"params": params[:2]}, {"params": params[2:], "lr": 0.3}], lr=0.1,
                      momentum=0.9)
    for p in params:
        p.grad = m.ones_like(p)
    opt.step()
    live_groups = [g["params"] for g in opt.param_groups]
    osd = opt.state_dict()
    osd["param_groups"][0]["lr"] = 0.5
    buf_before = osd["state"][0]["momentum_buffer"].clone()
    others = {f"p{i}": m.tensor(x * 2).requires_grad_() for i, x in enumerate(a)}
    for p in others.values():
        p.grad = m.full_like(p, 0.5)
    with m.optim.swap_in_optimizer_params_and_state(opt, others, osd):
        inside = (opt.param_groups[0]["lr"], [p is q for p, q in zip(opt.param_groups[0]["params"],
                                                                    list(others.values())[:2])])
        opt.step()
    restored = (opt.param_groups[0]["lr"], [g["params"] is l for g, l in
                                            zip(opt.param_groups, live_groups)],
                set(map(id, opt.state)) == set(map(id, params)))
    return (inside, restored, [p.detach().numpy() for p in others.values()],
            [p.detach().numpy() for p in params], (osd["state"][0]["momentum_buffer"] -
                                                  buf_before).numpy())


def test_swap_in_optimizer_params_and_state():
    rt, re_ = _swap_run(torch), _swap_run(ember)
    assert re_[0] == rt[0] and re_[1] == rt[1]
    for e, t in zip(re_[2] + re_[3] + [re_[4]], rt[2] + rt[3] + [rt[4]]):
        np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("bad", ["uninitialized", "not_dict", "state_list", "tensor_keys",
                                 "groups_count", "group_keys", "params_count", "extra_state",
                                 "too_few_params"])
def test_swap_in_errors(bad):
    def call(m):
        p = m.ones(2, requires_grad=True)
        opt = m.optim.SGD([p], lr=0.1, momentum=0.9)
        if bad != "uninitialized":
            p.grad = m.ones(2)
            opt.step()
        osd = opt.state_dict()
        params = {"p": m.zeros(2)}
        if bad == "not_dict":
            osd = [osd]
        elif bad == "state_list":
            osd["state"] = [1]
        elif bad == "tensor_keys":
            osd["state"] = {p: {}}
        elif bad == "groups_count":
            osd["param_groups"] = osd["param_groups"] * 2
        elif bad == "group_keys":
            osd["param_groups"][0]["extra"] = 1
        elif bad == "params_count":
            osd["param_groups"][0]["params"] = [0, 1]
        elif bad == "extra_state":
            osd["state"][7] = {}
        elif bad == "too_few_params":
            params = {}
        with m.optim.swap_in_optimizer_params_and_state(opt, params, osd):
            pass
        return p
    same_outcome(call)


# ---- 6. FileStore on a path it cannot open ------------------------------------------------------
@pytest.mark.parametrize("where", ["missing_parent", "parent_is_a_file"])
def test_filestore_unopenable_path(tmp_path, where):
    import torch.distributed as tdist
    import ember.distributed as edist
    (tmp_path / "f").write_text("")
    path = tmp_path / ("nope" if where == "missing_parent" else "f") / "store"
    with pytest.raises(edist.DistStoreError) as info:
        edist.FileStore(str(path), 1)
    e = info.value
    assert isinstance(e, RuntimeError)
    assert not (tmp_path / "nope").exists()
    if where == "missing_parent":
        # torch retries opening a missing directory's file until its store timeout (300 s)
        # before raising DistStoreError("No such file or directory"), measured once; the test
        # checks ember's error has that text rather than wait for torch
        assert str(e) == "No such file or directory"
        return
    with pytest.raises(Exception) as info:
        tdist.FileStore(str(path), 1)
    t = info.value
    assert type(t).__name__ == type(e).__name__ == "DistStoreError"
    assert str(e) == str(t)
