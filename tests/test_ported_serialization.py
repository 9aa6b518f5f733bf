"""Checks ported from PyTorch's test/test_serialization.py (file paths, file-like objects and
BytesIO, map_location forms, the weights_only allow-list and its errors, legacy and zip formats,
shared storages and views saved once, nested containers, dtypes), run against torch and ember;
and files written by one library loaded by the other."""
import collections
import io
import os
import pathlib
import pickle
import tempfile

import numpy as np
import pytest
import torch

import ember
from _ported import outcomes as _errs, same


class Point:
    """A user class: rejected by the weights-only unpickler until allow-listed."""
    def __init__(self, x=0):
        self.x = x

    def __eq__(self, other):
        return type(other) is Point and other.x == self.x


PairTuple = collections.namedtuple("PairTuple", "a b")


def _roundtrip(L, obj, legacy=False, **load_kw):
    buf = io.BytesIO()
    L.save(obj, buf, _use_new_zipfile_serialization=not legacy)
    buf.seek(0)
    return L.load(buf, **load_kw)


def _nested_containers(L):
    x = L.arange(6.).view(2, 3)
    obj = {"a": [x, (x[0], {"b": x.t()})], "c": collections.OrderedDict([("z", 1), ("y", [2.5, None])]),
           "d": (True, "s", b"bytes", 3 + 4j), "e": L.Size([2, 3]), "f": L.float16, "g": L.device("cpu"),
           "h": {1, 2}, "i": slice(1, 5, 2), "j": frozenset({3})}
    out = _roundtrip(L, obj)
    return out, type(out["c"]).__name__, out["a"][1][1]["b"].stride(), out["a"][1][0].storage_offset()


def _all_dtypes(L):
    out = []
    for name in ["float32", "float64", "float16", "bfloat16", "complex64", "complex128", "int8", "uint8",
                 "int16", "int32", "int64", "bool", "uint16", "uint32", "uint64"]:
        dt = getattr(L, name)
        x = L.arange(-3, 3).to(dt) if name != "bool" else L.tensor([True, False])
        y = _roundtrip(L, x)
        out.append((y.dtype, y.to(L.float64) if not dt.is_complex else y.real.to(L.float64)))
    return out


def _views_share_storage(L):
    x = L.arange(12.)
    v = x[2:8].view(2, 3)
    a, b, c = _roundtrip(L, [x, v, v.t()])
    a[3] = 100.
    return b, c, b.storage_offset(), c.stride(), \
        b.untyped_storage().data_ptr() == a.untyped_storage().data_ptr(), \
        b.untyped_storage().nbytes()


