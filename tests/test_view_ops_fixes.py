"""Fixes found by running PyTorch's test/test_view_ops.py on ember: expand's strides for new
dims, view(dtype)'s check order, view_as_complex of a 0-d tensor, narrow with a non-integral
start tensor, data_ptr of an empty tensor, torch._utils._element_size, and as_strided's
gradient on an input that overlaps itself. Each compares ember with torch."""
import pytest

import ember

torch = pytest.importorskip("torch")

from _ported import error_line as _err  # noqa: E402


@pytest.mark.parametrize("shape,size", [((5,), (1, 1, 5)), ((1, 8, 1), (4, 1, 1, 8, 5)),
                                        ((3,), (2, 1, 3)), ((), (1,)), ((), (2, 1))])
def test_expand_strides_of_new_dims(shape, size):
    assert ember.rand(shape).expand(size).stride() == torch.rand(shape).expand(size).stride()


@pytest.mark.parametrize("case", [
    lambda L: L.ones(4, 4, 3)[:, :, 1:].view(L.float64),        # offset before strides
    lambda L: L.ones(4, 4, 3).view(L.float64),                   # size(-1)
    lambda L: L.ones(4, 4, 2).as_strided((4, 4, 2), (2, 1, 1)).view(L.float64),
    lambda L: L.ones(2, 4).t().view(L.int8),
    lambda L: L.tensor(1.0).view(L.int16),
    lambda L: L.view_as_complex(L.tensor(2.0)),
    lambda L: L.view_as_complex(L.tensor([])),
    lambda L: L.arange(9).view(3, 3).narrow(0, L.tensor(0.0), 1),
    lambda L: L.arange(9).view(3, 3).narrow(0, L.tensor([0]), 1),
])
def test_view_errors_as_torch(case):
    assert _err(case, ember) == _err(case, torch)
    assert _err(case, torch) is not None


def test_narrow_integral_tensor_start():
    got = ember.arange(9).view(3, 3).narrow(0, ember.tensor(1), 2)
    want = torch.arange(9).view(3, 3).narrow(0, torch.tensor(1), 2)
    assert got.tolist() == want.tolist()


def test_view_dtype_upsize_values():
    a = torch.arange(16, dtype=torch.int16).view(2, 8)
    b = ember.tensor(a.numpy())
    for d in ("int32", "int64", "float64"):
        x, y = a.view(getattr(torch, d)), b.view(getattr(ember, d))
        assert (y.shape, y.stride(), y.storage_offset()) == (x.shape, x.stride(),
                                                             x.storage_offset())
        assert y.tolist() == x.tolist()


def test_empty_tensor_data_ptr_is_zero():
    for lib in (torch, ember):
        x = lib.randn(0, 6)
        assert x.data_ptr() == 0 and x.reshape(1, 0, 6, 1, 1).data_ptr() == 0
        assert lib.randn(5)[0:0].data_ptr() == 0
        assert lib.randn(5)[1:].data_ptr() != 0


def test_element_size():
    for name in ("bool", "uint8", "int16", "bfloat16", "float32", "int64", "complex128"):
        assert ember._utils._element_size(getattr(ember, name)) == \
            torch._utils._element_size(getattr(torch, name))
    with pytest.raises(RuntimeError):
        ember._utils._element_size(4)


def test_as_strided_grad_of_overlapping_input():
    grads = []
    for lib in (torch, ember):
        y = lib.arange(5.0, dtype=lib.float64).expand(5, 5).requires_grad_()
        z = y.as_strided([3, 3], [0, 1], 1)
        z.backward(lib.arange(9.0, dtype=lib.float64).view(3, 3))
        grads.append(y.grad.tolist())
    assert grads[0] == grads[1]


def test_as_strided_forward_ad_of_expanded_input():
    x = ember.randn(5, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda x: x.expand(5, 5).as_strided([5, 5], [0, 1], 0), [x],
                                   check_forward_ad=True)


def _transposes(lib):
    import warnings
    out = []
    for shape in [(), (2,), (2, 3), (2, 3, 4)]:
        a = lib.randn(shape)
        for op in ("H", "mT", "mH"):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    r = getattr(a, op)
                    out.append((op, shape, tuple(r.shape), r is a))
                except Exception as e:
                    out.append((op, shape, type(e).__name__, str(e)))
            out.append([str(x.message)[:50] for x in w])
    return out


def test_H_mT_mH_on_0d_1d_3d_as_torch():
    """(The 0-d warnings are once per process in both: compared under set_warn_always.)"""
    results = []
    for lib in (ember, torch):
        lib.set_warn_always(True)
        try:
            results.append(_transposes(lib))
        finally:
            lib.set_warn_always(False)
    assert results[0] == results[1]


def test_resize_as_preserve_format_takes_templates_layout():
    got = []
    for lib in (torch, ember):
        xc = lib.randn(2, 3, 4, 4).contiguous(memory_format=lib.channels_last)
        f = lib.randn(xc.numel())
        f.resize_as_(xc, memory_format=lib.preserve_format)
        g = lib.randn(xc.numel())
        g.resize_as_(xc)
        got.append((f.stride(), g.stride()))
    assert got[0] == got[1]
