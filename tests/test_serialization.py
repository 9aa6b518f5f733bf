"""Serialization: ember.save / ember.load in PyTorch's zip format, both directions with torch;
views and shared storages; every dtype; map_location and mmap; the legacy format; plain pickle;
atomic saving; safetensors; load_state_dict(assign=True) on a meta-device model.

The safety tests (malicious pickles, fuzzing) are in test_serialization_safety.py.
"""
import copy
import io
import mmap
import os
import pickle
import stat
import struct
import subprocess
import sys
import zipfile
from collections import Counter, OrderedDict

import numpy as np
import pytest
import torch

import ember
from ember import serialization

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]


def sample(dtype, shape=(3, 4), seed=0):
    """The same values as an ember and a torch tensor."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 10
    if dtype == "bool":
        x = x > 0
    elif dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    t = torch.tensor(x).to(getattr(torch, dtype))
    return ember.tensor(x).to(getattr(ember, dtype)), t


def as_numpy(t):
    t = t.detach()
    if str(t.dtype) == "torch.bfloat16":
        t = t.float()
    return np.asarray(t.numpy())


def assert_same_tensor(a, b, *, geometry=True):
    """Two tensors (ember or torch, either side) agree: values, dtype, shape, strides, storage
    offset, requires_grad and Parameter-ness."""
    assert isinstance(a, (ember.Tensor, torch.Tensor)), type(a)
    assert str(a.dtype) == str(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    if geometry:
        assert a.stride() == b.stride()
        assert a.storage_offset() == b.storage_offset()
    assert a.requires_grad == b.requires_grad
    assert type(a).__name__ == type(b).__name__  # Tensor / Parameter
    np.testing.assert_array_equal(as_numpy(a), as_numpy(b))


def ember_roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    return ember.load(buf, **load_kwargs)


def to_torch(obj):
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=True)


def from_torch(obj, **load_kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return ember.load(buf, **load_kwargs)


# ---- every dtype, both directions ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_both_directions(dtype):
    e, t = sample(dtype)
    assert_same_tensor(to_torch(e), t)
    assert_same_tensor(from_torch(t), t)
    back = ember_roundtrip(e)
    assert_same_tensor(back, t)


VIEWS = [
    ("slice", lambda x: x[1:, 1:3]),
    ("transpose", lambda x: x.t()),
    ("step", lambda x: x[::2, ::3]),
    ("expand", lambda x: x[:1].expand(5, 6)),
    ("select", lambda x: x[2]),
    ("zero_dim", lambda x: x[1, 2]),
    ("empty", lambda x: x[:, 4:]),
    ("diagonal", lambda x: x.diagonal()),
]


@pytest.mark.parametrize("name,view", VIEWS, ids=[v[0] for v in VIEWS])
def test_views_keep_geometry_and_sharing(name, view):
    e, t = sample("float32", (4, 6))
    saved_e = {"base": e, "view": view(e)}
    saved_t = {"base": t, "view": view(t)}
    for loaded, expect in [(to_torch(saved_e), saved_t), (from_torch(saved_t), saved_t),
                           (ember_roundtrip(saved_e), saved_t)]:
        for k in expect:
            if isinstance(loaded[k], ember.Tensor):
                assert_same_tensor(loaded[k], expect[k])
            else:
                assert torch.equal(loaded[k], expect[k])
                assert loaded[k].stride() == expect[k].stride()
        if isinstance(loaded["base"], ember.Tensor):
            assert loaded["view"].untyped_storage() is loaded["base"].untyped_storage()
            loaded["base"].fill_(7.0)  # still one buffer: the view sees the write
            if loaded["view"].numel():
                assert float(loaded["view"].reshape(-1)[0]) == 7.0
        else:
            assert loaded["view"].untyped_storage().data_ptr() == \
                loaded["base"].untyped_storage().data_ptr()


def test_shared_storage_is_written_once():
    base = ember.arange(1000.0)
    buf = io.BytesIO()
    ember.save([base, base[10:20], base.view(10, 100).t(), base.detach(), base.data], buf)
    names = zipfile.ZipFile(buf).namelist()
    assert sum(n.startswith("archive/data/") for n in names) == 1
    buf.seek(0)
    loaded = ember.load(buf)
    storages = {id(t.untyped_storage()) for t in loaded}
    assert len(storages) == 1


def test_tied_parameters_stay_tied():
    w = ember.nn.Parameter(ember.randn(5, 3))
    out = ember_roundtrip({"enc": w, "dec": w})
    assert out["enc"] is out["dec"]
    t = to_torch({"enc": w, "dec": w})
    assert t["enc"] is t["dec"]


def test_same_data_as_two_dtypes_is_refused_like_torch():
    x = ember.arange(4, dtype=ember.int32)
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        ember.save([x, x.untyped_storage()], io.BytesIO())


def test_parameters_and_requires_grad():
    p = ember.nn.Parameter(ember.randn(3, 2))
    frozen = ember.nn.Parameter(ember.randn(2), requires_grad=False)
    leaf = ember.randn(4).requires_grad_()
    obj = {"p": p, "frozen": frozen, "leaf": leaf, "plain": ember.ones(2)}
    for out in (ember_roundtrip(obj), to_torch(obj)):
        assert type(out["p"]).__name__ == "Parameter" and out["p"].requires_grad
        assert type(out["frozen"]).__name__ == "Parameter" and not out["frozen"].requires_grad
        assert out["leaf"].requires_grad and type(out["leaf"]).__name__ == "Tensor"
        assert not out["plain"].requires_grad
    tp = torch.nn.Parameter(torch.randn(2, 2))
    assert_same_tensor(from_torch({"p": tp})["p"], tp)


def test_python_attributes_on_tensors():
    x = ember.ones(2)
    x.note = "kept"
    assert ember_roundtrip(x).note == "kept"
    assert to_torch(x).note == "kept"
    t = torch.ones(2)
    t.note = "kept"
    assert from_torch(t).note == "kept"


def test_meta_tensors():
    m = ember.empty(3, 4, device="meta").t()
    out = ember_roundtrip(m)
    assert out.is_meta and tuple(out.shape) == (4, 3) and out.stride() == (1, 4)
    t = to_torch(m)
    assert t.is_meta and t.shape == (4, 3) and t.stride() == (1, 4)
    back = from_torch(torch.empty(2, 5, device="meta"))
    assert back.is_meta and tuple(back.shape) == (2, 5)
    sd = ember.nn.Linear(3, 2, device="meta").state_dict(keep_vars=True)
    for out in (ember_roundtrip(sd), to_torch(sd)):
        assert out["weight"].is_meta and type(out["weight"]).__name__ == "Parameter"


def test_python_values_survive():
    obj = {
        "int": 3, "big": 2 ** 70, "neg": -5, "float": 1.5, "nan": float("nan"),
        "str": "héllo", "bytes": b"\x00\xff", "bytearray": bytearray(b"ab"), "none": None,
        "bools": [True, False], "tuple": (1, (2, 3)), "set": {1, 2}, "complex": 1 + 2j,
        "od": OrderedDict(a=1, b=[ember.ones(1)]), "nested": {"a": [{"b": (ember.zeros(2),)}]},
        "size": ember.Size([2, 3]), "dtype": ember.float16, "device": ember.device("cpu"),
        "counter": Counter("aab"),
    }
    for out, lib in ((ember_roundtrip(obj), ember), (to_torch(obj), torch)):
        assert out["int"] == 3 and out["big"] == 2 ** 70 and out["neg"] == -5
        assert out["float"] == 1.5 and out["nan"] != out["nan"]
        assert out["str"] == "héllo" and out["bytes"] == b"\x00\xff"
        assert out["bytearray"] == bytearray(b"ab") and out["none"] is None
        assert out["bools"] == [True, False] and out["tuple"] == (1, (2, 3))
        assert out["set"] == {1, 2} and out["complex"] == 1 + 2j
        assert type(out["od"]) is OrderedDict and list(out["od"]) == ["a", "b"]
        assert isinstance(out["nested"]["a"][0]["b"][0], lib.Tensor)
        assert out["size"] == (2, 3) and type(out["size"]) is lib.Size
        assert out["dtype"] is lib.float16 and out["device"] == lib.device("cpu")
        assert out["counter"] == Counter("aab")


def test_torch_python_values_load_in_ember():
    obj = {"size": torch.Size([4]), "dtype": torch.bfloat16, "device": torch.device("cpu"),
           "layout": torch.strided, "list": [1, 2.5, "x"]}
    out = from_torch(obj)
    assert out["size"] == (4,) and type(out["size"]) is ember.Size
    assert out["dtype"] is ember.bfloat16 and out["device"] == ember.device("cpu")
    assert out["layout"] is ember.strided and out["list"] == [1, 2.5, "x"]


# ---- real state dicts ---------------------------------------------------------------------------
class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)
        self.conv = torch.nn.Conv2d(1, 3, 3)
        self.bn = torch.nn.BatchNorm2d(3)
        self.norm = torch.nn.LayerNorm(4)
        self.fc = torch.nn.Linear(12, 2)


def test_torch_model_state_dict_roundtrip():
    torch.manual_seed(0)
    net = TorchNet()
    net.bn(torch.randn(2, 3, 4, 4))  # running stats and num_batches_tracked move
    sd = net.state_dict()
    loaded = from_torch(sd)
    assert type(loaded) is OrderedDict and list(loaded) == list(sd)
    assert loaded._metadata == sd._metadata
    for k in sd:
        assert_same_tensor(loaded[k], sd[k])
    back = to_torch(loaded)  # and ember's file loads into the torch model, strictly
    fresh = TorchNet()
    fresh.load_state_dict(back)
    for k, v in fresh.state_dict().items():
        assert torch.equal(v, sd[k])


def ember_mlp():
    nn = ember.nn
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def torch_mlp():
    nn = torch.nn
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def test_ember_model_state_dict_into_torch_and_back():
    ember.manual_seed(0)
    model = ember_mlp()
    x = np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32)
    tmodel = torch_mlp()
    tmodel.load_state_dict(to_torch(model.state_dict()))
    expected = model(ember.tensor(x))
    np.testing.assert_allclose(as_numpy(tmodel(torch.tensor(x))), as_numpy(expected),
                               rtol=1e-6)
    other = ember_mlp()
    other.load_state_dict(from_torch(tmodel.state_dict()))
    np.testing.assert_array_equal(as_numpy(other(ember.tensor(x))), as_numpy(expected))


def test_optimizer_state_dicts():
    torch.manual_seed(0)
    tmodel = torch_mlp()
    opt = torch.optim.Adam(tmodel.parameters(), lr=1e-3)
    tmodel(torch.randn(4, 6)).sum().backward()
    opt.step()
    sd = opt.state_dict()
    loaded = from_torch(sd)
    assert loaded["param_groups"][0]["betas"] == sd["param_groups"][0]["betas"]
    for i, state in sd["state"].items():
        for k, v in state.items():
            assert_same_tensor(loaded["state"][i][k], v)
    opt2 = torch.optim.Adam(tmodel.parameters(), lr=1e-3)
    opt2.load_state_dict(to_torch(loaded))
    assert torch.equal(opt2.state_dict()["state"][0]["exp_avg"], sd["state"][0]["exp_avg"])

    ember.manual_seed(0)
    model = ember_mlp()
    eopt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(ember.randn(4, 6)).sum().backward()
    eopt.step()
    esd = eopt.state_dict()
    tsd = to_torch(esd)
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.1, momentum=0.9)
    topt.load_state_dict(tsd)
    assert_same_tensor(ember_roundtrip(esd)["state"][0]["momentum_buffer"],
                       tsd["state"][0]["momentum_buffer"])


# ---- files, paths and the archive layout --------------------------------------------------------
def test_paths_and_file_objects(tmp_path):
    x = ember.arange(5.0)
    for target in (str(tmp_path / "a.pt"), tmp_path / "b.pt"):
        ember.save(x, target)
        assert torch.equal(torch.load(target), torch.arange(5.0))
        assert ember.load(target).tolist() == x.tolist()
    with open(tmp_path / "c.pt", "wb") as f:
        ember.save(x, f)
    with open(tmp_path / "c.pt", "rb") as f:
        assert ember.load(f).tolist() == x.tolist()
    torch.save(torch.ones(2), tmp_path / "t.pt")
    assert ember.load(tmp_path / "t.pt").tolist() == [1.0, 1.0]


def test_worker_threads_read_the_records(tmp_path, monkeypatch):
    monkeypatch.setattr(serialization.archive, "_PREFETCH_BYTES", 0)  # every record, however small
    base = torch.arange(40.0)
    sd = OrderedDict(a=base.view(5, 8), b=base[3:9], c=torch.ones(3, dtype=torch.int16),
                     d=torch.zeros(0), e=torch.tensor(2.5, dtype=torch.float64))
    torch.save(sd, tmp_path / "t.pt")
    for path in (tmp_path / "t.pt", str(tmp_path / "t.pt")):
        out = ember.load(path)
        for k in sd:
            assert_same_tensor(out[k], sd[k])
        assert out["b"].untyped_storage() is out["a"].untyped_storage()
    with open(tmp_path / "t.pt", "rb") as f:  # a file object the caller opened
        assert ember.load(f)["c"].tolist() == [1, 1, 1]


def test_non_seekable_streams():
    class Pipe(io.RawIOBase):
        def __init__(self, data=b""):
            self.data, self.chunks = data, []

        def writable(self):
            return True

        def readable(self):
            return True

        def write(self, b):
            self.chunks.append(bytes(b))
            return len(b)

        def readinto(self, b):
            n = min(len(b), len(self.data))
            b[:n], self.data = self.data[:n], self.data[n:]
            return n

    out = Pipe()
    ember.save({"x": ember.ones(3)}, out)
    assert ember.load(Pipe(b"".join(out.chunks)))["x"].tolist() == [1.0, 1.0, 1.0]


def test_archive_layout_matches_torch(tmp_path):
    sd = OrderedDict(a=torch.randn(3), b=torch.arange(4))
    torch.save(sd, tmp_path / "t.pt")
    ember.save(from_torch(sd), tmp_path / "model.v1.pt")
    theirs = zipfile.ZipFile(tmp_path / "t.pt").namelist()
    ours = zipfile.ZipFile(tmp_path / "model.v1.pt")
    assert [n.split("/", 1)[1] for n in ours.namelist()] == \
        [n.split("/", 1)[1] for n in theirs]
    assert ours.namelist()[0] == "model.v1/data.pkl"
    assert ours.read("model.v1/version") == b"3\n"
    assert ours.read("model.v1/byteorder") == b"little"
    assert ours.testzip() is None  # every CRC-32 is right
    raw = (tmp_path / "model.v1.pt").read_bytes()
    for info in ours.infolist():  # every record's bytes start on a 64-byte boundary
        n, m = struct.unpack_from("<HH", raw, info.header_offset + 26)
        assert (info.header_offset + 30 + n + m) % 64 == 0


def test_torch_offset_arithmetic_holds_on_ember_files(tmp_path):
    # torch can compute record offsets from miniz's layout instead of reading headers
    from torch.utils.serialization import config
    sd = {f"w{i}": ember.randn(i + 1, 3) for i in range(5)}
    sd["empty"] = ember.zeros(0)
    ember.save(sd, tmp_path / "m.pt")
    old = config.load.calculate_storage_offsets
    config.load.calculate_storage_offsets = True
    try:
        loaded = torch.load(tmp_path / "m.pt", mmap=True)
    finally:
        config.load.calculate_storage_offsets = old
    for k, v in sd.items():
        np.testing.assert_array_equal(loaded[k].numpy(), v.numpy())


def test_zip64_records(monkeypatch):
    monkeypatch.setattr(serialization.archive, "_ZIP64_LIMIT", 16)  # all sizes are "large"
    obj = {"a": ember.arange(10.0), "b": ember.arange(3)}
    buf = io.BytesIO()
    ember.save(obj, buf)
    assert zipfile.ZipFile(buf).testzip() is None
    buf.seek(0)
    assert torch.equal(torch.load(buf)["a"], torch.arange(10.0))
    buf.seek(0)
    assert ember.load(buf)["b"].tolist() == [0, 1, 2]


def test_big_endian_archives_are_byteswapped():
    values = np.arange(6, dtype=np.float32)
    buf = io.BytesIO()
    writer = serialization.archive._ArchiveWriter(buf, "archive")
    t = torch.zeros(6)
    pkl = io.BytesIO()
    torch.save(t, pkl)
    data_pkl = zipfile.ZipFile(pkl).read("archive/data.pkl")
    for name, data in [("data.pkl", data_pkl), ("byteorder", b"big"),
                       ("data/0", values.astype(">f4").tobytes()), ("version", b"3\n")]:
        writer.write_record(name, data)
    writer.finish()
    buf.seek(0)
    assert ember.load(buf).tolist() == values.tolist()
    buf.seek(0)
    assert torch.load(buf).tolist() == values.tolist()


# ---- map_location -------------------------------------------------------------------------------
def test_map_location_forms():
    obj = {"x": ember.arange(3.0)}
    for where in ("cpu", ember.device("cpu"), {"cpu": "cpu"}, lambda s, loc: None,
                  lambda s, loc: s):
        assert ember_roundtrip(obj, map_location=where)["x"].tolist() == [0.0, 1.0, 2.0]
    seen = []
    ember_roundtrip(obj, map_location=lambda s, loc: seen.append((type(s), loc)))
    assert seen == [(ember.UntypedStorage, "cpu")]
    meta = ember_roundtrip(obj, map_location="meta")["x"]
    assert meta.is_meta and tuple(meta.shape) == (3,)


def test_map_location_for_cuda_checkpoints():
    buf = io.BytesIO()
    ember.save({"x": ember.ones(2)}, buf)
    data = buf.getvalue().replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    rebuilt = io.BytesIO()  # same records, the pickle now says the storage was on cuda:0
    writer = serialization.archive._ArchiveWriter(rebuilt, "archive")
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    for info in z.infolist():
        name = info.filename.split("/", 1)[1]
        content = z.read(info)
        if name == "data.pkl":
            content = data[data.index(b"\x80\x02"):][:len(content) + 3]
        writer.write_record(name, content)
    writer.finish()
    with pytest.raises(RuntimeError, match="map_location"):
        ember.load(io.BytesIO(rebuilt.getvalue()))
    out = ember.load(io.BytesIO(rebuilt.getvalue()), map_location={"cuda:0": "cpu"})
    assert out["x"].tolist() == [1.0, 1.0]
    assert ember.load(io.BytesIO(rebuilt.getvalue()), map_location="cpu")["x"].tolist() == \
        [1.0, 1.0]


# ---- mmap ---------------------------------------------------------------------------------------
def storage_base(t):
    """The object at the bottom of a CPU tensor's array chain (an mmap for mapped loads)."""
    a = t.untyped_storage()._array
    while isinstance(a, np.ndarray):
        a = a.base
    return a.obj if isinstance(a, memoryview) else a


