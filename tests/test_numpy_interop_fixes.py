"""Fixes found by running PyTorch's test_numpy_interop.py and the whole of
test_tensor_creation_ops.py on ember, each checked against PyTorch on the same inputs: conj() of
a sparse COO tensor, repeat_interleave's checks of its repeats, torch.tensor of a Python object
that is only a sequence (__len__ and __getitem__), size-taking factories called with no size at
all, NumPy scalars read as PyTorch's parser reads a Scalar, the NumPy arrays (byte order,
negative strides, dtypes) and complex values torch.tensor refuses, np.asarray of a tensor that
requires grad, and from_file's requires_grad and errors."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(fn):
    """(exception class, message) if fn raises, else ("ok", dtype, shape, values)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn()
    except Exception as e:  # noqa: BLE001 - the class itself is what is compared
        return type(e).__name__, str(e)
    if getattr(r, "is_sparse", False):
        r = r.to_dense()
    if hasattr(r, "dtype") and hasattr(r, "tolist"):
        return "ok", str(r.dtype), tuple(r.shape), r.tolist()
    return "ok", r


def _same(fn):
    assert _outcome(lambda: fn(ember)) == _outcome(lambda: fn(torch))


_COMPLEX = [[1 + 2j, -2 + 3j], [-1 - 2j, 3 - 2j]]


@pytest.mark.parametrize("conj", [lambda x: x.conj(), lambda x: x.conj().resolve_conj()])
def test_conj_of_a_sparse_coo_tensor_conjugates_its_values(conj):
    """A sparse tensor has no conjugate bit: conj() is conj_physical, so numpy() of it still
    refuses the sparse layout rather than the conjugate bit."""
    _same(lambda lib: conj(lib.tensor(_COMPLEX).to_sparse()))
    for lib in (ember, torch):
        y = conj(lib.tensor(_COMPLEX).to_sparse())
        assert not y.is_conj() and str(y.layout).endswith("sparse_coo")
    _same(lambda lib: lib.tensor(_COMPLEX).to_sparse().conj().numpy(force=True))
    _same(lambda lib: lib.tensor([[1.0, 0.0]]).to_sparse().conj())


@pytest.mark.parametrize("call", [
    lambda lib: lib.repeat_interleave(lib.arange(4).reshape(2, 2)),
    lambda lib: lib.repeat_interleave(lib.arange(4.0)),
    lambda lib: lib.repeat_interleave(lib.tensor([1, 2, -1])),
    lambda lib: lib.repeat_interleave(lib.tensor([1, 2], dtype=lib.int32)),
    lambda lib: lib.repeat_interleave(lib.tensor([[1, 2], [3, 4]]), lib.arange(9).reshape(3, 3),
                                      dim=0),
    lambda lib: lib.repeat_interleave(lib.tensor([[1, 2], [3, 4]]), lib.tensor([1.0, 2.0]),
                                      dim=0),
    lambda lib: lib.repeat_interleave(lib.tensor([[1, 2], [3, 4]]), lib.tensor([1, 2]), dim=0),
])
def test_repeat_interleave_checks_its_repeats(call):
    _same(call)


class _Sequence:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class _Unreadable(_Sequence):
    def __getitem__(self, i):
        raise TypeError


@pytest.mark.parametrize("make", [lambda: _Sequence([1.0, 2.0, 3.0]), lambda: _Sequence([1, 2]),
                                  lambda: _Unreadable([1.0, 2.0])])
def test_tensor_of_a_python_sequence(make):
    _same(lambda lib: lib.tensor(make()))


@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(), lambda lib: lib.ones(), lambda lib: lib.empty(),
    lambda lib: lib.zeros(dtype=lib.float64), lambda lib: lib.empty(out=lib.ones(2)),
    lambda lib: lib.rand(generator=lib.Generator()), lambda lib: lib.ones(2).new_ones(),
    lambda lib: lib.ones(2).resize_(), lambda lib: lib.zeros(()), lambda lib: lib.zeros([]),
    lambda lib: lib.ones(size=()), lambda lib: lib.ones(2).new(), lambda lib: lib.Tensor(),
])
def test_factories_without_a_size(call):
    _same(call)


