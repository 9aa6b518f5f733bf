"""Weights-only loading is safe: malicious pickles are refused without running anything (a
side-effect file would show it), huge declared sizes fail fast, and truncated, corrupted and
random archives raise a clear error -- checked by a bounded fuzz over mutated checkpoints."""
import io
import os
import pickle
import random
import signal
import struct
import subprocess
from collections import OrderedDict

import pytest
import torch

import ember
from ember import serialization

CLEAR_ERRORS = (RuntimeError, pickle.UnpicklingError, EOFError)


def archive(data_pkl, records=()):
    """A checkpoint archive holding `data_pkl` (any bytes) and extra records."""
    buf = io.BytesIO()
    writer = serialization.archive._ArchiveWriter(buf, "archive")
    writer.write_record("data.pkl", data_pkl)
    for name, data in records:
        writer.write_record(name, data)
    writer.write_record("version", b"3\n")
    writer.finish()
    return buf.getvalue()


def p2(*ops):
    """A protocol-2 pickle program from opcodes and their operands."""
    return b"\x80\x02" + b"".join(ops) + pickle.STOP


def glob(module, name):
    return pickle.GLOBAL + f"{module}\n{name}\n".encode()


def text(s):
    b = s.encode()
    return pickle.BINUNICODE + struct.pack("<I", len(b)) + b


def integer(n):
    return pickle.BININT + struct.pack("<i", n)


FLOATS = (b"\0\0\x80?" * 10)  # ten float32 ones for data/0


def storage_pid(numel, key="0", storage="FloatStorage"):
    return (pickle.MARK + text("storage") + glob("torch", storage) + text(key) + text("cpu")
            + pickle.LONG1 + bytes([8]) + numel.to_bytes(8, "little", signed=True)
            + pickle.TUPLE + pickle.BINPERSID)


def rebuild_v2(storage, offset, size, stride):
    tup = lambda xs: pickle.MARK + b"".join(integer(x) for x in xs) + pickle.TUPLE  # noqa: E731
    return (glob("torch._utils", "_rebuild_tensor_v2") + pickle.MARK + storage + integer(offset)
            + tup(size) + tup(stride) + pickle.NEWFALSE + glob("collections", "OrderedDict")
            + pickle.EMPTY_TUPLE + pickle.REDUCE + pickle.TUPLE + pickle.REDUCE)


@pytest.fixture
def sentinel(tmp_path):
    path = tmp_path / "pwned"
    yield str(path)
    assert not path.exists(), "a refused payload ran"


def refuse(data, match=None, records=()):
    with pytest.raises(CLEAR_ERRORS, match=match):
        ember.load(io.BytesIO(archive(data, records)))


# ---- payloads that would run code ---------------------------------------------------------------
def reduce_payload(func, *args):
    class Evil:
        def __reduce__(self):
            return (func, args)
    return pickle.dumps({"weights": Evil()}, protocol=2)


def test_os_system_via_reduce(sentinel):
    refuse(reduce_payload(os.system, f"touch {sentinel}"), match="posix.system.*blocked")
    with ember.serialization.safe_globals([os.system]):  # blocked even when allow-listed
        refuse(reduce_payload(os.system, f"touch {sentinel}"), match="blocked")


def test_eval_and_exec(sentinel):
    code = f"open({sentinel!r}, 'w').close()"
    refuse(reduce_payload(eval, code),
           match=r"GLOBAL eval was not an allowed global.*add_safe_globals\(\[eval\]\)")
    refuse(reduce_payload(exec, code), match="GLOBAL exec was not")


def test_subprocess_and_import(sentinel):
    refuse(reduce_payload(subprocess.call, ["touch", sentinel]), match="subprocess")
    refuse(p2(glob("builtins", "__import__"), text("os"), pickle.TUPLE1, pickle.REDUCE),
           match="GLOBAL __import__ was not")


def test_getattr_chain(sentinel):
    # getattr(__import__('os'), 'system')('touch ...')
    program = p2(glob("builtins", "getattr"), glob("builtins", "__import__"), text("os"),
                 pickle.TUPLE1, pickle.REDUCE, text("system"), pickle.TUPLE2, pickle.REDUCE,
                 text(f"touch {sentinel}"), pickle.TUPLE1, pickle.REDUCE)
    refuse(program, match="GLOBAL getattr was not")


