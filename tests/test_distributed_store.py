"""The rendezvous stores (TCPStore, FileStore, HashStore, PrefixStore) and rendezvous URLs,
in one process, against torch.distributed's: values, counters, compare_set, wait/get timeouts
(DistStoreError), connection failures (DistNetworkError) and the rendezvous errors. No MPI is
started here."""
import threading
import time
from datetime import timedelta

import pytest

import ember.distributed as dist


def libraries():
    libs = [dist]
    try:
        import torch.distributed
        libs.append(torch.distributed)
    except ImportError:
        pass
    return libs


def stores(lib, tmp_path):
    """One store of each kind from `lib`, with a 0.3 s timeout."""
    out = {"hash": lib.HashStore(),
           "tcp": lib.TCPStore("127.0.0.1", 0, 1, True, timeout=timedelta(seconds=0.3)),
           "file": lib.FileStore(str(tmp_path / f"{lib.__name__}.store"), 1)}
    out["prefix"] = lib.PrefixStore("pre", lib.HashStore())
    for s in out.values():
        s.set_timeout(timedelta(seconds=0.3))
    return out


def exercise(store):
    """What a store answers to the operations the rendezvous uses."""
    store.set("a", "x")
    store.set("b", b"\x00\xff")
    got = [store.get("a"), store.get("b"), store.add("n", 3), store.add("n", -1),
           store.get("n"), store.check(["a", "n"]), store.check(["a", "zz"]),
           store.compare_set("a", "x", "y"), store.get("a"), store.compare_set("a", "bad", "z"),
           store.compare_set("new", "", "v"), store.compare_set("new2", "e", "v"),
           store.delete_key("a"), store.delete_key("a"), store.check(["a"])]
    store.wait(["b", "n"])
    for call in (lambda: store.get("missing"), lambda: store.wait(["missing"]),
                 lambda: store.wait(["missing"], timedelta(seconds=0.1))):
        start = time.monotonic()
        with pytest.raises(Exception) as info:
            call()
        got.append((type(info.value).__name__, time.monotonic() - start < 5))
    return got


def test_stores_answer_as_torchs(tmp_path):
    results = [{kind: exercise(s) for kind, s in stores(lib, tmp_path).items()}
               for lib in libraries()]
    ours = results[0]
    assert ours["hash"][:3] == [b"x", b"\x00\xff", 3]
    assert all(r[-1] == ("DistStoreError", True) for k, r in ours.items() if k != "file"), ours
    assert ours["file"][-1] == ("RuntimeError", True)      # as PyTorch's FileStore
    for theirs in results[1:]:
        assert ours == theirs


def test_store_timeout_errors_name_the_keys():
    store = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=timedelta(seconds=0.2))
    with pytest.raises(dist.DistStoreError, match=r"wait timeout after 200ms, keys: /nope"):
        store.get("nope")
    assert isinstance(dist.DistStoreError("x"), dist.DistError)
    assert store.timeout == timedelta(seconds=0.2) and store.port > 0


def test_tcp_store_clients_meet_and_block_until_set():
    master = dist.TCPStore("127.0.0.1", 0, 3, True, timeout=timedelta(seconds=20),
                           wait_for_workers=False)
    clients = [dist.TCPStore("127.0.0.1", master.port, 3, False,
                             timeout=timedelta(seconds=20)) for _ in range(2)]
    got = []
    reader = threading.Thread(target=lambda: got.append(clients[0].get("late")))
    reader.start()
    time.sleep(0.2)
    clients[1].set("late", "here")
    reader.join(10)
    assert got == [b"here"]
    assert [c.add("count", 1) for c in (master, *clients)] == [1, 2, 3]


def test_tcp_store_master_waits_for_workers():
    with pytest.raises(dist.DistStoreError, match=r"waiting for clients. 1/2 clients joined"):
        dist.TCPStore("127.0.0.1", 0, 2, True, timeout=timedelta(seconds=0.3))


def test_tcp_store_unreachable_master():
    with socket_port() as port:
        with pytest.raises(dist.DistNetworkError, match=r"timed out after 300ms while trying "
                                                        r"to connect to \(127.0.0.1, "):
            dist.TCPStore("127.0.0.1", port, 2, False, timeout=timedelta(seconds=0.3))


