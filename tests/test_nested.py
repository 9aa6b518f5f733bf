"""ember.nested (strided layout) against torch.nested: construction, printing, sizes (regular
and irregular dimensions), unbind, to_padded_tensor with its gradient, elementwise functions
and arithmetic component by component, and the errors for what is not supported."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _outcome(call):
    try:
        r = call()
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return (type(e).__name__, str(e).split("\n")[0].split(" (ember")[0].split(" This could")[0])
    if isinstance(r, (torch.Tensor, ember.Tensor)):
        return ("ok", repr(r))
    if isinstance(r, tuple):
        return ("ok", [repr(x) for x in r])
    return ("ok", r)


def _nt(lib):
    return lib.nested.nested_tensor([lib.arange(3.0), lib.arange(5.0) * 2])


def _nt2(lib):
    return lib.nested.nested_tensor([lib.ones(2, 3), lib.arange(12.0).reshape(4, 3)])


CASES = {
    "repr": lambda lib: _nt(lib),
    "repr 2-d": lambda lib: _nt2(lib),
    "meta": lambda lib: (_nt(lib).dim(), _nt(lib).is_nested, str(_nt(lib).dtype),
                         str(_nt(lib).layout), _nt(lib).numel(), _nt2(lib).size(2),
                         _nt2(lib).size(0), _nt2(lib).size(-1)),
    "irregular": lambda lib: _nt2(lib).size(1),
    "irregular last": lambda lib: _nt(lib).size(-1),
    "out of range": lambda lib: _nt(lib).size(2),
    "shape": lambda lib: _nt(lib).shape,
    "size()": lambda lib: _nt(lib).size(),
    "stride": lambda lib: _nt(lib).stride(),
    "unbind": lambda lib: _nt2(lib).unbind(),
    "padded": lambda lib: _nt(lib).to_padded_tensor(0.0),
    "padded 2-d": lambda lib: _nt2(lib).to_padded_tensor(-1.0),
    "padded size": lambda lib: lib.nested.to_padded_tensor(_nt(lib), -1.0, (2, 6)),
    "unary": lambda lib: _nt(lib).sin(),
    "unary chain": lambda lib: _nt(lib).abs().neg().cos(),
    "unsupported unary": lambda lib: _nt(lib).exp(),
    "in place": lambda lib: _nt(lib).abs_().mul_(2).add_(_nt(lib)),
    "function": lambda lib: lib.tanh(_nt2(lib)),
    "functional": lambda lib: lib.nn.functional.relu(_nt(lib) - 3),
    "add nested": lambda lib: _nt(lib) + _nt(lib),
    "mul scalar": lambda lib: _nt2(lib) * 2,
    "gelu": lambda lib: lib.nn.functional.gelu(_nt(lib)),
    "div": lambda lib: _nt(lib) / 4,
    "ints": lambda lib: lib.nested.nested_tensor([[1, 2], [3]]),
    "dtype": lambda lib: lib.nested.nested_tensor([lib.ones(2), lib.ones(3)],
                                                  dtype=lib.float64),
    "requires_grad": lambda lib: lib.nested.nested_tensor([lib.ones(2, 3)], requires_grad=True),
    "empty": lambda lib: lib.nested.nested_tensor([]),
    "dims differ": lambda lib: lib.nested.nested_tensor([lib.ones(2), lib.ones(2, 3)]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_nested_as_torch(case):
    assert _outcome(lambda: CASES[case](ember)) == _outcome(lambda: CASES[case](torch))


def test_padded_gradient_flows_to_components_as_torch():
    grads = []
    for lib in (torch, ember):
        a = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        b = lib.ones(4, 3, requires_grad=True)
        nt = lib.nested.as_nested_tensor([a, b])
        weights = lib.arange(24.0).reshape(2, 4, 3)
        (nt.to_padded_tensor(0.0) * weights).sum().backward()
        grads.append((a.grad.numpy().tolist(), b.grad.numpy().tolist(), nt.requires_grad))
    assert grads[0] == grads[1]


def test_unsupported_functions_are_refused_by_name():
    with pytest.raises(NotImplementedError, match="aten::sum.*NestedTensorCPU"):
        _nt(ember).sum()
    with pytest.raises(NotImplementedError, match="strided layout only"):
        ember.nested.nested_tensor([ember.ones(2)], layout=ember.sparse_coo)
    with pytest.raises(RuntimeError, match="add does not support broadcasting"):
        _nt(ember) + _nt2(ember)