def test_stack_global_and_side_doors(sentinel):
    proto4 = b"\x80\x04" + b"\x8c\x02os" + b"\x8c\x06system" + pickle.STACK_GLOBAL + \
        b"\x8c" + bytes([len(f"touch {sentinel}")]) + f"touch {sentinel}".encode() + \
        pickle.TUPLE1 + pickle.REDUCE + pickle.STOP
    refuse(proto4, match="blocked")
    refuse(b"\x80\x02" + pickle.MARK + pickle.INST + b"os\nsystem\n" + pickle.STOP,
           match="Unsupported operand")
    refuse(b"\x80\x02" + pickle.EXT1 + b"\x01" + pickle.STOP, match="Unsupported operand")
    refuse(p2(glob("ember.serialization.archive", "_atomic_open")), match="not an allowed global")


def test_allowed_values_are_not_callable():
    refuse(p2(glob("torch", "Tensor"), integer(10 ** 6), pickle.TUPLE1, pickle.REDUCE),
           match="unrecognized function")
    refuse(p2(glob("torch", "float32"), pickle.EMPTY_TUPLE, pickle.REDUCE),
           match="unrecognized function")
    refuse(p2(glob("torch", "Tensor"), pickle.EMPTY_TUPLE, pickle.NEWOBJ),
           match="Can only create new object")


def test_build_and_container_tricks():
    tensor = rebuild_v2(storage_pid(10), 0, (10,), (1,))
    records = [("data/0", FLOATS)]
    refuse(p2(tensor, pickle.EMPTY_DICT, text("__class__"), glob("collections", "Counter"),
              pickle.SETITEM, pickle.BUILD), match="refusing to set attribute", records=records)
    refuse(p2(tensor, pickle.EMPTY_DICT, text("_np"), pickle.NONE, pickle.SETITEM,
              pickle.BUILD), match="refusing", records=records)
    refuse(p2(tensor, integer(0), integer(1), pickle.SETITEM), match="Can only SETITEM",
           records=records)
    refuse(p2(pickle.EMPTY_DICT, integer(1), pickle.APPEND), match="Can only APPEND")
    refuse(p2(glob("builtins", "set"), pickle.EMPTY_TUPLE, pickle.REDUCE, pickle.EMPTY_DICT,
              pickle.BUILD), match="Can only build")
    # _rebuild_from_type_v2 must be given a tensor rebuild function and a Tensor subclass
    refuse(p2(glob("torch._tensor", "_rebuild_from_type_v2"), pickle.MARK,
              glob("builtins", "set"), glob("torch", "Tensor"), pickle.EMPTY_TUPLE,
              pickle.EMPTY_DICT, pickle.TUPLE, pickle.REDUCE), match="rebuild function")
    refuse(p2(glob("torch._tensor", "_rebuild_from_type_v2"), pickle.MARK,
              glob("torch._utils", "_rebuild_parameter"), glob("collections", "OrderedDict"),
              pickle.EMPTY_TUPLE, pickle.EMPTY_DICT, pickle.TUPLE, pickle.REDUCE),
           match="Tensor subclass")
    refuse(p2(pickle.MARK + text("module") + pickle.NONE + pickle.TUPLE + pickle.BINPERSID),
           match="Only persistent_load of storage")
    refuse(p2(glob("torch._utils", "_rebuild_tensor_v2"), pickle.MARK, pickle.EMPTY_DICT,
              integer(0), pickle.EMPTY_TUPLE, pickle.EMPTY_TUPLE, pickle.NEWFALSE, pickle.NONE,
              pickle.TUPLE, pickle.REDUCE))  # a dict where the storage should be


