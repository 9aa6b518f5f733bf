"""ember's argument parsing against PyTorch's PythonArgParser: the same call in both libraries
accepts and converts the same values (NumPy ints, `__index__` objects, 0-d integer tensors where
an int is taken; NumPy numbers and 0-d tensors where a Scalar is) and refuses the same ones with
the same exception type (and, where PyTorch names one argument, the same message). Also the
legacy constructors, float16/bfloat16 add's alpha and numbers out of a reduced float's range."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


class Index:
    """Not an int, but has __index__: a SymInt argument takes it, an int argument does not."""

    def __index__(self):
        return 1


def _env(lib):
    return {"torch": lib, "np": np, "Index": Index,
            "x": lib.arange(6.).reshape(2, 3), "h": lib.ones(3, dtype=lib.float16),
            "b": lib.ones(3, dtype=lib.bfloat16), "i": lib.arange(6).reshape(2, 3),
            "s": lib.tensor(2), "v": lib.arange(6.)}


def _outcome(lib, src):
    try:
        return "ok", eval(src, _env(lib))
    except Exception as e:  # the outcome compared is the exception itself
        return "raised", e


def _plain(r):
    if hasattr(r, "tolist") and hasattr(r, "dtype"):
        return str(r.dtype).replace("ember.", "torch."), tuple(r.shape), r.float().tolist() \
            if "bfloat16" in str(r.dtype) else r.tolist()
    if isinstance(r, (tuple, list)):
        return tuple(_plain(v) for v in r)
    return r


def _same(src, message=False, values=True):
    (ek, e), (tk, t) = _outcome(ember, src), _outcome(torch, src)
    assert ek == tk, f"{src}: ember {ek} {e!r}, torch {tk} {t!r}"
    if ek == "raised":
        assert type(e).__name__ == type(t).__name__, f"{src}: {e!r} vs {t!r}"
        if message:
            assert str(e).splitlines()[0] == str(t).splitlines()[0]
    elif values:
        assert _plain(e) == _plain(t), src
    else:
        assert (str(e.dtype).replace("ember.", "torch."), tuple(e.shape)) == \
            (str(t.dtype), tuple(t.shape)), src


# what an int, SymInt or int list takes beside Python ints
ACCEPTED = """x.view(np.int64(6)) | x.view(np.int64(2), 3) | x.view((np.int64(2), 3)) | x.view(s * 3)
    | x.view(s, 3) | x.view(np.uint8(6)) | x.view(torch.tensor(6)) | x.view(Index(), 6)
    | x.view((2, torch.tensor([3]))) | x.reshape(np.int64(3), 2) | torch.reshape(x, (np.int64(3), 2))
    | torch.chunk(x, np.int64(2)) | x.chunk(np.int64(2), np.int64(1))
    | x.unsqueeze(0).squeeze(np.int64(0)) | x.unsqueeze(0).squeeze((np.int64(0),))
    | torch.roll(x, np.int64(1), np.int64(1)) | torch.movedim(x, np.int64(0), np.int64(1))
    | x.expand(np.int64(2), 2, 3) | x.repeat(np.int64(2), 1) | x.permute(np.int64(1), 0)
    | torch.narrow(x, np.int64(1), np.int64(0), np.int64(2)) | x.narrow(0, 0, Index())
    | x.select(np.int64(0), np.int64(1)) | x.transpose(np.int64(0), np.int64(1))
    | x.unsqueeze(torch.tensor(0, dtype=torch.uint8)) | torch.sum(x, dim=np.int64(0))
    | x.sum(np.int64(1)) | torch.zeros(np.int64(3)) | torch.ones((np.int64(2), 3))
    | torch.full((np.int64(2),), 1.0) | x.flatten(np.int64(0)) | torch.cumsum(x, np.int64(1))
    | torch.topk(v, np.int64(2)) | torch.cat([x, x], np.int64(0)) | x.flip(np.int64(0))
    | x.tile((np.int64(2),)) | x.new_zeros(np.int64(2)) | x.sum_to_size(np.int64(1), 3)
    | x.unfold(np.int64(1), np.int64(2), np.int64(1)) | x.diagonal(np.int64(0))
    | torch.add(x, x, alpha=np.int64(2)) | torch.add(x, x, alpha=torch.tensor(2.))
    | torch.add(h, np.float64(2.5)) | i + np.int64(1) | x.fill_(np.float64(2))
    | x.fill_(torch.tensor(2.)) | torch.full((2,), torch.tensor(2.))
    | x.view(size=(3, 2)) | torch.sum(x, dtype=float)
    | x.size(np.int64(1)) | x.split([np.int64(1), 1])
    | torch.nn.functional.pad(x, (np.int64(1), 1)) | x.split(torch.tensor(1))
    | torch.nn.functional.one_hot(torch.tensor([0, 1]), np.int64(3))
    | torch.nn.functional.max_pool2d(x[None, None], (np.int64(1), 2))
    | torch.nn.functional.avg_pool2d(x[None, None], np.int64(1))
    | torch.nn.functional.conv1d(x[None], x[:, None, :2], stride=np.int64(1))
    | torch.nn.functional.interpolate(x[None, None], size=(np.int64(4), 6))
    | torch.nn.functional.interpolate(x[None, None], size=np.int64(4))
    | torch.pow(2, x) | torch.pow(x, 2) | torch.remainder(7, i + 1) | torch.remainder(x, 2)
    | torch.bitwise_and(3, i) | torch.xlogy(2, v) | torch.float_power(2, x)
    | torch.special.zeta(2., v + 2) | torch.special.xlog1py(x, 2.)
    | torch.special.chebyshev_polynomial_t(0.5, i) | torch.add(2, 3) | torch.mul(2, 3.5)"""

# what PyTorch's parser refuses; PyTorch names the argument in these messages
REFUSED_NAMED = """x.transpose(0, 1.0) | x.transpose(0, True) | x.transpose(0, "a")
    | x.transpose(0, None) | x.transpose(0, Index()) | x.transpose(0, np.bool_(True))
    | x.select(0, 1.5) | x.unsqueeze(0.0) | x.unsqueeze(torch.tensor([0]))
    | x.unsqueeze(torch.tensor(0.)) | torch.cumsum(x, 1.0)
    | x.roll(1.0) | x.roll(1, 0.0) | x.flip([0.0]) | x.flip(0.0) | x.flip((True,))
    | torch.flatten(x, 0.0) | torch.softmax(x, 0.0) | x.argmax(0.0) | x.argmax(True) | x.topk(2.0) | torch.chunk(x, 2.0) | x.unfold(0, 1, 1.0)
    | torch.stack([x, x], "a") | torch.cat([x, x], 0.0) | x.gather(0.0, torch.tensor([[0]]))
    | x.index_select(0.0, torch.tensor([0])) | x.sum(0, 1) | x.sum(0, None)
    | x.sum(0, np.bool_(True)) | torch.add(x, "a") | torch.add(x, None) | x.add("a")
    | x.mul("a") | torch.mul(x, [1, 2, 3]) | torch.add(x, x, alpha="a")
    | torch.add(x, x, alpha=None) | torch.add(x, x, alpha=torch.tensor([2.]))
    | torch.add(x, x, alpha=torch.tensor(2., requires_grad=True)) | torch.add(x, Index())
    | torch.addcmul(x, x, x, value="a") | x.sub(1, alpha="a") | x.tril(0.5) | x.kthvalue(1.0)
    | torch.full((2,), "a") | torch.full((2,), None) | torch.full((2,), torch.tensor([2.]))
    | torch.full(2, 1.) | torch.full((2.0,), 1.) | torch.full_like(x, "a")
    | x.new_full((2,), "a") | x.view(2, 3.0) | x.view((2, 3.0)) | x.reshape(2, 3.0)
    | x.expand(2, 3.0) | x.permute(1.0, 0) | x.repeat(2.0, 1) | torch.zeros(2, 3.0)
    | torch.zeros((2, 3.0)) | torch.eye(2.0) | torch.eye(True) | torch.prod(x, 0, 1)
    | torch.randperm(3.0) | torch.tril_indices(3.0, 3) | torch.ones(True)
    | x.size(True) | x.size(1.0) | torch.nn.functional.pad(x, (1.0, 1))
    | torch.nn.functional.pad(x, (1.5, 1)) | torch.nn.functional.one_hot(torch.tensor([0]), 3.0)
    | torch.nn.functional.one_hot(torch.tensor([0]), True)
    | torch.nn.functional.max_pool2d(x[None, None], 2.0)
    | torch.nn.functional.max_pool1d(x[None], 1, 1.0)
    | torch.nn.functional.avg_pool2d(x[None, None], (1, 1.0))
    | torch.nn.functional.interpolate(x[None, None], size=(2.0, 2))"""

# refused with the same exception type (PyTorch's message lists its overloads)
REFUSED = """x.view(2.0, 3) | x.view([2.0, 3]) | x.view("a") | x.view(None) | x.view(True, 6)
    | x.view(torch.tensor(6.)) | x.view(np.float64(6)) | x.view(shape=(2, 3))
    | x.sum(1.0) | x.sum(dim=1.0) | x.sum("a") | x.sum(dim=(0.0,)) | x.narrow(0, 0, 1.0)
    | x.squeeze(0.0) | x.squeeze(True) | x.std(0.0) | x.mean("a") | x.max(0.0) | x.max(True)
    | x.prod(0.0) | x.movedim(0.0, 1) | torch.sum(x, dtype="a") | torch.sum(x, dtype=1)
    | torch.div(x, x, rounding_mode=1) | x.fill_("a") | x.fill_(None)
    | x.fill_(torch.tensor([1., 2.])) | x.masked_fill(x > 1, "a") | torch.clamp(x, "a")
    | torch.where(x > 1, x, "a") | torch.eq(x, "a") | torch.lerp(x, x, "a")
    | torch.split(x, np.int64(2), 1) | x.unsqueeze(dim="a") | x.flatten(0.0)
    | x.softmax(0.0) | x.chunk(2.0) | x.squeeze(True) | x.sort(0, 1) | x.max(1, 1) | torch.max(x, 1, 1) | x.prod(0, 1)
    | x.index_fill(0, torch.tensor([0]), "a") | torch.randint(0, 5.0, (2,))
    | torch.linspace(0, 1, 3.0) | torch.pow(2, 3) | torch.remainder(2, 3)
    | torch.bitwise_and(2, 3) | torch.bitwise_left_shift(2, 3) | torch.xlogy(2, 3)
    | torch.float_power(2, 3) | torch.special.zeta(2., 3.) | torch.special.xlog1py(2, 3)
    | torch.special.legendre_polynomial_p(0.5, 2) | x.split(True) | x.split(1.5) | x.split(np.int64(1)) | torch.split(x, True)
    | torch.nn.functional.interpolate(x[None, None], size=2.0)
    | torch.nn.functional.conv2d(x[None, None], x[None, None, :1, :1], stride=1.0)
    | torch.nn.functional.conv1d(x[None], x[:, None, :2], padding=(1.5,))
    | torch.nn.functional.max_pool2d(x[None, None], 1, return_indices=True, stride=1.0)"""

# the legacy constructors (uninitialized memory: dtype and shape compared)
LEGACY_SHAPES = """torch.Tensor(torch.Size([2, 3])) | torch.Tensor(2, 3) | torch.FloatTensor(2, 3)
    | torch.LongTensor(2, 3) | torch.Tensor(np.int64(2)) | torch.Tensor(np.array(3))
    | torch.Tensor(size=(2,)) | torch.IntTensor(torch.Size([2])) | x.new(2, 3)
    | x.new(torch.Size([2])) | torch.Tensor(2, 3, device="cpu") | torch.Tensor()"""
LEGACY = """torch.Tensor([1, 2]) | torch.Tensor((2, 3)) | torch.Tensor([]) | torch.Tensor(x)
    | torch.Tensor(torch.tensor(3)) | torch.Tensor(np.array([1, 2])) | torch.DoubleTensor((1, 2))
    | torch.LongTensor([1.5, 2]) | torch.Tensor([[1, 2], [3, 4]]) | x.new([1, 2])
    | torch.Tensor(2.5) | torch.Tensor("a") | torch.Tensor(2, 3.0)
    | torch.Tensor(torch.Size([2, 3]), 1) | torch.Tensor(2, dtype=torch.float64)
    | torch.Tensor((2,), size=(2,)) | torch.LongTensor(torch.tensor([1.]))"""

# float16/bfloat16: add's alpha is rounded to the dtype (and checked against its range); a
# number beyond a reduced float's range raises in a fill, and is inf where it becomes a tensor
REDUCED = """torch.add(h, h * 100, alpha=1.0001) | torch.sub(h * 1000, h, alpha=0.1)
    | torch.sub(b, b * 100, alpha=0.3) | b.sub(b * 7, alpha=0.3) | h.add_(h * 3, alpha=0.1)
    | torch.rsub(b, b * 100, alpha=0.3) | torch.add(h, h * 3, alpha=70000)
    | torch.zeros(2, dtype=torch.float16).add(1, alpha=70000) | torch.add(h, 3, alpha=0.1)
    | torch.full((2,), 70000, dtype=torch.float16) | torch.full((2,), 1e39, dtype=torch.bfloat16)
    | torch.full((2,), 300, dtype=torch.uint8) | h.fill_(70000) | torch.full_like(h, 70000)
    | h.new_full((2,), 70000) | torch.tensor(70000, dtype=torch.float16)
    | torch.tensor(1e39, dtype=torch.bfloat16) | torch.scalar_tensor(70000, dtype=torch.float16)
    | torch.scalar_tensor(1e39, dtype=torch.float32) | torch.scalar_tensor(300, dtype=torch.uint8)
    | torch.where(torch.tensor([True, False]), h[:2], 70000)
    | torch.where(torch.tensor([True, False]), torch.zeros(2, dtype=torch.int8), 300)
    | h.fill_(torch.tensor(70000.)) | torch.zeros(2, dtype=torch.int8).fill_(torch.tensor(300))
    | torch.zeros(2, dtype=torch.float16) + 70000 | torch.scalar_tensor(1e39, dtype=torch.float16)
    | torch.where(torch.tensor([True, False]), h[:2], 1e39)"""


def _cases(text):
    return [c.strip() for c in text.split("|")]


@pytest.mark.parametrize("src", _cases(ACCEPTED))
def test_accepted(src):
    _same(src)


@pytest.mark.parametrize("src", _cases(REFUSED_NAMED))
def test_refused_naming_the_argument(src):
    _same(src, message=True)


@pytest.mark.parametrize("src", _cases(REFUSED))
def test_refused(src):
    _same(src)


@pytest.mark.parametrize("src", _cases(LEGACY_SHAPES))
def test_legacy_constructor_sizes(src):
    _same(src, values=False)


@pytest.mark.parametrize("src", _cases(LEGACY))
def test_legacy_constructor_data(src):
    _same(src)


@pytest.mark.parametrize("src", _cases(REDUCED))
def test_reduced_float_scalars(src):
    _same(src)


def test_generated_binding_checks_after_torch_function():
    """The checks run after `__torch_function__` had its turn: a subclass that handles a call
    sees the argument as it was given."""
    seen = []

    class Spy(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(args)
            return "handled"

    t = ember.ones(2, 3).as_subclass(Spy)
    assert t.transpose(0, "a") == "handled" and seen[-1][2] == "a"