def test_mmap_load_views_the_file(tmp_path):
    path = tmp_path / "m.pt"
    sd = OrderedDict(w=ember.randn(64, 32), b=ember.arange(7, dtype=ember.int16))
    sd["v"] = sd["w"][3:5]
    ember.save(sd, path)
    before = path.read_bytes()
    out = ember.load(path, mmap=True)
    for k in sd:
        np.testing.assert_array_equal(out[k].numpy(), sd[k].numpy())
        assert isinstance(storage_base(out[k]), mmap.mmap)
    assert out["v"].untyped_storage() is out["w"].untyped_storage()
    out["w"].fill_(0.0)  # copy-on-write: the file stays as it was
    assert path.read_bytes() == before
    tsaved = tmp_path / "t.pt"
    torch.save({"x": torch.arange(5.0)}, tsaved)
    assert ember.load(str(tsaved), mmap=True)["x"].tolist() == [0, 1, 2, 3, 4]


def test_mmap_needs_a_file_and_the_zip_format(tmp_path):
    buf = io.BytesIO()
    ember.save(ember.ones(1), buf)
    buf.seek(0)
    with pytest.raises(ValueError, match="file path"):
        ember.load(buf, mmap=True)
    torch.save(torch.ones(1), tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        ember.load(tmp_path / "legacy.pt", mmap=True)


def test_meta_model_filled_from_mmapped_checkpoint(tmp_path):
    ember.manual_seed(0)
    trained = ember_mlp()
    ember.save(trained.state_dict(), tmp_path / "ckpt.pt")
    nn = ember.nn
    model = nn.Sequential(nn.Linear(6, 8, device="meta"), nn.ReLU(),
                          nn.Linear(8, 3, device="meta"))
    state = ember.load(tmp_path / "ckpt.pt", mmap=True)
    with pytest.warns(UserWarning, match="assign=True"):
        model.load_state_dict(state)  # copying into meta parameters does nothing
    assert model[0].weight.is_meta
    result = model.load_state_dict(state, assign=True)
    assert result.missing_keys == [] and result.unexpected_keys == []
    for name, p in model.named_parameters():
        assert type(p) is ember.nn.Parameter and p.requires_grad and not p.is_meta
        assert isinstance(storage_base(p), mmap.mmap)  # the checkpoint's bytes, not a copy
    x = ember.randn(4, 6)
    np.testing.assert_array_equal(model(x).detach().numpy(), trained(x).detach().numpy())
    assert len(list(model.parameters())) == 4


# ---- the legacy (pre-1.6) format ----------------------------------------------------------------
@pytest.mark.parametrize("weights_only", [True, False])
def test_legacy_format(tmp_path, weights_only):
    base = torch.arange(12, dtype=torch.float64)
    obj = {"base": base, "view": base[2:8].view(2, 3), "p": torch.nn.Parameter(torch.ones(2)),
           "i": torch.tensor([1, 2], dtype=torch.int16), "n": 3}
    torch.save(obj, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    out = ember.load(tmp_path / "old.pt", weights_only=weights_only)
    for k in ("base", "view", "p", "i"):
        assert_same_tensor(out[k], obj[k])
    assert out["view"].untyped_storage() is out["base"].untyped_storage()
    assert out["n"] == 3


# ---- plain pickle, copy and arbitrary objects ---------------------------------------------------
def test_plain_pickle_of_tensors():
    base = ember.arange(6.0)
    obj = [base, base.view(2, 3).t(), ember.nn.Parameter(ember.ones(2)),
           ember.empty(2, device="meta")]
    for proto in (2, 5):
        out = pickle.loads(pickle.dumps(obj, protocol=proto))
        assert out[1].tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
        assert out[1].untyped_storage() is out[0].untyped_storage()
        assert type(out[2]) is ember.nn.Parameter and out[2].requires_grad
        assert out[3].is_meta
        out[0].add_(1)  # writable, own memory
        assert base.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    shallow = copy.copy(base)
    assert shallow.untyped_storage() is base.untyped_storage()


class Payload:
    def __init__(self, tensor):
        self.tensor = tensor


def test_weights_only_false_loads_arbitrary_objects():
    buf = io.BytesIO()
    ember.save(Payload(ember.ones(2)), buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals"):
        ember.load(buf)
    buf.seek(0)
    assert ember.serialization.get_unsafe_globals_in_checkpoint(buf) == \
        torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(buf.getvalue())) == \
        [f"{__name__}.Payload"]
    buf.seek(0)
    assert ember.load(buf, weights_only=False).tensor.tolist() == [1.0, 1.0]
    buf.seek(0)
    assert ember.load(buf, pickle_module=pickle).tensor.tolist() == [1.0, 1.0]
    buf.seek(0)
    with pytest.raises(RuntimeError, match="pickle_module"):
        ember.load(buf, pickle_module=pickle, weights_only=True)


def test_custom_pickle_module():
    import types
    module = types.SimpleNamespace(Pickler=pickle.Pickler, Unpickler=pickle.Unpickler)
    base = ember.arange(4.0)
    buf = io.BytesIO()
    ember.save({"a": base, "b": base[1:], "p": Payload(1)}, buf, pickle_module=module)
    buf.seek(0)
    out = ember.load(buf, pickle_module=module)
    assert out["b"].tolist() == [1.0, 2.0, 3.0] and out["p"].tensor == 1
    assert out["b"].untyped_storage() is out["a"].untyped_storage()


def test_weights_only_false_reads_torch_module_paths():
    buf = io.BytesIO()
    torch.save(torch.nn.ReLU(), buf)
    buf.seek(0)
    assert type(ember.load(buf, weights_only=False)) is ember.nn.ReLU


def test_safe_globals_extend_the_allow_list():
    buf = io.BytesIO()
    ember.save({"p": Payload(ember.ones(1))}, buf)
    with ember.serialization.safe_globals([Payload]):
        assert Payload in ember.serialization.get_safe_globals()
        buf.seek(0)
        assert ember.load(buf)["p"].tensor.tolist() == [1.0]
    assert Payload not in ember.serialization.get_safe_globals()
    ember.serialization.add_safe_globals([(Payload, f"{__name__}.Payload")])
    try:
        buf.seek(0)
        assert isinstance(ember.load(buf)["p"], Payload)
    finally:
        ember.serialization.clear_safe_globals()


# ---- atomic saving ------------------------------------------------------------------------------
def test_failed_save_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    ember.save({"w": ember.ones(1000)}, path)
    before = path.read_bytes()
    writes = []
    real = serialization.archive._ArchiveWriter.write_record

    def failing(self, name, data):
        writes.append(name)
        if name == "data/1":
            raise OSError("disk full")
        return real(self, name, data)

    monkeypatch.setattr(serialization.archive._ArchiveWriter, "write_record", failing)
    with pytest.raises(OSError, match="disk full"):
        ember.save({"a": ember.zeros(500), "b": ember.zeros(500)}, path)
    assert "data/0" in writes  # it failed mid-write, not before
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.pt"]  # and cleaned up after itself

    class Unpicklable:
        def __reduce__(self):
            raise TypeError("nope")

    with pytest.raises(TypeError, match="nope"):
        ember.save([ember.ones(1), Unpicklable()], path)
    assert path.read_bytes() == before


def test_crash_mid_save_leaves_the_old_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    ember.save({"w": ember.ones(10)}, path)
    before = path.read_bytes()
    script = f"""
import os, ember
from ember import serialization
real = serialization.archive._ArchiveWriter.write_record
def dying(self, name, data):
    if name == "data/1":
        os._exit(3)  # the process dies with the archive half written
    return real(self, name, data)
serialization.archive._ArchiveWriter.write_record = dying
ember.save({{"a": ember.zeros(100), "b": ember.zeros(100)}}, {str(path)!r})
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert proc.returncode == 3, proc.stderr.decode()
    assert path.read_bytes() == before
    assert ember.load(path)["w"].tolist() == [1.0] * 10


def test_save_keeps_mode_and_follows_symlinks(tmp_path):
    real = tmp_path / "real.pt"
    ember.save(ember.ones(1), real)
    os.chmod(real, 0o640)
    link = tmp_path / "link.pt"
    link.symlink_to(real)
    ember.save(ember.zeros(2), link)
    assert link.is_symlink()
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640
    assert ember.load(real).tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="Parent directory"):
        ember.save(ember.ones(1), tmp_path / "missing" / "x.pt")


# ---- safetensors --------------------------------------------------------------------------------
def test_safetensors_both_directions(tmp_path):
    st_torch = pytest.importorskip("safetensors.torch")
    from ember.utils import safetensors as st
    tensors = {d: sample(d, (2, 3))[0] for d in DTYPES if d != "complex128"}
    st.save_file(tensors, tmp_path / "e.safetensors", metadata={"format": "pt"})
    theirs = st_torch.load_file(tmp_path / "e.safetensors")
    for d, e in tensors.items():
        assert_same_tensor(e, theirs[d])
    st_torch.save_file({"w": torch.arange(6.0).view(2, 3)}, tmp_path / "t.safetensors")
    ours = st.load_file(tmp_path / "t.safetensors")
    assert ours["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    ours["w"].add_(1)  # the loaded tensor owns writable memory
    assert ember.load(tmp_path / "t.safetensors")["w"].tolist()[0] == [0.0, 1.0, 2.0]
    assert st.load(st.save({"x": ember.ones(2)}))["x"].tolist() == [1.0, 1.0]


def test_safetensors_refuses_what_safetensors_torch_refuses():
    pytest.importorskip("safetensors")
    from ember.utils import safetensors as st
    x = ember.arange(6.0).view(2, 3)
    with pytest.raises(ValueError, match="non contiguous"):
        st.save({"t": x.t()})
    with pytest.raises(RuntimeError, match="share memory"):
        st.save({"a": x, "b": x[0]})


def test_safetensors_missing_is_a_clear_error(monkeypatch):
    from ember.utils import safetensors as st
    monkeypatch.setitem(sys.modules, "safetensors", None)  # what an absent package looks like
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError, match="pip install 'safetensors"):
        st.save({"x": ember.ones(1)})
