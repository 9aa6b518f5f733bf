"""torch.ops' overload objects against PyTorch's (test/test_per_overload_api.py's checks):
the packet's `op`, an op's `.out` overload and its out= semantics, `decompose`."""
import copy

import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("T", [ember, torch], ids=["ember", "torch"])
def test_packet_and_out_overload(T):
    add = T.ops.aten.add
    assert add.__module__ == add.op.__module__
    assert add.op(T.tensor(2), T.tensor(3)).item() == 5
    out = add.out
    assert out is add.out and copy.deepcopy(add) is add
    assert str(out) == "aten.add.out" and out.__name__ == "add.out"
    a, b = T.tensor(2), T.tensor(0)
    assert out(a, a, out=b) is b and b.item() == 4
    with pytest.raises(RuntimeError):
        add.Tensor(a, a, out=b)


def test_out_overload_resizes_and_casts_as_torch():
    def run(T):
        o = T.zeros(5)  # resized (torch.ops reports its deprecation warning on stderr)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = T.ops.aten.mul.out(T.ones(2, 3), T.full((3,), 2.0), out=o)
        bad = T.zeros(2, 3, dtype=T.int64)
        try:
            T.ops.aten.mul.out(T.ones(2, 3), 0.5, out=bad)
            err = None
        except RuntimeError as e:
            err = str(e)
        return tuple(r.shape), tuple(o.shape), r.sum().item(), err
    assert run(ember) == run(torch)


def test_decompose_of_a_composite_op():
    x = ember.randn(3, 4)
    for T, t in ((ember, x), (torch, torch.tensor(x.numpy()))):
        op = T.ops.aten.flatten.using_ints
        assert op.decompose(t, 0, -1).shape == (12,)
    assert ember.ops.aten.add.Tensor.decompose(x, x) is NotImplemented
