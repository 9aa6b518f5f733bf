"""Fixes found by running PyTorch's test/test_serialization.py on ember, each checked against
torch on the same inputs: the private `_open_zipfile_writer` / `_open_zipfile_reader` pair
(archives readable by the other library), loading from file-like objects (PyTorch's error for
one that cannot seek, `readinto` when there is one, `read` otherwise), the legacy format written
to a file object being flushed, `TypedStorage(wrap_storage=..., dtype=...)` and `_cdata`, empty
storages shared by tensors of different dtypes, Tensor subclasses with their own `__slots__`
(`_make_subclass`, deepcopy), and assertEqual on TypedStorages."""
import copy
import io
import tempfile

import pytest
import torch

import ember
from ember.testing._internal.common_utils import TestCase as EmberTestCase

RECORDS = {"a": b"12039810948234589", "b": b"1239081209484958", "c/d": b"94589480984058"}


class _Mock:
    """A file-like object with only the methods named (no seekable(), no fileno())."""

    def __init__(self, data, methods):
        self.buf, self.calls = io.BytesIO(data), set()
        for name in methods:
            setattr(self, name, self._traced(name))

    def _traced(self, name):
        fn = getattr(self.buf, name)

        def call(*args):
            self.calls.add(name)
            return fn(*args)
        return call


@pytest.mark.parametrize("writer,reader", [(ember, torch), (torch, ember), (ember, ember)])
def test_zipfile_writer_reader_across_libraries(writer, reader):
    buf = io.BytesIO()
    with writer.serialization._open_zipfile_writer(buf) as z:
        for key, data in RECORDS.items():
            z.write_record(key, data, len(data))
    buf.seek(0)
    with reader.serialization._open_zipfile_reader(buf) as z:
        assert {k: z.get_record(k) for k in RECORDS} == RECORDS
        assert z.has_record("byteorder") and not z.has_record("zz")
        assert sorted(z.get_all_records()) == sorted(
            [*RECORDS, "version", "byteorder", ".data/serialization_id"])


def test_zipfile_writer_to_a_path_names_the_archive_folder(tmp_path):
    records = {}
    for lib in (ember, torch):
        path = tmp_path / f"{lib.__name__}.pt"
        with lib.serialization._open_zipfile_writer(str(path)) as z:
            z.write_record("x", b"123", 3)
        with lib.serialization._open_zipfile_reader(str(path)) as z:
            records[lib] = (z.get_record("x"), z.get_record("version"))
    assert records[ember] == records[torch]


@pytest.mark.parametrize("lib", [ember, torch])
def test_load_from_unseekable_file_like_raises_pytorchs_error(lib):
    buf = io.BytesIO()
    lib.save(lib.arange(3), buf)
    with pytest.raises(AttributeError, match="You can only torch.load from a file that is "
                                             "seekable. Please pre-load the data into a buffer"):
        lib.load(_Mock(buf.getvalue(), ["read", "readline"]))


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("methods", [["read", "readline", "seek", "tell"],
                                     ["read", "readline", "seek", "tell", "readinto"]])
def test_load_from_file_like_uses_readinto_when_it_has_one(legacy, methods):
    calls = {}
    for lib in (ember, torch):
        buf = io.BytesIO()
        lib.save(lib.arange(6.).view(2, 3), buf, _use_new_zipfile_serialization=not legacy)
        f = _Mock(buf.getvalue(), methods)
        assert lib.load(f).tolist() == [[0., 1., 2.], [3., 4., 5.]]
        calls[lib] = "readinto" in f.calls
    assert calls[ember] == calls[torch] == ("readinto" in methods)


def test_legacy_save_to_a_file_object_is_flushed():
    for lib in (ember, torch):
        with tempfile.NamedTemporaryFile() as f:
            lib.save([1, lib.ones(3)], f, _use_new_zipfile_serialization=False)
            with open(f.name, "rb") as again:   # f itself still open: its buffer was flushed
                loaded = lib.load(again)
        assert loaded[0] == 1 and loaded[1].tolist() == [1., 1., 1.]


