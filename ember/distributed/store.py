"""Key-value stores for the rendezvous (PyTorch's c10d Store family): TCPStore, FileStore,
HashStore and PrefixStore.

A store is how processes that know nothing of each other yet meet: every rank can set a key,
and a `get` or `wait` blocks until some rank has set it (or the store's timeout passes, with
DistStoreError). Values are bytes (a str is stored encoded); `add` keeps an integer counter.

- TCPStore: one process (is_master=True) serves the keys over TCP from a thread; the others
  connect to host:port. The master waits for `world_size` stores to connect when
  wait_for_workers is true.
- FileStore: the keys live in a file (a pickled dict, read and rewritten under an flock), so
  processes that share a file system meet without a network.
- HashStore: in this process only (threads).
- PrefixStore: a namespace inside another store.
"""
import fcntl
import os
import pickle
import socket
import struct
import threading
import time
import weakref
from datetime import timedelta

from .work import DistStoreError, DistNetworkError

__all__ = ["Store", "TCPStore", "FileStore", "HashStore", "PrefixStore"]

_DEFAULT_TIMEOUT = timedelta(seconds=300)
_WORKERS_KEY = "__ember_store_workers"


def _as_bytes(value):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, (list, tuple)):     # pybind accepts a list of ints as bytes
        return bytes(value)
    raise TypeError(f"Store value must be str or bytes, got {type(value).__name__}")


def _seconds(timeout):
    return timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)


def _wait_timeout_error(keys, seconds):
    ms = int(round(seconds * 1000))
    return DistStoreError(f"wait timeout after {ms}ms, keys: {', '.join('/' + k for k in keys)}")


class Store:
    """The store interface: set/get/add/compare_set/wait/check/delete_key/num_keys."""

    def __init__(self):
        self._timeout = _DEFAULT_TIMEOUT

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        if not isinstance(timeout, timedelta):
            raise TypeError(f"set_timeout expects a datetime.timedelta, got {timeout!r}")
        self._timeout = timeout

    def multi_set(self, keys, values):
        for key, value in zip(keys, values):
            self.set(key, value)

    def multi_get(self, keys):
        return [self.get(key) for key in keys]

    def append(self, key, value):
        current = self.compare_set(key, "", b"")
        self.set(key, current + _as_bytes(value))


class _Table:
    """The keys and the condition that wakes blocked readers: the state behind a HashStore
    and a TCPStore's server."""

    def __init__(self):
        self.data = {}
        self.changed = threading.Condition()

    def call(self, op, args):
        with self.changed:
            if op == "set":
                self.data[args[0]] = args[1]
                self.changed.notify_all()
                return None
            if op == "get":
                key, seconds = args
                if not self.changed.wait_for(lambda: key in self.data, seconds):
                    return ("timeout", [key])
                return self.data[key]
            if op == "wait":
                keys, seconds = args
                if not self.changed.wait_for(lambda: all(k in self.data for k in keys),
                                             seconds):
                    return ("timeout", keys)
                return None
            if op == "add":
                key, amount = args
                value = int(self.data.get(key, b"0")) + amount
                self.data[key] = str(value).encode()
                self.changed.notify_all()
                return value
            if op == "compare_set":
                key, expected, desired = args
                current = self.data.get(key)
                if (current is None and expected == b"") or current == expected:
                    self.data[key] = desired
                    self.changed.notify_all()
                    return desired
                return expected if current is None else current
            if op == "check":
                return all(k in self.data for k in args[0])
            if op == "delete_key":
                return self.data.pop(args[0], None) is not None
            if op == "num_keys":
                return len(self.data)
        raise ValueError(f"unknown store operation {op!r}")


class _TableStore(Store):
    """A store whose operations are `_call(op, args)` on a _Table, here or over a socket."""

    def _call(self, op, args):
        raise NotImplementedError

    def _checked(self, op, args, seconds):
        result = self._call(op, args)
        if isinstance(result, tuple) and result and result[0] == "timeout":
            raise _wait_timeout_error(result[1], seconds)
        return result

    def set(self, key, value):
        self._call("set", (key, _as_bytes(value)))

    def get(self, key):
        seconds = _seconds(self._timeout)
        return self._checked("get", (key, seconds), seconds)

    def add(self, key, amount):
        return self._call("add", (key, int(amount)))

    def compare_set(self, key, expected_value, desired_value):
        return self._call("compare_set", (key, _as_bytes(expected_value),
                                          _as_bytes(desired_value)))

    def wait(self, keys, timeout=None):
        seconds = _seconds(self._timeout if timeout is None else timeout)
        self._checked("wait", (list(keys), seconds), seconds)

    def check(self, keys):
        return self._call("check", (list(keys),))

    def delete_key(self, key):
        return self._call("delete_key", (key,))

    def num_keys(self):
        return self._call("num_keys", ())


