"""SocketQueue: a many-producer, one-consumer queue whose messages carry their shared memory along.

DataLoader workers send batches to the main process through one of these.

Note [Why not multiprocessing.Queue for results]

With `multiprocessing.Queue`, a batch tensor in shared memory travels as a `DupFd`: the receiver,
while unpickling, connects back to a resource-sharer thread in the sending worker and asks for the
descriptor. That thread must first win the worker's GIL from the worker's own loop, which is busy
fetching the next batch and lets go only every `sys.getswitchinterval()` (5 ms): a round trip of
milliseconds per storage, which caps PyTorch's own DataLoader on small batches; and if the sender
has exited in the meantime, the descriptor is lost. The queue's feeder thread adds one more GIL
hand-off per item, and a worker killed while holding the queue's write lock blocks every other.

Here a message is a datagram on a Unix SOCK_SEQPACKET socket: the pickled bytes, with the
descriptor of every storage they reference attached (SCM_RIGHTS). The kernel delivers bytes and
descriptors together, in the order sent, and keeps the descriptors alive in flight, so the
receiver never calls back and the sender may exit at once. Datagrams from many producers never
interleave mid-message, so there is no lock a dead producer could hold. Storages are pickled out
of band (`persistent_id`): the pickle says "descriptor number i, n bytes", and the receiver maps
descriptor i. A pickle too big for one datagram travels in a memory file of its own; descriptors
beyond the 253 one datagram can carry go ahead in datagrams of their own, tagged with the
sender's pid so the receiver can hand them to the right message.
"""
import errno
import io
import os
import pickle
import queue
import socket
import struct
import threading
import time
from multiprocessing import connection, reduction

from .._core.storage import UntypedStorage
from .shared_memory import new_segment, segment_of, share_storage, storage_from_fd

_MAX_FDS = 253             # SCM_MAX_FD: the descriptors one Linux socket message can carry
_MAX_INLINE = 64 * 1024    # pickles bigger than this travel in a memory file
_HEADER = struct.Struct("=ci")  # (kind, sender pid)
_INLINE, _IN_FILE, _MORE_FDS = b"i", b"f", b"+"


class _Pickler(reduction.ForkingPickler):
    """ForkingPickler that sends CPU storages as attached descriptors instead of DupFd."""

    def __init__(self, file):
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self.fds = []
        self._positions = {}  # id(storage) -> its descriptor's position in self.fds
        self._storages = []   # keeps the ids above valid while pickling

    def persistent_id(self, obj):
        if type(obj) is not UntypedStorage or obj.device.type != "cpu":
            return None
        position = self._positions.get(id(obj))
        if position is None:
            share_storage(obj)
            position = self._positions[id(obj)] = len(self.fds)
            self.fds.append(segment_of(obj).fd)
            self._storages.append(obj)
        return position, obj.nbytes()


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, fds):
        super().__init__(file)
        self.fds = fds
        self._storages = {}

    def persistent_load(self, pid):
        position, nbytes = pid
        if position not in self._storages:
            fd, self.fds[position] = self.fds[position], None  # storage_from_fd owns it now,
            self._storages[position] = storage_from_fd(fd, nbytes)  # even if it fails
        return self._storages[position]


class SocketQueue:
    """put() from any number of processes, get() in the one that created the queue."""

    def __init__(self):
        self._reader, self._writer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._put_lock = threading.Lock()  # one message's datagrams go out together
        self._early_fds = {}  # sender pid -> descriptors that came ahead of their message

    def put(self, obj):
        buffer = io.BytesIO()
        pickler = _Pickler(buffer)
        pickler.dump(obj)
        payload, fds = buffer.getbuffer(), pickler.fds
        kind = _INLINE
        if len(payload) > _MAX_INLINE:
            segment = new_segment(len(payload))  # alive until sent: the message keeps the file
            segment[:] = payload
            kind, payload, fds = _IN_FILE, b"", fds + [segment.fd]
        with self._put_lock:
            while len(fds) > _MAX_FDS:
                self._send(_MORE_FDS, b"", fds[:_MAX_FDS])
                fds = fds[_MAX_FDS:]
            self._send(kind, payload, fds)

    def _send(self, kind, payload, fds):
        socket.send_fds(self._writer, [_HEADER.pack(kind, os.getpid()), payload], fds)

    def get(self, timeout=None):
        """The next item; raises queue.Empty if none arrives within `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if deadline is not None and \
                    not connection.wait([self._reader], max(deadline - time.monotonic(), 0)):
                raise queue.Empty
            message, fds, flags, _ = socket.recv_fds(self._reader, _MAX_INLINE + _HEADER.size,
                                                     _MAX_FDS)
            if not message:
                raise EOFError("every producer of the queue has closed it")
            kind, pid = _HEADER.unpack_from(message)
            fds = self._early_fds.pop(pid, []) + fds
            if flags & socket.MSG_TRUNC:
                _close(fds)
                raise RuntimeError("SocketQueue: a message arrived truncated")
            if flags & socket.MSG_CTRUNC:  # the kernel dropped descriptors we had no room for
                _close(fds)
                raise OSError(errno.EMFILE, "Too many open files: the descriptors attached to "
                              "a SocketQueue message could not be received")
            if kind != _MORE_FDS:
                return self._load(kind, message[_HEADER.size:], fds)
            self._early_fds[pid] = fds

    @staticmethod
    def _load(kind, payload, fds):
        try:
            if kind == _IN_FILE:
                payload = _read_and_close(fds.pop())
            return _Unpickler(io.BytesIO(payload), fds).load()
        finally:
            _close(fd for fd in fds if fd is not None)

    def fileno(self):
        """The consumer's end, for `multiprocessing.connection.wait`."""
        return self._reader.fileno()

    def close_consumer_end(self):
        """In a producer: drop the inherited consumer end, so that a send to a consumer that has
        exited fails (BrokenPipeError) instead of blocking for ever."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def close(self):
        for end in (self._reader, self._writer):
            if end is not None:
                end.close()

    def __reduce__(self):
        # Only the producer end travels (to a process being spawned); the consumer stays here.
        return _producer, (reduction.DupFd(self._writer.fileno()),)


def _producer(df):
    q = SocketQueue.__new__(SocketQueue)
    q._reader, q._writer = None, socket.socket(fileno=df.detach())
    q._put_lock = threading.Lock()
    return q


def _close(fds):
    for fd in fds:
        os.close(fd)


def _read_and_close(fd):
    try:
        return os.pread(fd, os.fstat(fd).st_size, 0)
    finally:
        os.close(fd)
