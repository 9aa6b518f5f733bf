"""A process manager for MPI worlds whose processes mpiexec did not start (mp.spawn,
torchrun-style environment variables, a store): the server side of MPICH's PMI-1 wire protocol.

Note [An MPI world without mpiexec]
-----------------------------------
MPI_Init learns its rank, the world's size and its peers' addresses from the process
manager that started it (mpiexec's Hydra), over PMI: a line protocol on a socket whose
descriptor is in $PMI_FD ("cmd=init", "cmd=get_my_kvsname", "cmd=put key= value=",
"cmd=barrier_in", "cmd=get key=", "cmd=finalize", ...). Processes that were started some
other way cannot simply be joined afterwards: MPICH's singletons (MPI_Init with no process
manager) all call their world the same, so MPI_Comm_connect/accept between two of them fails
with "Local and remote groups in MPI_Intercomm_create must not overlap".

So ember plays the process manager. In init_process_group, before MPI is initialised:
rank 0 starts this file as a small server process (`python .../_pmi.py N timeout`) and
publishes its address in the rendezvous store; every rank connects to it, says which rank it
is, and puts the connected socket's descriptor in $PMI_FD (with $PMI_RANK and $PMI_SIZE)
before importing mpi4py. MPI_Init then builds a real COMM_WORLD of the requested ranks, and
every collective runs exactly as under mpiexec.

The server also does the process manager's other job: noticing a rank that dies. A rank
whose PMI connection closes before it sent "cmd=finalize" (killed, crashed, MPI_Abort) is
announced to every other rank on a second connection each rank keeps open ("watch"); the
ranks' waits (work.py) then fail naming it instead of waiting for their timeout (failure.py).
The server exits once every rank has finalised or died, or if not all ranks connected
within the rendezvous timeout.
"""
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from urllib.parse import quote, unquote

_PREFIX = "ember_pmi"
_kept = []          # the watch connections (their threads read them until the end)


# ---- the rank's side --------------------------------------------------------------------

def _reachable_host(store):
    """The address the other ranks can reach this host at (the TCPStore's, if there is one)."""
    while hasattr(store, "underlying_store"):
        store = store.underlying_store
    host = getattr(store, "host", None)
    if host:
        return host
    name = socket.gethostname()
    try:
        socket.gethostbyname(name)
        return name
    except OSError:
        return "127.0.0.1"


def join_world(store, rank, world_size, timeout_seconds):
    """Make this process's MPI_Init join a world of `world_size` ranks as rank `rank`.

    Call before mpi4py.MPI is imported; returns once MPI is initialised.
    """
    if rank == 0:
        address = _start_server(world_size, timeout_seconds, _reachable_host(store))
        store.set(f"{_PREFIX}/address", address)
    host, port = store.get(f"{_PREFIX}/address").decode().rsplit(":", 1)
    hello = f"rank={rank} host={socket.gethostname()} pid={os.getpid()}"
    watch = _connect(host, int(port), f"cmd=ember_watch {hello}\n", timeout_seconds)
    threading.Thread(target=_watch, args=(watch, rank), daemon=True,
                     name="ember-pmi-watch").start()
    pmi = _connect(host, int(port), f"cmd=ember_hello {hello}\n", timeout_seconds)
    # MPI owns the descriptor from now on: mpi4py finalises MPI after the interpreter has
    # torn its objects down, so a socket object would close it before MPI_Finalize's "bye".
    fd = pmi.detach()
    _kept.append(watch)
    os.environ.update(PMI_FD=str(fd), PMI_RANK=str(rank), PMI_SIZE=str(world_size))
    try:
        from . import _mpi
        _mpi.MPI()
    finally:
        # The children of this process (DataLoader workers, ...) are not ranks of this world.
        for name in ("PMI_FD", "PMI_RANK", "PMI_SIZE"):
            os.environ.pop(name, None)


def _connect(host, port, hello, timeout_seconds):
    deadline = time.monotonic() + timeout_seconds
    while True:
        try:
            sock = socket.create_connection((host, port), timeout=10)
            break
        except OSError as e:
            if time.monotonic() > deadline:
                from .work import DistNetworkError
                raise DistNetworkError(f"ember.distributed: cannot reach the MPI process "
                                       f"manager of rank 0 at {host}:{port}: {e}") from None
            time.sleep(0.05)
    sock.settimeout(None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.sendall(hello.encode())
    return sock


def _watch(sock, my_rank):
    """Record each death the server announces. The server outlives every rank that has not
    finalised, so its connection closing first means it was killed: rank 0, which started it,
    is then named, as the rank whose part of the job is gone."""
    from . import failure
    reader = sock.makefile("rb")
    for line in reader:
        fields = _fields(line.decode())
        if fields.get("cmd") == "ember_dead":
            failure.peer_died(int(fields["rank"]), unquote(fields.get("how", "")))
    if my_rank != 0:
        failure.peer_died(0, "the process manager it started has ended")


def _start_server(world_size, timeout_seconds, host):
    """Start the server process; return "host:port"."""
    server = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), str(world_size), str(timeout_seconds)],
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, close_fds=True)
    port = server.stdout.readline().decode().strip()
    if not port.isdigit():
        raise RuntimeError("ember.distributed: the MPI process manager did not start "
                           f"(exit status {server.poll()})")
    # Not waited for: it outlives this process until every rank has said goodbye, and the
    # last goodbye (this rank's MPI_Finalize) comes after Python's exit handlers have run.
    return f"{host}:{port}"