def test_typed_storage_wrap_storage_and_cdata():
    out = {}
    for lib in (ember, torch):
        a = lib.arange(4, dtype=lib.float32)
        s = lib.TypedStorage(wrap_storage=a.untyped_storage(), dtype=lib.int32)
        out[lib] = (s.tolist(), s.size(), str(s.dtype),
                    a.storage()._cdata == a[1:].storage()._cdata,
                    a.storage()._cdata == a.clone().storage()._cdata,
                    lib.TypedStorage(3, dtype=lib.float64).size(), lib.TypedStorage([1, 2]).tolist())
        with pytest.raises(RuntimeError):
            lib.TypedStorage(wrap_storage=a.untyped_storage())
    assert out[ember] == out[torch]


def test_empty_storage_shared_by_two_dtypes_saves():
    for lib in (ember, torch):
        a = lib.tensor([], dtype=lib.float32)
        s = lib.TypedStorage(wrap_storage=a.untyped_storage(), dtype=lib.int16)
        buf = io.BytesIO()
        lib.save([a, s], buf)
        buf.seek(0)
        a2, s2 = lib.load(buf)
        assert a2.dtype == lib.float32 and a2.numel() == 0 and s2.dtype == lib.int16
        b = lib.randn(2)
        with pytest.raises(RuntimeError, match="view the same data as different types"):
            lib.save([b, lib.TypedStorage(wrap_storage=b.untyped_storage(), dtype=lib.uint8)],
                     io.BytesIO())


def _slotted_subclass(lib):
    class Wrapper(lib.Tensor):
        __slots__ = ["elem", "other"]

        @staticmethod
        def __new__(cls, elem):
            r = lib.Tensor._make_subclass(cls, elem.to("meta"), elem.requires_grad)
            r.elem = elem
            return r

        def clone(self):
            return type(self)(self.elem.clone())
    return Wrapper


def test_subclass_with_own_slots():
    out = {}
    for lib in (ember, torch):
        Wrapper = _slotted_subclass(lib)
        w = Wrapper(lib.arange(3.))
        w.foo = "bar"
        c = copy.deepcopy(w)
        out[lib] = (type(w) is Wrapper, tuple(w.shape), w.device.type, w.elem.tolist(),
                    type(c) is Wrapper, c.elem.tolist(), c.elem is not w.elem, c.foo)
    assert out[ember] == out[torch]


def test_assert_equal_compares_typed_storages():
    case = EmberTestCase()
    a = ember.arange(4.)
    case.assertEqual(a.storage(), ember.arange(4.).storage())
    with pytest.raises(AssertionError):
        case.assertEqual(a.storage(), ember.arange(1., 5.).storage())


def test_private_helper_modules_pytorch_tests_import():
    """torch._utils / torch._utils_internal / torch.utils._import_utils names PyTorch's test files
    import exist and answer as torch's."""
    import torch._utils_internal as tui
    import ember._utils_internal as eui
    from ember._utils import ExceptionWrapper, _rebuild_tensor
    from ember.utils._import_utils import _check_module_exists, import_dill
    assert eui.get_file_path_2("a", "b", "c.py") == tui.get_file_path_2("a", "b", "c.py")
    assert _check_module_exists("numpy") and not _check_module_exists("no_such_module_xyz")
    assert (import_dill() is None) == (torch.utils._import_utils.import_dill() is None)
    try:
        raise ValueError("boom")
    except ValueError:
        import sys
        wrapped = ExceptionWrapper(sys.exc_info(), where="in a test")
    with pytest.raises(ValueError, match="boom"):
        wrapped.reraise()
    s = ember.arange(6.).storage()
    t = _rebuild_tensor(s, 1, (2, 2), (2, 1))
    assert t.tolist() == [[1., 2.], [3., 4.]]