class HashStore(_TableStore):
    """A store in this process's memory, shared by its threads."""

    def __init__(self):
        super().__init__()
        self._table = _Table()

    def _call(self, op, args):
        return self._table.call(op, args)


# ---- TCPStore ---------------------------------------------------------------------------

def _send(sock, obj):
    data = pickle.dumps(obj)
    sock.sendall(struct.pack("!Q", len(data)) + data)


def _recv_exact(sock, n):
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ConnectionError("connection closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _recv(sock):
    (size,) = struct.unpack("!Q", _recv_exact(sock, 8))
    return pickle.loads(_recv_exact(sock, size))


class _Server:
    """The master's thread: accepts clients, one thread each, all on one _Table."""

    def __init__(self, listener):
        self.table = _Table()
        self.listener = listener
        threading.Thread(target=self._accept, daemon=True, name="TCPStore-server").start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        with conn:
            while True:
                try:
                    op, args = _recv(conn)
                except (ConnectionError, OSError, EOFError):
                    return
                _send(conn, self.table.call(op, args))


class TCPStore(_TableStore):
    """TCPStore(host_name, port, world_size=None, is_master=False, timeout=300 s,
    wait_for_workers=True, multi_tenant=False, master_listen_fd=None, use_libuv=True).

    The master serves the keys (port 0 picks a free port: read it back from `.port`); every
    store, the master's included, is a client of that server.
    """

    _tenants = {}     # multi_tenant: (host, port) -> the _Server already running here

    def __init__(self, host_name, port, world_size=None, is_master=False,
                 timeout=_DEFAULT_TIMEOUT, wait_for_workers=True, multi_tenant=False,
                 master_listen_fd=None, use_libuv=True):
        super().__init__()
        if not isinstance(timeout, timedelta):
            raise TypeError(f"TCPStore timeout must be a datetime.timedelta, got {timeout!r}")
        if not 0 <= int(port) < 2 ** 16:
            raise ValueError(f"port must have value from 0 to 65535 but was {port}.")
        self._timeout = timeout
        self.host = host_name
        self.port = int(port)
        self.libuvBackend = bool(use_libuv)
        self._lock = threading.Lock()
        if is_master:
            key = (host_name, self.port)
            server = TCPStore._tenants.get(key) if multi_tenant else None
            if server is None:
                server = _Server(self._listen(master_listen_fd))
                self.port = server.listener.getsockname()[1]
                if multi_tenant:
                    TCPStore._tenants[(host_name, self.port)] = server
        self._sock = self._connect(host_name, self.port)
        self.add(_WORKERS_KEY, 1)
        if is_master and wait_for_workers and world_size:
            self._wait_for_workers(int(world_size))

    def _listen(self, fd):
        if fd is not None:
            return socket.socket(fileno=fd)
        if socket.has_dualstack_ipv6():
            return socket.create_server(("", self.port), family=socket.AF_INET6,
                                        dualstack_ipv6=True, backlog=128)
        return socket.create_server(("", self.port), backlog=128)

    def _connect(self, host, port):
        seconds = _seconds(self._timeout)
        deadline = time.monotonic() + seconds
        while True:
            try:
                sock = socket.create_connection((host, port), timeout=max(0.1, seconds))
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError:
                if time.monotonic() >= deadline:
                    raise DistNetworkError(
                        f"The client socket has timed out after {int(seconds * 1000)}ms "
                        f"while trying to connect to ({host}, {port}).") from None
                time.sleep(0.05)

    def _wait_for_workers(self, world_size):
        seconds = _seconds(self._timeout)
        deadline = time.monotonic() + seconds
        while int(self._call("add", (_WORKERS_KEY, 0))) < world_size:
            if time.monotonic() >= deadline:
                joined = int(self._call("add", (_WORKERS_KEY, 0)))
                raise DistStoreError(
                    f"Timed out after {int(seconds)} seconds waiting for clients. "
                    f"{joined}/{world_size} clients joined.")
            time.sleep(0.01)

    def _call(self, op, args):
        with self._lock:
            try:
                _send(self._sock, (op, args))
                return _recv(self._sock)
            except (ConnectionError, OSError) as e:
                raise DistNetworkError(f"TCPStore at {self.host}:{self.port}: the server is "
                                       f"gone ({e}); its process (rank 0) has probably "
                                       "exited") from None


# ---- FileStore ---------------------------------------------------------------------------

# The file's own bookkeeping, as PyTorch keeps it among the keys (num_keys counts them): how
# many FileStore objects have the file open now, and how many have ever closed it. Tuples, so
# that no str key a user sets can collide with them.
_REFCOUNT_KEY = ("refcount",)
_CLEANUP_KEY = ("cleanup",)


def _update_file(path, change):
    """change(dict) -> (result, dirty) on the file's dict, under an exclusive flock; the dict is
    written back when dirty."""
    with open(path, "r+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            raw = f.read()
            data = pickle.loads(raw) if raw else {}
            result, dirty = change(data)
            if dirty:
                f.seek(0)
                f.truncate()
                f.write(pickle.dumps(data))
                f.flush()
            return result
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _add_in_file(path, key, amount):
    def change(d):
        d[key] = str(int(d.get(key, b"0")) + int(amount)).encode()
        return int(d[key]), True
    return _update_file(path, change)


def _release_file(path, world_size):
    """A FileStore going away (collected, or the interpreter exiting), as PyTorch's destructor:
    it counts itself finished and drops its reference; the last reference removes the file,
    once `world_size` stores have finished (never when world_size is negative)."""
    try:
        finished = _add_in_file(path, _CLEANUP_KEY, 1)
        references = _add_in_file(path, _REFCOUNT_KEY, -1)
        if references == 0 and 0 <= world_size <= finished:
            os.remove(path)
    except FileNotFoundError:  # someone removed the file already
        pass


class FileStore(Store):
    """FileStore(file_name, world_size=-1): the keys in a file that every process opens.

    Each operation takes an exclusive flock on the file, reads the pickled dict, and writes
    it back if it changed; blocking reads poll every few milliseconds. Each FileStore counts
    itself in the file while it lives; when the last one goes away after `world_size` have
    finished, it deletes the file (see `_release_file`).
    """

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self.path = os.fspath(file_name)
        self.world_size = world_size
        try:  # a missing directory is not created: PyTorch's open fails with its strerror
            open(self.path, "ab").close()
        except OSError as e:
            raise DistStoreError(e.strerror) from None
        _add_in_file(self.path, _REFCOUNT_KEY, 1)
        weakref.finalize(self, _release_file, self.path, world_size)

    def _update(self, change):
        return _update_file(self.path, change)

    def _poll(self, keys, seconds, message):
        """Wait for `keys`; past `seconds`, RuntimeError(message) (PyTorch's FileStore raises
        RuntimeError, not DistStoreError)."""
        deadline = time.monotonic() + seconds
        while True:
            data = self._update(lambda d: ({k: d[k] for k in keys if k in d}, False))
            if len(data) == len(keys):
                return data
            if time.monotonic() >= deadline:
                raise RuntimeError(message)
            time.sleep(0.005)

    def set(self, key, value):
        value = _as_bytes(value)
        self._update(lambda d: (d.__setitem__(key, value), True))

    def get(self, key):
        seconds = _seconds(self._timeout)
        return self._poll([key], seconds, f"Timeout waiting for key: {key} after "
                                          f"{int(round(seconds * 1000))} ms")[key]

    def add(self, key, amount):
        return _add_in_file(self.path, key, amount)

    def compare_set(self, key, expected_value, desired_value):
        expected, desired = _as_bytes(expected_value), _as_bytes(desired_value)

        def change(d):
            current = d.get(key)
            if (current is None and expected == b"") or current == expected:
                d[key] = desired
                return desired, True
            return (expected if current is None else current), False
        return self._update(change)

    def wait(self, keys, timeout=None):
        self._poll(list(keys), _seconds(self._timeout if timeout is None else timeout),
                   "Wait timeout")

    def check(self, keys):
        return self._update(lambda d: (all(k in d for k in keys), False))

    def delete_key(self, key):
        """Remove `key`; True even if it was not there, as PyTorch's FileStore answers."""
        return self._update(lambda d: (d.pop(key, None) is None or True, True))

    def num_keys(self):
        return self._update(lambda d: (len(d), False))


class PrefixStore(Store):
    """PrefixStore(prefix, store): every key of `store` seen through "prefix/"."""

    def __init__(self, prefix, store):
        super().__init__()
        self.underlying_store = store
        self._prefix = prefix

    def _k(self, key):
        return f"{self._prefix}/{key}"

    @property
    def timeout(self):
        return self.underlying_store.timeout

    def set_timeout(self, timeout):
        self.underlying_store.set_timeout(timeout)

    def set(self, key, value):
        self.underlying_store.set(self._k(key), value)

    def get(self, key):
        return self.underlying_store.get(self._k(key))

    def add(self, key, amount):
        return self.underlying_store.add(self._k(key), amount)

    def compare_set(self, key, expected_value, desired_value):
        return self.underlying_store.compare_set(self._k(key), expected_value, desired_value)

    def wait(self, keys, timeout=None):
        self.underlying_store.wait([self._k(k) for k in keys], timeout)

    def check(self, keys):
        return self.underlying_store.check([self._k(k) for k in keys])

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self):
        return self.underlying_store.num_keys()