class socket_port:
    """A port nobody listens on (bound, not listening, while the test runs)."""

    def __enter__(self):
        import socket
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return self.sock.getsockname()[1]

    def __exit__(self, *exc):
        self.sock.close()


@pytest.mark.parametrize("url, error", [
    ("env://", "env:// rendezvous: environment variable RANK expected, but not set"),
    ("tcp://127.0.0.1?rank=0&world_size=1", "tcp:// rendezvous: port number missing"),
    ("tcp://127.0.0.1:1234?world_size=1", "tcp:// rendezvous: rank parameter missing"),
    ("file:///tmp/x?rank=0", "file:// rendezvous: world size parameter missing"),
])
def test_rendezvous_errors_as_torchs(monkeypatch, url, error):
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    for lib in libraries():
        with pytest.raises(ValueError) as info:
            next(lib.rendezvous(url))
        assert str(info.value) == f"Error initializing torch.distributed using {error}"
    with pytest.raises(RuntimeError, match=r"No rendezvous handler for foo://"):
        next(dist.rendezvous("foo://x"))
    with pytest.raises(RuntimeError, match="already registered"):
        dist.register_rendezvous_handler("env", lambda url, **kw: None)


def test_rendezvous_gives_store_rank_and_size(tmp_path):
    store, rank, size = next(dist.rendezvous(f"file://{tmp_path}/rdzv", rank=0, world_size=1))
    assert (rank, size) == (0, 1) and isinstance(store, dist.FileStore)
    store, rank, size = next(dist.rendezvous("tcp://127.0.0.1:0", rank=0, world_size=1))
    assert (rank, size) == (0, 1) and isinstance(store, dist.TCPStore)
    store.set("k", "v")
    assert store.get("k") == b"v"
    with pytest.raises(AssertionError, match="node-specific arguments"):
        next(dist.rendezvous("tcp://127.0.0.1:0?rank=0", rank=0, world_size=1))


def test_init_with_store_checks_rank_and_size():
    with pytest.raises(ValueError, match="world_size must be positive if using store"):
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0)
    with pytest.raises(ValueError, match="rank must be non-negative if using store"):
        dist.init_process_group("gloo", store=dist.HashStore(), world_size=2)
    assert not dist.is_initialized()


def file_store_lifetimes(lib, tmp_path):
    """Whether the file is still there at each point of FileStore lifetimes PyTorch defines:
    the last store to go away removes the file once `world_size` stores have finished."""
    d = tmp_path / lib.__name__
    d.mkdir()
    seen = []

    def there(name):
        seen.append((name, (d / name).exists()))

    s = lib.FileStore(str(d / "one"), 1)
    s.set("k", "v")
    keys = [s.num_keys()]
    del s
    there("one")
    for name, size in (("unbounded", -1), ("default", None)):
        s = lib.FileStore(str(d / name), *([] if size is None else [size]))
        s.set("k", "v")
        del s
        there(name)
    s, t = lib.FileStore(str(d / "two"), 2), lib.FileStore(str(d / "two"), 2)
    keys.append(s.num_keys())
    del s
    there("two")
    t.add("n", 1)
    keys.append(t.num_keys())
    del t
    there("two")
    s = lib.FileStore(str(d / "later"), 2)
    del s
    there("later")
    t = lib.FileStore(str(d / "later"), 2)
    del t
    there("later")
    s = lib.FileStore(str(d / "gone"), 1)
    (d / "gone").unlink()
    del s  # the file removed by someone else: nothing to do
    there("gone")
    return seen, keys


def test_file_store_removes_its_file_as_torchs(tmp_path):
    results = [file_store_lifetimes(lib, tmp_path) for lib in libraries()]
    seen, keys = results[0]
    assert seen[0] == ("one", False) and ("unbounded", True) in seen
    for theirs in results[1:]:
        assert (seen, keys) == theirs


def test_file_store_alive_at_exit_removes_its_file(tmp_path):
    import subprocess
    import sys
    path = tmp_path / "store"
    code = ("import ember.distributed as dist\n"
            f"s = dist.FileStore({str(path)!r}, 1)\n"
            "s.set('k', 'v')\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert not path.exists()
