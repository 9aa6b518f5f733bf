"""complex32 (torch.chalf, ComplexHalf) against torch: tensors of it are made, converted, printed,
viewed as float16 pairs, indexed, saved and computed with where PyTorch's CPU build has a kernel
(add/sub/mul in complex64, rounded per part), and refused with PyTorch's error where it has none."""
import io
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="PyTorch is the oracle for these tests")

VALUES = [[1 + 2j, 3 - 4j, 0.1 + 0.2j], [2 - 1j, 600.3 + 1j, 0.5]]


def make(L):
    return L.tensor(VALUES, dtype=L.chalf)


def outcome(fn, L):
    """(value as complex128/bool/... array, dtype name, shape) or (exception type, message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(L)
    except Exception as e:  # noqa: BLE001 -- the exception is what is compared
        return type(e).__name__, str(e).split("\n")[0]
    if isinstance(r, (L.Tensor,)):
        values = (r.to(L.complex64) if r.dtype == L.chalf else r).tolist()
        return np.asarray(values).tolist(), str(r.dtype), tuple(r.shape), r.stride()
    if isinstance(r, (tuple, list)):
        return [outcome(lambda L, x=x: x, L) for x in r]
    return r


CASES = {
    "tensor": make,
    "zeros": lambda L: L.zeros(2, 3, dtype=L.chalf),
    "ones": lambda L: L.ones(2, dtype=L.chalf),
    "full_complex": lambda L: L.full((2,), 1 + 1j, dtype=L.chalf),
    "full_beyond_half_is_inf": lambda L: L.full((2,), 1e5, dtype=L.chalf),
    "full_beyond_float_raises": lambda L: L.full((2,), 1e39, dtype=L.chalf),
    "scalar_tensor_beyond_half_raises": lambda L: L.scalar_tensor(1e5, dtype=L.chalf),
    "empty_meta": lambda L: L.empty(2, 3, dtype=L.chalf, device="meta").shape,
    "element_size": lambda L: (make(L).element_size(), make(L).itemsize, L.chalf.itemsize),
    "randn_seeded": lambda L: L.randn(5, dtype=L.chalf, generator=L.Generator().manual_seed(3)),
    "rand_seeded": lambda L: L.rand(5, dtype=L.chalf, generator=L.Generator().manual_seed(3)),
    "arange_refused": lambda L: L.arange(3, dtype=L.chalf),
    "to_float32_drops_imag": lambda L: make(L).to(L.float32),
    "to_complex64": lambda L: make(L).to(L.complex64),
    "to_int64": lambda L: make(L).to(L.int64),
    "to_bool": lambda L: make(L).to(L.bool),
    "from_float64_rounds": lambda L: L.tensor([0.1, 1e5, -3.3], dtype=L.float64).to(L.chalf),
    "from_complex128_rounds": lambda L: L.tensor([1e5 + 1e-8j, 0.3 - 0.7j]).to(L.chalf),
    "from_bfloat16": lambda L: L.tensor([1.5], dtype=L.bfloat16).to(L.chalf),
    "chalf_method": lambda L: L.tensor([1.0, 2.5]).chalf(),
    "copy_in": lambda L: L.zeros(3, dtype=L.chalf).copy_(L.tensor([1j, 2, 3.3])),
    "copy_out": lambda L: L.zeros(2, 3, dtype=L.cfloat).copy_(make(L)),
    "fill_": lambda L: L.zeros(3, dtype=L.chalf).fill_(2 - 3j),
    "fill_tensor": lambda L: L.zeros(3, dtype=L.chalf).fill_(L.tensor(2j)),
    "zero_": lambda L: make(L).zero_(),
    "view_as_real": lambda L: L.view_as_real(make(L)),
    "view_as_real_column": lambda L: L.view_as_real(make(L)[:, 1]),
    "view_as_complex_half": lambda L: L.view_as_complex(
        L.tensor([[1.0, 2.0], [3.0, -4.0]], dtype=L.float16)),
    "view_int32": lambda L: make(L).view(L.int32),
    "real_imag_write": lambda L: (lambda t: (t.real.mul_(2), t)[1])(make(L)),
    "item_tolist": lambda L: (make(L)[0, 2].item(), make(L).tolist()),
    "index_cat_stack": lambda L: (make(L)[1], make(L)[:, ::2], L.cat([make(L), make(L)]),
                                  L.stack([make(L), make(L)], 1), make(L).t().contiguous(),
                                  make(L).clone()),
    "cat_promotes": lambda L: (L.cat([make(L)[0], L.tensor([1.0, 2.0], dtype=L.half)]),
                               L.cat([make(L)[0], L.tensor([1j])])),
    "where_mixed": lambda L: L.where(L.tensor([True, False, True]), make(L)[0],
                                     L.ones(3, dtype=L.cfloat)),
    "masked_fill": lambda L: make(L).masked_fill(make(L).real > 0.5, 5),
    "setitem_mask": lambda L: (lambda t: (t.__setitem__(t == 0.5, 1), t)[1])(make(L)),
    "eq_ne": lambda L: (make(L) == make(L).conj(), make(L) != 0.5, make(L) == L.ones(3)),
    "add_sub_mul": lambda L: (make(L) + make(L), make(L) - (1 + 1j), make(L) * 2.5,
                              L.add(make(L), make(L), alpha=2), 1 - make(L)),
    "mixed_promotion": lambda L: (make(L) + L.ones(3), make(L) + L.ones(3, dtype=L.half),
                                  make(L) * L.tensor(1j), L.ones(3, dtype=L.half) + 1j,
                                  make(L) + L.ones(3, dtype=L.float64)),
    "inplace_mixed": lambda L: make(L).mul_(L.tensor([1.0, 2.0, 3.0])),
    "neg_abs_sgn_conj": lambda L: (-make(L), make(L).abs(), make(L).sgn(),
                                   make(L).conj_physical()),
    "predicates": lambda L: (make(L).isfinite(), make(L).isinf(), make(L).isnan(),
                             make(L).isreal()),
    "reductions_it_has": lambda L: (make(L).any(), make(L).all(), make(L).count_nonzero(),
                                    make(L).sum(dtype=L.cfloat), L.linalg.vector_norm(make(L)[0]),
                                    make(L)[0].var()),
    "isclose": lambda L: L.isclose(make(L), make(L)),
    "complex_of_half": lambda L: L.complex(L.tensor([1.0, 2.0], dtype=L.half),
                                           L.tensor([3.0, 4.0], dtype=L.half)),
    "div_refused": lambda L: make(L) / 2,
    "exp_refused": lambda L: make(L).exp(),
    "pow_refused": lambda L: make(L) ** 2,
    "angle_refused": lambda L: make(L).angle(),
    "lt_refused": lambda L: make(L) < make(L),
    "sum_refused": lambda L: make(L).sum(),
    "mean_refused": lambda L: make(L).mean(),
    "prod_refused": lambda L: make(L).prod(),
    "cumsum_refused": lambda L: make(L).cumsum(0),
    "polar_half_refused": lambda L: L.polar(L.ones(2, dtype=L.half), L.ones(2, dtype=L.half)),
    "numpy_refused": lambda L: make(L).numpy(),
    "float_of_complex_refused": lambda L: float(make(L)[0, 0]),
    "factories_refused": lambda L: [outcome(f, L) for f in (
        lambda L: L.eye(2, dtype=L.chalf), lambda L: L.linspace(0, 1, 3, dtype=L.chalf),
        lambda L: L.logspace(0, 1, 3, dtype=L.chalf))],
    "ternary": lambda L: [outcome(f, L) for f in (
        lambda L: L.addcdiv(make(L), make(L), make(L)), lambda L: L.lerp(make(L), make(L), 0.5),
        lambda L: L.equal(make(L), make(L)))],
    "index_add": lambda L: (make(L).index_add(1, L.tensor([0, 0, 2]), make(L)),
                            make(L).index_add(0, L.tensor([1]), make(L)[:1], alpha=2)),
    "index_put_accumulate": lambda L: make(L).index_put((L.tensor([0, 0]),), make(L)[1],
                                                         accumulate=True),
    "index_put_scalar": lambda L: make(L).index_put((L.tensor([0, 1]), L.tensor([1, 1])),
                                                    L.tensor(1j, dtype=L.chalf)),
    "setitem_number": lambda L: (lambda t: (t.__setitem__((0, 1), 5), t)[1])(make(L)),
    "pad_constant": lambda L: L.nn.functional.pad(make(L), (1, 1), value=2),
    "var_mean_std_mean": lambda L: (L.var_mean(make(L), 1), L.std_mean(make(L)[:, ::2], 0)),
    "promote_types": lambda L: [str(L.promote_types(L.chalf, d)) for d in (
        L.float16, L.bfloat16, L.float32, L.float64, L.int64, L.bool, L.complex64)],
    "finfo": lambda L: repr(L.finfo(L.chalf)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_complex32_as_torch(name):
    fn = CASES[name]
    assert repr(outcome(fn, ember)) == repr(outcome(fn, torch))  # (NaN's repr is equal)


def test_repr_as_torch():
    for fn in (make, lambda L: make(L)[0], lambda L: make(L)[1, 1], lambda L: L.zeros(0, dtype=L.chalf)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert repr(fn(ember)) == repr(fn(torch))


def test_save_load_both_ways():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        buf = io.BytesIO()
        ember.save(make(ember)[:, 1:], buf)
        t = torch.load(io.BytesIO(buf.getvalue()))
        assert t.dtype == torch.chalf and t.to(torch.cfloat).tolist() == \
            make(torch)[:, 1:].to(torch.cfloat).tolist()
        tbuf = io.BytesIO()
        torch.save(make(torch), tbuf)
        e = ember.load(io.BytesIO(tbuf.getvalue()))
        assert e.dtype is ember.chalf and e.tolist() == make(ember).tolist()


def test_experimental_warning_once_as_torch(monkeypatch):
    """PyTorch warns once per process, when the first complex32 tensor is made (its text is
    "<message> (Triggered internally at ...EmptyTensor.cpp)")."""
    from ember._core import complex32
    monkeypatch.setattr(complex32, "_warned", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ember.zeros(2, dtype=ember.chalf)
        ember.tensor([1j], dtype=ember.chalf).to(ember.float32)
        ember.ones(2).to(ember.chalf)
    messages = [str(w.message) for w in caught if "ComplexHalf" in str(w.message)]
    assert messages == ["ComplexHalf support is experimental and many operators don't support "
                        "it yet."]
    assert caught[0].filename == __file__ and caught[0].category is UserWarning