# ---- the server -------------------------------------------------------------------------

def _fields(line):
    return dict(part.split("=", 1) for part in line.split() if "=" in part)


class Manager:
    """One world's PMI server: its key-value space, barrier, and who is alive."""

    def __init__(self, world_size):
        self.size = world_size
        self.kvsname = f"ember_{uuid.uuid4().hex[:12]}"
        self.kvs = {}
        self.hosts = {}
        self.lock = threading.Condition()
        self.in_barrier = []
        self.finished = set()       # ranks that finalised or died
        self.dead = {}
        self.watchers = []
        self.connected = 0

    def process_mapping(self):
        """PMI_process_mapping: runs of consecutive ranks on one node, "(vector,(node,1,n),...)"."""
        with self.lock:
            self.lock.wait_for(lambda: len(self.hosts) == self.size, 60)
            nodes = {}
            ids = [nodes.setdefault(self.hosts.get(r), len(nodes)) for r in range(self.size)]
        runs = []
        for node in ids:
            if runs and runs[-1][0] == node:
                runs[-1][1] += 1
            else:
                runs.append([node, 1])
        return "(vector," + ",".join(f"({node},1,{n})" for node, n in runs) + ")"

    def serve(self, conn):
        reader = conn.makefile("rb")
        first = _fields(reader.readline().decode())
        rank = int(first.get("rank", -1))
        if first.get("cmd") == "ember_watch":
            with self.lock:
                self.watchers.append(conn)
                for r, how in self.dead.items():
                    self._tell(conn, r, how)
            return
        with self.lock:
            self.hosts[rank] = first.get("host")
            self.connected += 1
            self.lock.notify_all()
        how = "its process ended before MPI_Finalize (killed, crashed or aborted)"
        for line in reader:
            fields = _fields(line.decode())
            cmd = fields.get("cmd")
            if cmd == "finalize":
                self._reply(conn, "cmd=finalize_ack rc=0")
                how = None
                break
            if cmd == "abort":
                how = f"it called MPI_Abort (exit code {fields.get('exitcode', '?')})"
                continue
            self._answer(conn, cmd, fields)
        with self.lock:
            self.finished.add(rank)
            if how is not None:
                self.dead[rank] = how
                for watcher in self.watchers:
                    self._tell(watcher, rank, how)
            self._release_barrier()
            self.lock.notify_all()

    def _tell(self, watcher, rank, how):
        try:
            watcher.sendall(f"cmd=ember_dead rank={rank} how={quote(how)}\n".encode())
        except OSError:
            pass

    def _reply(self, conn, text):
        try:
            conn.sendall((text + "\n").encode())
        except OSError:
            pass

    def _answer(self, conn, cmd, fields):
        if cmd == "init":
            self._reply(conn, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0")
        elif cmd == "get_maxes":
            self._reply(conn, "cmd=maxes kvsname_max=256 keylen_max=256 vallen_max=1024 rc=0")
        elif cmd == "get_appnum":
            self._reply(conn, "cmd=appnum appnum=0 rc=0")
        elif cmd == "get_my_kvsname":
            self._reply(conn, f"cmd=my_kvsname kvsname={self.kvsname} rc=0")
        elif cmd == "get_universe_size":
            self._reply(conn, f"cmd=universe_size size={self.size} rc=0")
        elif cmd == "put":
            with self.lock:
                self.kvs[fields["key"]] = fields.get("value", "")
            self._reply(conn, "cmd=put_result rc=0")
        elif cmd == "get":
            key = fields.get("key")
            if key == "PMI_process_mapping":
                value = self.process_mapping()
            else:
                with self.lock:
                    value = self.kvs.get(key)
            if value is None:
                self._reply(conn, "cmd=get_result rc=-1 msg=key_not_found")
            else:
                self._reply(conn, f"cmd=get_result value={value} rc=0")
        elif cmd == "barrier_in":
            with self.lock:
                self.in_barrier.append(conn)
                self._release_barrier()
        else:   # spawn, publish_name, ...: not offered by this process manager
            self._reply(conn, f"cmd={cmd} rc=-1 msg=not_supported_by_ember")

    def _release_barrier(self):
        """A barrier completes when every rank that is still alive has entered it."""
        alive = self.size - len(self.dead)
        if self.in_barrier and len(self.in_barrier) >= alive:
            for conn in self.in_barrier:
                self._reply(conn, "cmd=barrier_out rc=0")
            self.in_barrier.clear()


def serve(world_size, timeout_seconds):
    """Run the server: print the port, serve until every rank has finalised or died."""
    manager = Manager(world_size)
    listener = socket.create_server(("", 0), backlog=2 * world_size + 8)
    print(listener.getsockname()[1], flush=True)
    sys.stdout.close()

    def accept():
        while True:
            conn, _ = listener.accept()
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=manager.serve, args=(conn,), daemon=True).start()
    threading.Thread(target=accept, daemon=True).start()
    deadline = time.monotonic() + timeout_seconds
    with manager.lock:
        while len(manager.finished) < world_size:
            if manager.connected < world_size and time.monotonic() > deadline:
                return 1
            manager.lock.wait(0.5)
    return 0


if __name__ == "__main__":
    sys.exit(serve(int(sys.argv[1]), float(sys.argv[2])))