# ---- huge declared sizes ------------------------------------------------------------------------
def test_declared_storage_larger_than_its_record():
    refuse(p2(rebuild_v2(storage_pid(10 ** 15), 0, (10,), (1,))), match="declares",
           records=[("data/0", FLOATS)])
    refuse(p2(rebuild_v2(storage_pid(-5), 0, (10,), (1,))), records=[("data/0", FLOATS)])
    refuse(p2(rebuild_v2(storage_pid(10, key="7"), 0, (10,), (1,))), match="data/7",
           records=[("data/0", FLOATS)])


@pytest.mark.parametrize("offset,size,stride", [
    (0, (10 ** 9,), (1,)), (0, (11,), (1,)), (9, (2,), (1,)), (0, (2, 6), (6, 1)),
    (0, (3,), (5,)), (-1, (2,), (1,)), (0, (2,), (-1,)), (0, (-2,), (1,)), (0, (2, 2), (1,)),
])
def test_views_outside_their_storage(offset, size, stride):
    refuse(p2(rebuild_v2(storage_pid(10), offset, size, stride)), records=[("data/0", FLOATS)])


def test_views_inside_their_storage_load():
    program = p2(rebuild_v2(storage_pid(10), 2, (2, 4), (4, 1)))
    t = ember.load(io.BytesIO(archive(program, [("data/0", FLOATS)])))
    assert t.shape == (2, 4) and t.storage_offset() == 2


def test_huge_lengths_in_the_pickle_fail_fast():
    refuse(b"\x80\x02" + pickle.BINUNICODE + struct.pack("<I", 2 ** 32 - 1) + b"abc",
           match="truncated")
    refuse(b"\x80\x02" + pickle.LONG4 + struct.pack("<i", 2 ** 31 - 1) + b"\x01",
           match="truncated")
    refuse(b"\x80\x04" + pickle.BINBYTES8 + struct.pack("<Q", 2 ** 63) + b"x", match="truncat")
    refuse(p2(glob("builtins", "bytearray"), integer(2 ** 31 - 1), pickle.TUPLE1,
              pickle.REDUCE), match="bytearray")
    refuse(p2(pickle.LONG_BINGET + struct.pack("<I", 2 ** 32 - 1)), match="Memo")


def test_huge_lengths_in_a_legacy_file_fail_before_reading(tmp_path):
    path = tmp_path / "legacy.pt"  # a real file: FileIO.read(n) allocates n bytes up front
    path.write_bytes(b"\x80\x02" + pickle.BINBYTES8 + struct.pack("<Q", 2 ** 62) + b"x")
    with pytest.raises(pickle.UnpicklingError, match="truncated"):
        ember.load(path)


def test_huge_legacy_storage_fails_fast():
    buf = io.BytesIO()
    torch.save(torch.ones(4), buf, _use_new_zipfile_serialization=False)
    data = buf.getvalue()
    i = data.index(pickle.BININT1 + b"\x04" + pickle.NONE)  # the persistent id's numel
    forged = data[:i] + pickle.BININT + struct.pack("<i", 2 ** 31 - 1) + data[i + 2:]
    with pytest.raises(RuntimeError, match="declares"):
        ember.load(io.BytesIO(forged))


# ---- truncated, corrupted, random files: a bounded fuzz -----------------------------------------
def checkpoint():
    """A small torch checkpoint: views, a Parameter, ints, metadata."""
    base = torch.arange(24.0)
    sd = OrderedDict(w=base.view(4, 6), v=base[3:9], b=torch.tensor([1, 2], dtype=torch.int16),
                     p=torch.nn.Parameter(torch.ones(3)), s={"step": 3, "lr": 0.1, "n": "x"})
    sd._metadata = OrderedDict({"": {"version": 1}})
    buf = io.BytesIO()
    torch.save(sd, buf)
    return buf.getvalue()


def mutate(data, rng):
    data = bytearray(data)
    kind = rng.randrange(5)
    if kind == 0:  # flip bytes
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif kind == 1:  # truncate
        del data[rng.randrange(len(data)):]
    elif kind == 2:  # delete a run
        i = rng.randrange(len(data))
        del data[i:i + rng.randint(1, 64)]
    elif kind == 3:  # insert junk
        i = rng.randrange(len(data))
        data[i:i] = rng.randbytes(rng.randint(1, 64))
    else:  # overwrite a run with interesting values
        i = rng.randrange(len(data))
        data[i:i + 4] = rng.choice([b"\xff\xff\xff\xff", b"\0\0\0\0", b"\xff\xff\xff\x7f",
                                    rng.randbytes(4)])
    return bytes(data)