def _storage_saved_once(L):
    x = L.zeros(10000)
    sizes = []
    for obj in [x, [x, x], [x, x[5:], x.view(100, 100)]]:
        buf = io.BytesIO()
        L.save(obj, buf)
        sizes.append(buf.getbuffer().nbytes // 1000)
    return sizes


def _slice_saves_whole_storage(L):
    x = L.arange(1000.)
    y = _roundtrip(L, x[10:12])
    return y, y.untyped_storage().nbytes(), y.storage_offset()


def _clone_saves_small(L):
    x = L.arange(1000.)
    return _roundtrip(L, x[10:12].clone()).untyped_storage().nbytes()


def _file_paths(L):
    with tempfile.TemporaryDirectory() as d:
        out = []
        x = L.arange(4.)
        for path in [os.path.join(d, "a.pt"), pathlib.Path(d) / "b.pt"]:
            L.save(x, path)
            out.append(L.load(path))
        with open(os.path.join(d, "c.pt"), "wb") as f:
            L.save({"x": x}, f)
        with open(os.path.join(d, "c.pt"), "rb") as f:
            out.append(L.load(f))
        out.append(L.load(os.path.join(d, "c.pt"), mmap=True)["x"])
        out.extend(_errs(L, [lambda: L.load(os.path.join(d, "missing.pt")),
                             lambda: L.save(x, os.path.join(d, "nodir", "x.pt")),
                             lambda: L.save(x, d)]))
        L.save(x, os.path.join(d, "old.pt"), _use_new_zipfile_serialization=False)
        out.append(L.load(os.path.join(d, "old.pt")))
        with open(os.path.join(d, "old.pt"), "rb") as f:
            out.append(f.read(2))
        return [o if not isinstance(o, tuple) else o[0] for o in out]


def _file_like_errors(L):
    class WriteOnly:
        def write(self, b):
            return len(b)
    return [_errs(L, [lambda: L.load(io.BytesIO(b""))])[0][0]] + _errs(L, [lambda: L.load(io.BytesIO(b"not a checkpoint")),
                     lambda: L.save(L.ones(1), WriteOnly()) is None])


def _map_location_forms(L):
    x = {"w": L.arange(3.), "n": L.tensor([1, 2])}
    out = []
    for ml in ["cpu", L.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage, None]:
        y = _roundtrip(L, x, map_location=ml)
        out.append((y["w"], y["n"], y["w"].device))
    seen = []
    _roundtrip(L, x, map_location=lambda storage, loc: seen.append(loc) or storage)
    out.append(seen)
    out.append(_roundtrip(L, x, map_location="meta")["w"].device)
    return out


def _weights_only_default_types(L):
    obj = {"t": L.ones(2), "sd": collections.OrderedDict(w=L.zeros(1)), "size": L.Size([1]),
           "dtype": L.int8, "nums": [1, 2.5, "s", None, True, (1,)], "dev": L.device("cpu"),
           "p": L.nn.Parameter(L.ones(1)), "set": {1}, "complex": 1j}
    return _roundtrip(L, obj, weights_only=True)


def _weights_only_rejects_class(L):
    _roundtrip(L, {"p": Point(3)}, weights_only=True)


def _weights_only_rejects_namedtuple(L):
    _roundtrip(L, PairTuple(1, 2), weights_only=True)


def _weights_only_message_parts(L):
    try:
        _roundtrip(L, {"p": Point(3)}, weights_only=True)
    except Exception as e:
        msg = str(e)
    return [part in msg for part in [
        "Weights only load failed", "weights_only", "Unsupported global: GLOBAL test_ported_serialization.Point",
        "add_safe_globals([test_ported_serialization.Point])", "safe_globals([test_ported_serialization.Point])",
        "https://pytorch.org/docs/stable/generated/torch.load.html"]]


def _weights_only_allow_list(L):
    ser = L.serialization
    buf = io.BytesIO()
    L.save({"p": Point(3), "t": PairTuple(L.ones(1), 2)}, buf)
    out = []
    buf.seek(0)
    with ser.safe_globals([Point, PairTuple]):
        out.append(L.load(buf, weights_only=True))
        out.append(sorted(str(g) for g in ser.get_safe_globals() if g in (Point, PairTuple)))
    # (torch's own list also holds entries it registers itself, such as its nested tensor)
    out.append([str(g) for g in ser.get_safe_globals() if g in (Point, PairTuple)])
    ser.add_safe_globals([(Point, "test_ported_serialization.Point")])
    try:
        buf.seek(0)
        out.append(_errs(L, [lambda: L.load(buf, weights_only=True)]))
        ser.add_safe_globals([PairTuple])
        buf.seek(0)
        out.append(L.load(buf, weights_only=True))
        out.append([g for g in ser.get_safe_globals() if g in (Point, PairTuple)])
    finally:
        ser.clear_safe_globals()
    out.append(ser.get_safe_globals())
    return [o if not isinstance(o, list) or not o or not isinstance(o[0], tuple) else o[0][0] for o in out]


def _weights_only_unsafe_globals(L):
    buf = io.BytesIO()
    L.save({"p": Point(1), "q": PairTuple(1, 2), "t": L.ones(1)}, buf)
    buf.seek(0)
    return sorted(L.serialization.get_unsafe_globals_in_checkpoint(buf))


def _weights_only_builtin_callable(L):
    class Evil:
        def __reduce__(self):
            return (os.getcwd, ())
    _roundtrip(L, Evil(), weights_only=True)


def _legacy_shared_and_errors(L):
    x = L.arange(4.)
    s = _roundtrip(L, x.untyped_storage())
    c, d = _roundtrip(L, [x, x[1:]], legacy=True)
    c[1] = 9.
    return type(s).__name__, bytes(s)[:8], d, _errs(L, [lambda: _roundtrip(L, [x, x.view(L.int32)], legacy=True),
                                      lambda: _roundtrip(L, [x, x.view(L.int32)])[1]])


def _legacy_format(L):
    x = L.arange(6.).view(2, 3)
    buf = io.BytesIO()
    L.save({"x": x, "v": x[1], "i": L.tensor([1, 2], dtype=L.int16)}, buf, _use_new_zipfile_serialization=False)
    raw = buf.getvalue()
    buf.seek(0)
    y = L.load(buf)
    buf.seek(0)
    y2 = L.load(buf, weights_only=True)
    y["x"][1, 0] = -1
    return y, y2, raw[:2] == b"PK", raw[:2]


def _zip_format_header(L):
    buf = io.BytesIO()
    L.save(L.ones(1), buf)
    raw = buf.getvalue()
    import zipfile
    names = zipfile.ZipFile(io.BytesIO(raw)).namelist()
    return raw[:2], sorted(n.split("/", 1)[1] for n in names if "/" in n)


def _pickle_protocol_and_module(L):
    out = []
    for proto in [2, 4]:
        buf = io.BytesIO()
        L.save({"x": L.ones(2)}, buf, pickle_protocol=proto)
        buf.seek(0)
        out.append(L.load(buf)["x"])
    buf = io.BytesIO()
    L.save([1, L.ones(1)], buf, pickle_module=pickle)
    buf.seek(0)
    out.append(L.load(buf, pickle_module=pickle, weights_only=False))
    out.extend(_errs(L, [lambda: L.load(io.BytesIO(buf.getvalue()), pickle_module=pickle, weights_only=True)]))
    return out


def _tensor_attributes_kept(L):
    x = L.ones(2, 3, requires_grad=True)
    p = L.nn.Parameter(L.zeros(2), requires_grad=False)
    t = L.arange(24.).view(2, 3, 4).permute(2, 0, 1)
    cl = L.ones(1, 2, 3, 3).contiguous(memory_format=L.channels_last)
    x2, p2, t2, cl2 = _roundtrip(L, [x, p, t, cl])
    return (x2.requires_grad, x2.is_leaf, type(p2).__name__, p2.requires_grad, t2.stride(), t2,
            cl2.is_contiguous(memory_format=L.channels_last))


def _module_and_state_dict(L):
    L.manual_seed(0)
    m = L.nn.Sequential(L.nn.Linear(2, 3), L.nn.BatchNorm1d(3))
    sd = _roundtrip(L, m.state_dict(), weights_only=True)
    m2 = _roundtrip(L, m, weights_only=False)
    return type(sd).__name__, list(sd), sd["1.num_batches_tracked"], type(m2).__name__, m2[0].weight, \
        getattr(sd, "_metadata", {}).get("0")


def _sparse_roundtrip(L):
    i = L.tensor([[0, 1, 1], [2, 0, 2]])
    s = L.sparse_coo_tensor(i, L.tensor([3., 4., 5.]), (2, 3))
    csr = L.tensor([[0., 1.], [2., 0.]]).to_sparse_csr()
    a, b = _roundtrip(L, [s, csr], weights_only=True)
    return a.layout, a.to_dense(), b.layout, b.to_dense()


def _typed_storage_roundtrip(L):
    import warnings
    x = L.arange(4.)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s, y = _roundtrip(L, [x.storage(), x[1:]])
        s[1] = 7.
        return type(s).__name__, s.dtype, s.size(), list(s), y


def _save_bad_objects(L):
    return _errs(L, [lambda: L.save(lambda x: x, io.BytesIO())])


def _weights_only_full_messages(L):
    """The whole weights-only error text for the common refusals, as torch words it."""
    def reduce_to(fn, *args):
        class R:
            def __reduce__(self):
                return (fn, args)
        return R()
    out = []
    for obj in [Point(1), PairTuple(1, 2), reduce_to(print, "x"), reduce_to(os.system, "true"),
                reduce_to(getattr, Point, "x"), {"f": _roundtrip}]:
        buf = io.BytesIO()
        L.save(obj, buf)
        buf.seek(0)
        try:
            L.load(buf, weights_only=True)
            out.append(None)
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


def _load_endianness(L):
    """A checkpoint without a byteorder record is read as little endian unless
    set_default_load_endianness says otherwise (test_serialization's byteorder tests)."""
    ser = L.serialization
    import zipfile
    full = io.BytesIO()
    L.save(L.tensor([1, 256], dtype=L.int32), full)
    buf = io.BytesIO()  # the same archive without its byteorder record, as old PyTorch wrote it
    with zipfile.ZipFile(full) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as dst:
        for name in src.namelist():
            if not name.endswith("/byteorder"):
                dst.writestr(name, src.read(name))
    out = [ser.get_default_load_endianness()]
    try:
        for e in [ser.LoadEndianness.LITTLE, ser.LoadEndianness.BIG, ser.LoadEndianness.NATIVE, None]:
            ser.set_default_load_endianness(e)
            buf.seek(0)
            out.append((str(ser.get_default_load_endianness()), L.load(buf)))
        out.append(_errs(L, [lambda: ser.set_default_load_endianness("big")]))
    finally:
        ser.set_default_load_endianness(None)
    return out


def _mmap_options(L):
    import mmap
    ser = L.serialization
    out = [ser.get_default_mmap_options() == mmap.MAP_PRIVATE]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.pt")
        L.save(L.zeros(4), path)
        private = L.load(path, mmap=True)
        private[0] = 5.
        out.append(L.load(path))
        with ser.set_default_mmap_options(mmap.MAP_SHARED):
            out.append(ser.get_default_mmap_options() == mmap.MAP_SHARED)
            shared = L.load(path, mmap=True)
            shared[1] = 7.
            del shared
        out.append(L.load(path))
        out.append(ser.get_default_mmap_options() == mmap.MAP_PRIVATE)
    out.append(_errs(L, [lambda: ser.set_default_mmap_options(5)]))
    return out


def _serialization_helpers(L):
    ser = L.serialization
    import numpy
    return [ser.location_tag(L.ones(1).untyped_storage()), ser.default_restore_location(
        L.ones(2).untyped_storage(), "cpu").nbytes(), ser.check_module_version_greater_or_equal(numpy, (1, 0)),
        ser.check_module_version_greater_or_equal(numpy, (99,)), issubclass(ser.SourceChangeWarning, Warning),
        _errs(L, [lambda: ser.default_restore_location(L.ones(2).untyped_storage(), "cuda:0")])[0][0]]


CHECKS = {
    "load_endianness": _load_endianness,
    "mmap_options": _mmap_options,
    "serialization_helpers": _serialization_helpers,
    "weights_only_full_messages": _weights_only_full_messages,
    "nested_containers": _nested_containers,
    "all_dtypes": _all_dtypes,
    "views_share_storage": _views_share_storage,
    "storage_saved_once": _storage_saved_once,
    "slice_saves_whole_storage": _slice_saves_whole_storage,
    "clone_saves_small": _clone_saves_small,
    "file_paths": _file_paths,
    "file_like_errors": _file_like_errors,
    "map_location_forms": _map_location_forms,
    "weights_only_default_types": _weights_only_default_types,
    "weights_only_rejects_class": (_weights_only_rejects_class, "Unsupported global: GLOBAL "
                                   "test_ported_serialization.Point was not an allowed global by default"),
    "weights_only_rejects_namedtuple": (_weights_only_rejects_namedtuple, "Weights only load failed"),
    "weights_only_message_parts": _weights_only_message_parts,
    "weights_only_allow_list": _weights_only_allow_list,
    "weights_only_unsafe_globals": _weights_only_unsafe_globals,
    "weights_only_builtin_callable": (_weights_only_builtin_callable,
                                      "Trying to load unsupported GLOBAL posix.getcwd whose module posix is blocked"),
    "legacy_format": _legacy_format,
    "legacy_shared_and_errors": _legacy_shared_and_errors,
    "zip_format_header": _zip_format_header,
    "pickle_protocol_and_module": _pickle_protocol_and_module,
    "tensor_attributes_kept": _tensor_attributes_kept,
    "module_and_state_dict": _module_and_state_dict,
    "sparse_roundtrip": _sparse_roundtrip,
    "typed_storage_roundtrip": _typed_storage_roundtrip,
    "save_bad_objects": _save_bad_objects,
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_serialization(name):
    check = CHECKS[name]
    fn, match = check if isinstance(check, tuple) else (check, None)
    same(fn, match=match)


def _sample(L):
    x = L.arange(12.).view(3, 4)
    return {"x": x, "v": x[1:], "i": L.tensor([1, 2], dtype=L.int64), "h": L.ones(2, dtype=L.bfloat16),
            "sd": collections.OrderedDict(w=L.ones(2, 2)), "n": [1, "two", 3.0], "size": L.Size([2])}


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("writer,reader", [(torch, ember), (ember, torch)])
def test_cross_library_files(writer, reader, legacy):
    """A checkpoint written by one library loads in the other, weights_only included."""
    buf = io.BytesIO()
    writer.save(_sample(writer), buf, _use_new_zipfile_serialization=not legacy)
    buf.seek(0)
    got = reader.load(buf, weights_only=True)
    want = _sample(reader)
    assert list(got) == list(want)
    for k in ["x", "v", "i", "h"]:
        assert str(got[k].dtype) == str(want[k].dtype)
        np.testing.assert_array_equal(got[k].float().numpy(), want[k].float().numpy())
    got["x"][2, 0] = -5.0
    assert float(got["v"][1, 0]) == -5.0  # the view still shares its base's storage
    assert type(got["sd"]).__name__ == "OrderedDict" and got["n"] == want["n"]
    assert tuple(got["size"]) == (2,) and type(got["size"]).__name__ == "Size"