def test_rand_without_a_size_raises_type_error():
    for lib in (ember, torch):
        for fn in (lib.rand, lib.randn):
            with pytest.raises(TypeError):
                fn()


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(2, dtype=lib.int8) + np.bool_(True),
    lambda lib: np.bool_(True) + lib.ones(2, dtype=lib.int8),
    lambda lib: lib.add(lib.ones(2, dtype=lib.int8), np.bool_(True)),
    lambda lib: lib.full((2,), np.bool_(True)),
    lambda lib: lib.ones(2, dtype=lib.int8).fill_(np.bool_(True)),
    lambda lib: lib.tensor([1 + 1j]) + np.complex64(1 + 3j),
    lambda lib: lib.tensor(1 + 3j, dtype=lib.complex64) == np.complex64(1 + 3j),
    lambda lib: lib.tensor(1 + 3j, dtype=lib.complex64) != np.complex64(1 + 3j),
    lambda lib: lib.tensor(1 + 3j) == np.complex128(1 + 3j),
    lambda lib: lib.full((1,), np.complex64(1 + 2j)),
    lambda lib: np.float64(2) * lib.ones(2, dtype=lib.int8),
    lambda lib: np.int64(2) * lib.ones(2, dtype=lib.int8),
    lambda lib: lib.ones(2, dtype=lib.float16) * np.float32(2),
])
def test_numpy_scalars_are_read_as_pytorch_reads_a_scalar(call):
    """A NumPy bool is the number 1.0 to PyTorch's parser and a complex64 only its real part;
    a NumPy integer is an int and a float a float."""
    _same(call)


def _array(dtype, reverse=False):
    a = np.array([1, 2, 3], dtype=dtype)
    return a[::-1] if reverse else a


@pytest.mark.parametrize("call", [
    lambda lib: lib.tensor(_array(">f4")),
    lambda lib: lib.tensor(_array(">f4"), dtype=lib.float64),
    lambda lib: lib.as_tensor(_array(">i4")),
    lambda lib: lib.asarray(_array(">i4")),
    lambda lib: lib.from_numpy(_array(">f8")),
    lambda lib: lib.tensor(_array(np.int64, reverse=True)),
    lambda lib: lib.as_tensor(_array(np.int64, reverse=True)),
    lambda lib: lib.tensor(np.array(["a"])),
    lambda lib: lib.from_numpy(np.array([1, 2], dtype=object)),
    lambda lib: lib.tensor(np.longdouble(1.5)),
    lambda lib: lib.from_numpy(np.float64(2)),
    lambda lib: lib.tensor([1j], dtype=lib.float32),
    lambda lib: lib.tensor([1, 2j], dtype=lib.int64),
    lambda lib: lib.tensor([1j, 0], dtype=lib.bool),
    lambda lib: lib.tensor(np.array([1j]), dtype=lib.float32),
    lambda lib: lib.ones(3)[np.bool_(True)],
])
def test_arrays_and_values_torch_tensor_refuses(call):
    _same(call)


def test_numpy_of_a_tensor_that_requires_grad_is_refused():
    for lib in (ember, torch):
        t = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
            np.asarray(t)
        with pytest.raises(RuntimeError, match="requires grad"):
            np.sin(t)
        with lib.no_grad():
            assert np.asarray(t).tolist() == [1.0, 1.0]


def test_from_file(tmp_path):
    path = tmp_path / "f.bin"
    np.arange(10, dtype=np.float32).tofile(path)
    name, missing = str(path), str(tmp_path / "missing.bin")
    _same(lambda lib: lib.from_file(name, size=4, dtype=lib.float32, requires_grad=True))
    _same(lambda lib: lib.from_file(name, size=2, dtype=lib.int32, requires_grad=True))
    _same(lambda lib: lib.from_file(name, size=20, dtype=lib.float32))
    _same(lambda lib: lib.from_file(missing, size=2))


@pytest.mark.parametrize("data", [
    lambda lib: [lib.tensor([1, 2]), lib.tensor([3, 4])],
    lambda lib: [lib.ones(2), lib.ones(2)],
    lambda lib: [lib.tensor(1), lib.tensor(2.0)],
])
def test_tensor_of_a_list_of_tensors(data):
    """Each tensor in the list is one number, read as the result's kind of number."""
    _same(lambda lib: lib.tensor(data(lib)))


@pytest.mark.parametrize("call", [
    lambda lib: lib.randperm(5, dtype=lib.bool),
    lambda lib: lib.randperm(5, dtype=lib.complex64),
    lambda lib: str(lib.normal(lib.zeros(2), lib.ones(2, dtype=lib.float64)).dtype),
    lambda lib: str(lib.normal(lib.zeros(2, dtype=lib.float16), lib.ones(2)).dtype),
    lambda lib: str(lib.normal(lib.zeros(2, dtype=lib.float64), lib.ones(2)).dtype),
    lambda lib: lib.empty(2, dtype=lib.uint8).random_(-1, 1),
    lambda lib: lib.empty(2, dtype=lib.float16).uniform_(-1e6, 1),
    lambda lib: lib.randint(300, (3,), dtype=lib.uint8),
])
def test_random_factories_dtypes(call):
    _same(call)


def test_generator_clone_state():
    draws = []
    for lib in (ember, torch):
        g = lib.Generator().manual_seed(3)
        lib.rand(2, generator=g)
        c = g.clone_state()
        draws.append((c.initial_seed(), lib.rand(3, generator=c).tolist(),
                      lib.rand(3, generator=g).tolist()))
        with pytest.raises(NotImplementedError):
            g.graphsafe_get_state()
    assert draws[0] == draws[1]