@pytest.fixture
def time_limit():
    """Fail instead of hanging: a hang in the loader becomes an exception after 60 s."""
    def alarm(*_):
        raise TimeoutError("load hung")
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def load_or_clear_error(data, **kwargs):
    try:
        ember.load(io.BytesIO(data), **kwargs)
    except CLEAR_ERRORS as e:
        assert str(e)
        return False
    return True


def test_fuzz_archive_bytes(time_limit):
    rng = random.Random(0)
    good = checkpoint()
    loaded = sum(load_or_clear_error(mutate(good, rng)) for _ in range(1000))
    assert loaded < 1000  # most mutations are caught (CRC-32, structure, pickle)


def test_fuzz_pickle_inside_valid_archive(time_limit):
    z = __import__("zipfile").ZipFile(io.BytesIO(checkpoint()))
    records = [(i.filename.split("/", 1)[1], z.read(i)) for i in z.infolist()]
    data_pkl = dict(records)["data.pkl"]
    others = [(n, d) for n, d in records if n not in ("data.pkl", "version")]
    rng = random.Random(1)
    for _ in range(1000):  # the CRC is right, so the unpickler itself meets the damage
        load_or_clear_error(archive(mutate(data_pkl, rng), others))


def test_fuzz_legacy_format(time_limit):
    buf = io.BytesIO()
    torch.save({"w": torch.arange(6.0), "i": 7}, buf, _use_new_zipfile_serialization=False)
    rng = random.Random(2)
    for _ in range(300):
        load_or_clear_error(mutate(buf.getvalue(), rng))


def test_random_and_empty_files(tmp_path, time_limit):
    rng = random.Random(3)
    for prefix in (b"", b"PK\x03\x04", b"\x80\x02", b"PK\x05\x06"):
        for _ in range(25):
            assert not load_or_clear_error(prefix + rng.randbytes(rng.randrange(2000)))
    with pytest.raises(EOFError):
        ember.load(io.BytesIO(b""))
    path = tmp_path / "m.pt"
    good = checkpoint()
    for _ in range(40):  # mapped loads check the same bounds
        path.write_bytes(mutate(good, rng))
        try:
            ember.load(path, mmap=True)
        except CLEAR_ERRORS:
            pass


def test_corrupted_tensor_bytes_fail_the_crc_check_when_asked(monkeypatch, tmp_path):
    good = checkpoint()
    z = __import__("zipfile").ZipFile(io.BytesIO(good))
    info = z.getinfo("archive/data/0")
    n, m = struct.unpack_from("<HH", good, info.header_offset + 26)
    at = info.header_offset + 30 + n + m + 5
    bad = good[:at] + bytes([good[at] ^ 0x10]) + good[at + 1:]
    ember.load(io.BytesIO(bad))  # like PyTorch, tensor bytes are not checked by default
    monkeypatch.setattr(serialization.config.load, "verify_crc32", True)
    with pytest.raises(RuntimeError, match="data/0: CRC-32 mismatch"):
        ember.load(io.BytesIO(bad))
    (tmp_path / "bad.pt").write_bytes(bad)  # also when worker threads read the file
    monkeypatch.setattr(serialization.archive, "_PREFETCH_BYTES", 0)
    with pytest.raises(RuntimeError, match="data/0: CRC-32 mismatch"):
        ember.load(tmp_path / "bad.pt")
    assert ember.load(io.BytesIO(good))["w"].shape == (4, 6)


def test_fuzz_with_crc_checks(monkeypatch, time_limit):
    monkeypatch.setattr(serialization.config.load, "verify_crc32", True)
    rng = random.Random(4)
    good = checkpoint()
    for _ in range(300):
        load_or_clear_error(mutate(good, rng))


def test_every_truncation_is_a_clear_error(time_limit):
    good = checkpoint()
    for n in range(0, len(good), 7):
        assert not load_or_clear_error(good[:n])
