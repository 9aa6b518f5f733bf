"""The caching allocator: PyTorch's CUDACachingAllocator, serving ember's CPU tensors.

Memory comes from a raw allocator in large *segments* that are kept for reuse; a tensor's bytes
are a *block* cut from a segment. When the last array using a block dies the block goes back to
a pool of free blocks, merged with free neighbours, and the next request of a similar size takes
it again: after a warm-up step, a training loop asks the raw allocator for nothing.
`ember.memory` is the public face (statistics, snapshots); this file is the mechanism.
"""
import ctypes
from bisect import bisect_left, insort
from math import prod
import os
import sys
from sys import getrefcount
import threading
import time
import weakref

import numpy as np

# Note [The caching allocator]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch's CUDA allocator exists because cudaMalloc is slow and synchronizes the device; on the
# CPU the same design pays too: a fresh large NumPy array is fresh pages from the kernel, and
# every page is faulted in (zeroed) on first touch. Keeping the pages and handing them out again
# makes that cost happen once per segment instead of once per tensor.
#
# Sizes. A request of n bytes is rounded up to a multiple of 512 (at least 512). Requests of at
# most 1 MiB are "small" and are cut from 2 MiB segments shared by many tensors; larger ones are
# "large": below 10 MiB they come from a 20 MiB segment, above it from a segment of their own
# rounded up to 2 MiB. Small and large blocks live in separate pools, so one long-lived small
# tensor cannot pin a 20 MiB segment.
#
# A segment is a list of blocks linked by prev/next in address order; together they tile it:
#
#     segment 0x7f..000, 2 MiB (small pool), after three allocations and one free
#
#     address: 0      512          2048         2560                            2 MiB
#              +------+------------+------------+-------------------------------+
#              |  A   |  (free) B  |     C      |        (free) remainder       |
#              | 512  |    1536    |    512     |          2094592            |
#              +------+------------+------------+-------------------------------+
#        prev/next: None <-> A <-> B <-> C <-> remainder <-> None
#
# Allocation (malloc) takes the *best fit*: the free block of the smallest size >= the request,
# lowest address first among equals (each pool is a list of (size, address, block) entries kept
# sorted, so best fit is one bisection). If that block
# is larger than needed and the remainder is worth keeping (>= 512 bytes in the small pool,
# > 1 MiB in the large one), it is split: the front becomes the allocation, the remainder a new
# free block after it. If no free block fits, a new segment is requested from the raw allocator;
# if that fails (the raw allocator is out of memory, or the per-process limit is reached), every
# wholly free segment is returned ("release cached blocks"), `num_alloc_retries` is counted and
# the request is tried once more; if it still fails, `num_ooms` is counted and OutOfMemoryError
# is raised with PyTorch's message.
#
# Freeing a block merges it with a free neighbour on either side (B above merges with nothing;
# freeing C would merge B, C and the remainder into one block), so free space does not crumble.
# A segment goes back to the raw allocator only when it is one free block (on empty_cache() or
# on the retry above); the memory stays "reserved" until then.
#
# When is a block free? PyTorch frees a block when the last Storage over it dies. ember's
# tensors keep their bytes as NumPy arrays, and NumPy views (`t.numpy()`, kernel temporaries,
# views of views) keep their base alive by reference; so the block's array is made over a
# ctypes view of the segment, which is not an ndarray (NumPy then stops collapsing `.base` at
# the block's array: every view refers to it), and a weak reference to it, the block's
# *lease*, reports when the array and every view of it are gone. Nothing can use a block after
# it is freed, by construction.
#
# The small-tensor path. Every op result is a malloc and, soon after, a free, so both are
# written out without calls in the common case: a split leaves the free remainder's pool entry
# in place when its smaller size keeps the order (it is the largest free block of its segment,
# usually), and a freed block is absorbed by the free block after it the same way. The lease's
# callback is the `append` of a list (no Python frame runs when an array dies); the queued
# blocks are counted as freed, in the order their arrays died, at the start of the next
# allocator call -- malloc, free, statistics, snapshot, empty_cache -- so every statistic is
# the one freeing at once would give. While history is recorded the callback frees at once
# instead, to record the stack that dropped the array.
#
# Note [Held arrays]
# ~~~~~~~~~~~~~~~~~~
# Making an array over a block (np.ndarray over the segment's buffer) and a weak reference to it
# cost more than the add that fills it, for a 16-element tensor; and a loop's results die and are
# asked for again, the same sizes in the same order, step after step. So the newest HELD arrays
# are not leased at first: the allocator keeps each by reference in `held`, and an array is dead
# when its reference count says only the allocator holds it (`sys.getrefcount`; a tensor, a view
# or a NumPy user of it all count). Every allocator call looks at the held arrays first.
#
# A dead block -- a held array's, or a leased one whose weak reference reported -- is *freed as
# far as every statistic can tell* (allocation, allocated and requested bytes drop then, exactly
# as a free at that moment would drop them), but it stays where it is, `dead`, for the next
# requests: one with the very shape, dtype and strides of a dead held array gets that array
# object back (no new array, no lease; the held blocks are indexed by that key); one of the
# same rounded size gets a dead block (a held one once HELD arrays are held -- until then a new
# key gets a block of its own, so the held arrays grow to a loop's working set -- else the last
# to die among the `kept` blocks of that size) with a new array over it; either counts as a
# malloc. The commonest request skips even the sweep: the very array of a
# held block that died since the last sweep is taken back at once (a free and a malloc of one
# block move no current and no peak, so the deaths not yet counted change nothing the
# statistics say), and so is one counted dead already when the malloc cannot raise a peak even
# with those deaths uncounted (`_under_peaks`). So a steady training loop, whose steps ask for
# the sizes the step before freed, costs a reference-count check and the statistics' update per result, and no
# free, merge, best-fit search or split at all. Dead blocks are freed for real (merged into
# their free neighbours) before anything reads the pools' layout (memory_stats, snapshot,
# empty_cache), and, when no free block fits a request, before a new segment would be asked
# for -- all of them for a large request (so its reserved memory grows only when freeing at
# once would not have served it either), the kept ones only for a small request: a step's
# small results need more room cached by shape than freed at once (a new key cannot take a
# dead block of another size), and losing the held blocks to every miss made each step miss
# again; the small pool grows by a 2 MiB segment instead, in the first step, and at most
# HELD dead blocks stay cached. A raw allocation refused (by the memory limit or the raw
# allocator) frees every dead block of the pool before anything else. What this changes against
# freeing at once is only where later blocks go, never a current, peak or total of the
# allocations' statistics (a test runs both ways on the same requests): PyTorch's allocator
# promises nothing about placement beyond best fit. An array still alive when HELD newer ones
# are held is long-lived, and gets its weak-reference lease then. While history is recorded
# every array is leased at once and every free is done when it happens, so the trace shows
# each free where PyTorch's would.

# How results get into blocks. A kernel that makes its own output buffer takes it from
# `empty(shape, dtype)` and writes into it (matmul and linear with `out=`, the contiguous copies
# behind convolution, relu, max-pool, add/sub/mul of same-shape operands); any other kernel's
# NumPy result is copied into a block when it becomes a tensor (`_wrap` calls `into_block`):
# one memcpy per result, and NumPy's temporary is gone at once. Arrays that are not the allocator's to own -- from_numpy's, shared
# memory, a memory-mapped checkpoint -- are wrapped as they are (`_wrap_external`).
#
# Frees can arrive at any moment: a weakref callback runs whenever the last reference drops,
# including inside malloc (Python's cyclic GC may run there) or from another thread; queueing
# them (list.append is atomic) makes that safe too.

# Note [The take-back without the lock]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# `array()`'s commonest case -- a held array of the request's key (the newest first) has died
# since the last sweep and is asked for again -- runs before the lock is taken: the lock's acquire and release were a
# tenth of a small op's whole cost. It needs no lock because taking the array is a claim no
# other thread can race: `array = block.array` adds a reference before the reference count is
# read, and every other path that hands out, frees or re-cuts a held block first sees that
# count at exactly "only the allocator holds it" -- which it is not while this thread holds it.
# So once the count says 3 (the block's, `array`, getrefcount's argument), the array is this
# thread's; the checks after it (the block still has this array and this key, is not counted
# dead, was asked for with these bytes) are read once the claim stands, so a change another
# thread made before the claim is seen, and the case falls to the locked path. The totals'
# `+= 1` are single bytecodes' read and write, which a thread switch does not split under the
# GIL (switches happen at calls and backward jumps). A Python built without the GIL takes the
# lock for this case too (`_GIL`).
_GIL = getattr(sys, "_is_gil_enabled", lambda: True)()

kMinBlockSize = 512
kPageSize = 4096
HELD = 64  # live arrays kept by reference; older ones get a weak reference (Note [Held arrays])
kSmallSize = 1 << 20
kSmallBuffer = 2 << 20
kMinLargeAlloc = 10 << 20
kLargeBuffer = 20 << 20
kRoundLarge = 2 << 20

ALL, SMALL, LARGE = 0, 1, 2
STAT_TYPES = ("all", "small_pool", "large_pool")
STATS = ("segment", "reserved_bytes")  # kept as Stat objects: they change once per segment
# the statistics every malloc and free changes, kept as plain int fields of each pool (field
# `x` current, `x_tot` total increase, `x_pk` peak) and of the allocator (`x_pk`: peak of all)
HOT = {"allocation": "n", "allocated_bytes": "b", "requested_bytes": "r",
       "inactive_split": "s", "inactive_split_bytes": "sb"}


def round_size(nbytes):
    """The block size for a request: a multiple of 512 bytes, at least 512."""
    if nbytes < kMinBlockSize:
        return kMinBlockSize
    return kMinBlockSize * ((nbytes + kMinBlockSize - 1) // kMinBlockSize)


def allocation_size(size):
    """The segment size requested from the raw allocator for a block of `size` bytes."""
    if size <= kSmallSize:
        return kSmallBuffer
    if size < kMinLargeAlloc:
        return kLargeBuffer
    return kRoundLarge * ((size + kRoundLarge - 1) // kRoundLarge)


def format_size(nbytes):
    """PyTorch's format_size: bytes, KiB, MiB or GiB with two decimals."""
    if nbytes <= 1024:
        return f"{nbytes} bytes"
    if nbytes <= 1048576:
        return f"{nbytes / 1024:.2f} KiB"
    if nbytes <= 1073741824:
        return f"{nbytes / 1048576:.2f} MiB"
    return f"{nbytes / 1073741824:.2f} GiB"


class OutOfMemoryError(RuntimeError):
    """torch.OutOfMemoryError: the allocator could not serve a request."""


def _up(a, b, n):
    """Add n to two statistics (`all` and a pool's)."""
    c = a.current + n
    a.current = c
    a.allocated += n
    if c > a.peak:
        a.peak = c
    c = b.current + n
    b.current = c
    b.allocated += n
    if c > b.peak:
        b.peak = c


def _down(a, b, n):
    a.current -= n
    a.freed += n
    b.current -= n
    b.freed += n


class Stat:
    __slots__ = ("current", "peak", "allocated", "freed")

    def __init__(self):
        self.current = self.peak = self.allocated = self.freed = 0

    def as_dict(self):
        return {"current": self.current, "peak": self.peak, "allocated": self.allocated,
                "freed": self.freed}


class RawAllocator:
    """Whole segments from the operating system: `malloc(n)` is a uint8 array or None when the
    memory is not there; a CUDA backend would put cudaMalloc/cudaFree here."""

    def malloc(self, nbytes):
        # aligned to a page, as c10's alloc_cpu aligns (to 64 bytes): the block offsets are
        # multiples of 512, so every block starts a cache line too -- malloc's own large
        # arrays start 16 bytes into one, and then half of the kernels' 32-byte vector loads
        # straddle two lines (a LeNet step measured 12% slower for it)
        try:
            array = np.empty(nbytes + kPageSize, dtype=np.uint8)
        except MemoryError:
            return None
        skip = -array.__array_interface__["data"][0] % kPageSize
        return array[skip:skip + nbytes]

    def free(self, array):
        pass  # NumPy returns the pages when the segment's array is dropped

    def total_memory(self):
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            return 0


class Segment:
    __slots__ = ("array", "buffer", "address", "size", "pool", "free_blocks", "frames", "head")

    def __init__(self, array, free_blocks, frames):
        self.array = array
        # the buffer blocks' arrays are made over: not an ndarray, so NumPy does not collapse
        # a view's `.base` past a block's array to the segment (see the Note)
        self.buffer = (ctypes.c_ubyte * array.nbytes).from_buffer(array)
        self.address = array.__array_interface__["data"][0]
        self.size = array.nbytes
        self.pool = free_blocks.kind  # SMALL or LARGE
        self.free_blocks = free_blocks  # the BlockPool its free blocks go to
        self.frames = frames
        self.head = None  # the block at the segment's start (blocks link on from it)


class Block:
    __slots__ = ("segment", "address", "size", "requested_size", "allocated", "prev", "next",
                 "lease", "frames", "array", "key", "dead")

    def __init__(self, segment, address, size, prev=None, next=None):
        self.segment = segment
        self.address = address
        self.size = size
        self.requested_size = 0
        self.allocated = False
        self.prev = prev
        self.next = next
        self.lease = None
        self.frames = None
        self.array = self.key = None  # while held: the array over it, and its (shape, dtype, strides)
        self.dead = False  # held, its array dead: counted as freed, kept for a request

    def is_split(self):
        return self.prev is not None or self.next is not None


class BlockPool:
    """Free blocks as a sorted list of (size, address, block) entries: best fit is one
    bisection for (size,). A free block that grows or shrinks in place (split, merge) keeps its
    entry's position when its neighbours in the order allow, which is the common case. The
    pool also holds the statistics its allocations change."""
    __slots__ = ("kind", "keys", "min_split", "other", "n", "n_tot", "n_pk", "b", "b_tot", "b_pk",
                 "r", "r_tot", "r_pk", "s", "s_tot", "s_pk", "sb", "sb_tot", "sb_pk")

    def __init__(self, kind):
        self.kind = kind  # SMALL or LARGE
        self.keys = []
        # the smallest remainder worth splitting off a free block
        self.min_split = kMinBlockSize if kind == SMALL else kSmallSize + 1

    def insert(self, block):
        insort(self.keys, (block.size, block.address, block))

    def remove(self, block):
        keys = self.keys
        del keys[bisect_left(keys, (block.size, block.address))]

    def blocks(self):
        return [entry[2] for entry in self.keys]

    def grown(self, block, i):
        """Re-key free block `block`, whose entry is at keys[i], after its size grew."""
        keys = self.keys
        entry = (block.size, block.address, block)
        if i + 1 == len(keys) or entry < keys[i + 1]:
            keys[i] = entry
        else:
            del keys[i]
            insort(keys, entry)


class _Lease(weakref.ref):
    """The weak reference from a block to the array over it: its death frees the block."""
    __slots__ = ("block",)


class CachingAllocator:
    """One device's caching allocator (PyTorch's DeviceCachingAllocator)."""

    def __init__(self, raw=None, device=0):
        self.raw = raw or RawAllocator()
        self.device = device
        self.small = BlockPool(SMALL)
        self.large = BlockPool(LARGE)
        self.segments = {}  # address -> Segment
        self.buffers = set()  # id() of each segment's buffer: arrays over it are blocks
        self.lock = threading.Lock()
        self.pending = []  # leases of dead arrays whose blocks are not freed yet, oldest first
        self.held = []  # blocks of the newest arrays, held by reference (Note [Held arrays])
        self.held_by_key = {}  # (shape, dtype, strides) -> those of `held` with it, newest first
        self.held_by_size = {}  # block size -> those of `held` of that size
        self.hold = HELD  # how many arrays are held (0: every array leased at once)
        self.kept = {}  # block size -> dead blocks kept whole for requests of that size
        self.queue_free = self.pending.append  # bound once: the callback of every lease
        self.limit = None  # allowed bytes of reserved memory (set_per_process_memory_fraction)
        self.fraction = 1.0
        self.reset_stats()
        self.recording = None  # a History while _record_memory_history is on

    # ---- statistics ---------------------------------------------------------------------
    def reset_stats(self):
        self.stats = {name: (Stat(), Stat(), Stat()) for name in STATS}
        self.small.other, self.large.other = self.large, self.small
        for x in HOT.values():
            for pool in (self.small, self.large):
                for field in (x, x + "_tot", x + "_pk"):
                    setattr(pool, field, 0)
            setattr(self, x + "_pk", 0)
        self.accumulated_base = {}  # (pool kind, x) -> (total increase, total decrease) at reset
        self.oversize_allocations = Stat()
        self.oversize_segments = Stat()
        self.num_alloc_retries = 0
        self.num_ooms = 0
        self.num_device_alloc = 0
        self.num_device_free = 0

    def _change(self, name, pool, n):
        """Add n (possibly negative) to stat `name` for `all` and for the block's pool."""
        if n >= 0:
            _up(self.stats[name][ALL], self.stats[name][pool], n)
        else:
            _down(self.stats[name][ALL], self.stats[name][pool], -n)

    def _hot_stat(self, x):
        """Hot statistic `x` as {"all": ..., "small_pool": ..., "large_pool": ...}."""
        out, total = {}, dict.fromkeys(("current", "allocated", "freed"), 0)
        for pool, key in ((self.large, "large_pool"), (self.small, "small_pool")):
            cur, tot = getattr(pool, x), getattr(pool, x + "_tot")
            base_inc, base_dec = self.accumulated_base.get((pool.kind, x), (0, 0))
            out[key] = {"current": cur, "peak": getattr(pool, x + "_pk"),
                        "allocated": tot - base_inc, "freed": tot - cur - base_dec}
            for k in total:
                total[k] += out[key][k]
        out["all"] = dict(total, peak=getattr(self, x + "_pk"))
        return out

    def current(self, name):
        """The `all` current value of a statistic (e.g. "allocated_bytes")."""
        if self.pending or self.held:
            with self.lock:
                self._sweep(None, 0)  # deaths counted; no layout read here
        if name in HOT:
            return getattr(self.small, HOT[name]) + getattr(self.large, HOT[name])
        return self.stats[name][ALL].current

    def peak(self, name):
        if self.pending or self.held:
            with self.lock:
                self._sweep(None, 0)
        if name in HOT:
            return getattr(self, HOT[name] + "_pk")
        return self.stats[name][ALL].peak

    def reset_peak_stats(self):
        with self.lock:  # frees still queued happened before the reset
            self._drain()
        for x in HOT.values():
            for pool in (self.small, self.large):
                setattr(pool, x + "_pk", getattr(pool, x))
            setattr(self, x + "_pk", getattr(self.small, x) + getattr(self.large, x))
        for stats in self.stats.values():
            for s in stats:
                s.peak = s.current
        self.oversize_allocations.peak = self.oversize_allocations.current
        self.oversize_segments.peak = self.oversize_segments.current

    def reset_accumulated_stats(self):
        with self.lock:  # frees still queued happened before the reset
            self._drain()
        for stats in list(self.stats.values()) + [(self.oversize_allocations,
                                                   self.oversize_segments)]:
            for s in stats:
                s.allocated = s.freed = 0
        for x in HOT.values():
            for pool in (self.small, self.large):
                tot = getattr(pool, x + "_tot")
                self.accumulated_base[pool.kind, x] = (tot, tot - getattr(pool, x))
        self.num_alloc_retries = self.num_ooms = 0
        self.num_device_alloc = self.num_device_free = 0

    def memory_stats(self):
        """The nested statistics dict, with torch.cuda.memory_stats_as_nested_dict's keys."""
        with self.lock:
            self._drain()
            out = {name: {STAT_TYPES[i]: s.as_dict() for i, s in enumerate(stats)}
                   for name, stats in self.stats.items()}
            out.update((name, self._hot_stat(x)) for name, x in HOT.items())
            # with one stream nothing waits for another to finish with a block: every active
            # block is allocated
            out["active"] = out["allocation"]
            out["active_bytes"] = out["allocated_bytes"]
            out["oversize_allocations"] = self.oversize_allocations.as_dict()
            out["oversize_segments"] = self.oversize_segments.as_dict()
            out["num_alloc_retries"] = self.num_alloc_retries
            out["num_ooms"] = self.num_ooms
            out["num_sync_all_streams"] = 0
            out["num_device_alloc"] = self.num_device_alloc
            out["num_device_free"] = self.num_device_free
            out["num_oom_rejections"] = 0
            out["max_split_size"] = -1  # no max_split_size configured: blocks of any size split
            out["reserved_bytes_by_private_pools"] = {}
            return out

    # ---- malloc -------------------------------------------------------------------------
    def malloc(self, nbytes):
        """A Block of at least `nbytes` bytes, marked allocated."""
        lock = self.lock
        lock.acquire()
        try:
            if self.pending or self.held:
                self._sweep(None, 0)
            return self._malloc(nbytes)
        finally:
            lock.release()

    def array(self, nbytes, dtype, shape, strides=None):
        """A new array of `dtype` and `shape` (C order, or `strides`) over a block of `nbytes`
        bytes; when it and every view of it are gone, the block is freed."""
        key = (shape, dtype, strides)
        same = self.held_by_key.get(key, ())
        if same and _GIL:
            # the commonest of all, first and without the lock: an array of the key (newest
            # first) dead since the last sweep -- a loop's result, asked for again (Note [The
            # take-back without the lock])
            for block in same:  # (safe while another thread changes the list)
                array = block.array
                # (3 references: the block's, `array` and the argument)
                if getrefcount(array) == 3 and block.array is array and block.key == key and \
                        not block.dead and block.requested_size == nbytes:
                    pool = block.segment.free_blocks
                    pool.n_tot += 1
                    pool.b_tot += block.size
                    pool.r_tot += nbytes
                    return array
            array = None  # (a reference of its own would keep the last block looked at alive)
        lock = self.lock
        lock.acquire()
        try:
            # (`same` as read above: a list the key lost since is empty, and the sweep below
            # looks the key up again)
            for block in same:
                # the very array of a dead held block, taken back without a sweep when other
                # deaths, still uncounted, cannot change what the statistics say (Note [Held
                # arrays]; its writeable flag is the allocator's alone: Tensor.numpy hands out
                # a view). One not yet counted dead comes here without the GIL, or when another
                # thread held a reference to it for a moment.
                if getrefcount(block.array) == 2 and block.requested_size == nbytes:
                    pool = block.segment.free_blocks
                    if not block.dead:  # died since the last sweep: a free and a malloc of
                        pool.n_tot += 1  # one block, which move no current and no peak
                        pool.b_tot += block.size
                        pool.r_tot += nbytes
                        return block.array
                    size = block.size
                    if self._under_peaks(pool, size, nbytes) or \
                            self._count_deaths_under(pool, size, nbytes):
                        block.dead = False  # a malloc below every peak: the counts alone
                        pool.n += 1  # grow (_count_malloc without the peaks)
                        pool.n_tot += 1
                        pool.b += size
                        pool.b_tot += size
                        pool.r += nbytes
                        pool.r_tot += nbytes
                        return block.array
            size = (nbytes + kMinBlockSize - 1) & -kMinBlockSize or kMinBlockSize
            block = None
            if not self.pending:
                # no dead array of the key: a dead block of the size, as _sweep would pick
                # it, handed out without a sweep when no peak can move
                if len(self.held) >= self.hold:
                    for dead in self.held_by_size.get(size, ()):
                        if dead.dead:
                            block = dead
                            break
                if block is None:
                    kept = self.kept.get(size)
                    if kept:
                        block = kept[-1]  # the last to die: its pages are the warmest
                if block is not None:
                    pool = block.segment.free_blocks
                    if not (self._under_peaks(pool, size, nbytes) or
                            self._count_deaths_under(pool, size, nbytes)):
                        block = None
            if block is not None:
                if block.array is None:
                    self.kept[size].pop()
                else:
                    self._unhold(block)  # bare: a new array goes over it
                    block.array = block.key = None
                block.dead = False
                block.requested_size = nbytes
                self._count_malloc(block.segment.free_blocks, size, nbytes)
            else:
                block = self._sweep(key, nbytes) if self.held or self.pending else None
                if block is not None and block.array is not None:
                    return block.array  # a dead array itself, asked for again
            if block is None:
                block = self._malloc(nbytes)
            segment = block.segment
            array = np.ndarray(shape, dtype, segment.buffer, block.address - segment.address,
                               strides)
            if self.recording is None and self.hold:
                block.array = array
                self._hold(block, key)
                if len(self.held) > self.hold:
                    self._trim()
            else:
                self._lease(block, array)
            return array
        finally:
            lock.release()

    def _sweep(self, key, nbytes):
        """Free the queued leases' blocks; count the held arrays that died (only the allocator
        holds them) as freed, keeping their blocks; lease the oldest held arrays and free the
        oldest dead blocks beyond HELD; and -- given the `key` of a request of `nbytes` -- hand
        out a dead block again: the one whose array has that very shape, dtype and strides
        (its array still on it), else one of the request's rounded size (bare), counted as a
        malloc; None when there is none (Note [Held arrays])."""
        if self.pending:
            pending = self.pending  # in the order their arrays died
            while pending:
                block = pending.pop(0).block
                self._count_free(block)
                if self.hold and self.recording is None:
                    self._keep(block)
                else:  # nothing held or kept (or each free recorded): every free at once
                    self._release(block)
        held = self.held
        same = first = None  # the dead array asked for; the first array found dead now
        for block in held:
            # block.array and the argument alone: dead
            if not block.dead and getrefcount(block.array) == 2:
                block.dead = True  # freed, as far as the statistics can tell
                if first is None:
                    first = block  # counted below, unless it is asked for again at once
                else:  # _count_free, written out: results dying together come here
                    pool = block.segment.free_blocks
                    pool.n -= 1
                    pool.b -= block.size
                    pool.r -= block.requested_size
        for block in self.held_by_key.get(key, ()):
            if block.dead:
                same = block
                break
        block = same
        if block is None and key is not None:  # a dead block of the size, for a new array
            size = (nbytes + kMinBlockSize - 1) & -kMinBlockSize or kMinBlockSize
            # a dead held array is re-cut only when `held` is full: until then a new key gets a
            # block of its own, so the held arrays grow to a loop's working set
            for dead in self.held_by_size.get(size, ()) if len(held) >= self.hold else ():
                if dead.dead:  # (the first in `held`'s order: the size's list keeps it)
                    block = dead
                    break
            else:
                kept = self.kept.get(size)
                if kept:
                    block = kept.pop()  # the last to die: its pages are the warmest
        if first is not None and first is not block:
            self._count_free(first)
        if block is not None:
            pool = block.segment.free_blocks
            if block is first and nbytes == block.requested_size:
                # it died in this very call and is asked for again: freeing and mallocing it
                # leave every count where it was and move no peak; only the totals grow
                pool.n_tot += 1
                pool.b_tot += block.size
                pool.r_tot += nbytes
            else:
                if block is first:
                    self._count_free(block)
                self._count_malloc(pool, block.size, nbytes)
                block.requested_size = nbytes
            block.dead = False
            if block is not same:
                if block.array is not None:  # a dead held block (a kept one has no array)
                    self._unhold(block)  # bare: a new array goes over it
                    block.array = block.key = None
            elif held[-1] is not block:  # the newest now: not leased by the trimming below
                self._unhold(block)
                self._hold(block, block.key)
        self._trim()
        return block

    def _trim(self):
        """Down to HELD held arrays: the oldest ones' dead blocks are kept, the live ones
        leased (a weak reference frees them)."""
        held = self.held
        while len(held) > self.hold:
            old = held[0]
            self._unhold(old)
            if not old.dead and getrefcount(old.array) == 2:
                self._count_free(old)  # died, uncounted until now
                old.dead = True
            if old.dead:
                self._keep(old)
            else:
                self._lease(old, old.array)

    def _hold(self, block, key):
        """`block` (its array on it) the newest of `held`, indexed by its key and size."""
        block.key = key
        self.held.append(block)
        same = self.held_by_key.get(key)
        if same is None:
            self.held_by_key[key] = [block]
        else:
            same.insert(0, block)
        same = self.held_by_size.get(block.size)
        if same is None:
            self.held_by_size[block.size] = [block]
        else:
            same.append(block)

    def _unhold(self, block):
        """Take `block` off `held` and off its key's and size's lists."""
        self.held.remove(block)
        for index, k in ((self.held_by_key, block.key), (self.held_by_size, block.size)):
            same = index[k]
            same.remove(block)
            if not same:
                del index[k]

    @staticmethod
    def _count_free(block):
        """The statistics of freeing `block` (allocation, allocated and requested bytes)."""
        pool = block.segment.free_blocks
        pool.n -= 1
        pool.b -= block.size
        pool.r -= block.requested_size

    def _keep(self, block):
        """A dead block (counted as freed) kept whole for a later request of its size."""
        block.dead = True
        block.array = block.key = block.lease = None
        kept = self.kept.get(block.size)
        if kept is None:
            self.kept[block.size] = [block]
        else:
            kept.append(block)

    def _free_all_dead(self):
        """Free every dead block held or kept for real (the pools' layout is read, or a
        segment is wanted); whether there was one."""
        held = self.held
        dead = [block for block in held if block.dead]
        for block in dead:
            self._unhold(block)
        for blocks in self.kept.values():
            dead += blocks
        self.kept.clear()
        for block in dead:
            self._release_dead(block)
        return bool(dead)

    def _release_dead(self, block):
        """A dead block (counted as freed, off `held` and `kept`) freed for real."""
        block.dead = False
        block.array = block.key = None
        self._release(block)

    def _free_dead_for(self, pool, size, held):
        """Free dead blocks of `pool` for real -- the kept ones first, then the held ones,
        oldest first -- until a free block of `size` bytes exists; its index in the pool, or
        None when none does with every dead block of the pool freed. The other pool's dead
        blocks, and those not needed, stay cached (Note [Held arrays])."""
        keys = pool.keys
        for blocks in list(self.kept.values()):
            j = 0
            while j < len(blocks):
                block = blocks[j]
                if block.segment.free_blocks is not pool:
                    j += 1
                    continue
                del blocks[j]
                if not blocks:
                    del self.kept[block.size]
                self._release_dead(block)
                if keys[-1][0] >= size:
                    return bisect_left(keys, (size,))
        for block in [b for b in self.held if b.dead and b.segment.free_blocks is pool] \
                if held else ():
            self._unhold(block)
            self._release_dead(block)
            if keys[-1][0] >= size:
                return bisect_left(keys, (size,))
        return None

    def _lease(self, block, array):
        """`array`'s death frees `block` (a weak reference, queued or -- while history is
        recorded -- freed at once); the allocator holds the array no longer."""
        lease = _Lease(array, self.queue_free if self.recording is None else
                       self._on_lease_dead)
        lease.block = block
        block.lease = lease
        block.array = block.key = None

    def lease_held(self):
        """release_held, taking the lock: for code that counts an array's references."""
        with self.lock:
            self.release_held()

    def release_held(self):
        """Every held array to a weak-reference lease (the dead ones' blocks freed; the lock
        held): history recording starts, and wants each free when it happens."""
        self._drain()
        held = self.held
        while held:
            block = held.pop(0)
            self._lease(block, block.array)
        self.held_by_key.clear()
        self.held_by_size.clear()

    def _malloc(self, nbytes):
        # the hot path of every new block: written out, with no calls in the common case
        size = (nbytes + kMinBlockSize - 1) & -kMinBlockSize or kMinBlockSize  # round_size
        pool = self.small if size <= kSmallSize else self.large
        keys = pool.keys
        i = bisect_left(keys, (size,))  # best fit: the first (size, address) >= (size,)
        if i == len(keys):
            i = self._new_segment(nbytes, size, pool)
        block = keys[i][2]
        remaining = block.size - size
        if remaining >= pool.min_split:
            # split: the front becomes the allocation, `block` stays free with the rest (its
            # entry keeps its place unless the smaller size must move it)
            prev = block.prev
            out = Block(block.segment, block.address, size, prev, block)
            if prev is None:
                block.segment.head = out
            else:
                prev.next = out
            block.prev = out
            address = block.address + size
            block.address = address
            block.size = remaining
            entry = (remaining, address, block)
            if i and keys[i - 1] > entry:
                del keys[i]
                insort(keys, entry)
            else:
                keys[i] = entry
            if prev is not None or block.next is not None:  # a free piece got smaller
                pool.sb -= size
            else:  # a whole free segment is split for the first time
                self._more_split(pool, 1, remaining)
        else:
            del keys[i]
            out = block
            size = block.size  # all of it: the rest is too small to split off
            if block.prev is not None or block.next is not None:
                pool.sb -= size
                pool.s -= 1
        out.allocated = True
        out.requested_size = nbytes
        self._count_malloc(pool, size, nbytes)
        if self.recording is not None:
            out.frames = self.recording.frames()
            self.recording.record("alloc", out.address, size, out.frames)
        return out

    def _under_peaks(self, pool, size, nbytes):
        """Whether a malloc of `size` bytes (`nbytes` asked for) leaves every peak where it is
        even while some deaths are still uncounted (the counts are then above the truth): then
        it needs no sweep first."""
        other = pool.other
        return (pool.n < pool.n_pk and pool.n + other.n < self.n_pk and
                pool.b + size <= pool.b_pk and pool.b + other.b + size <= self.b_pk and
                pool.r + nbytes <= pool.r_pk and pool.r + other.r + nbytes <= self.r_pk)

    def _count_deaths_under(self, pool, size, nbytes):
        """Count the deaths of held arrays, newest first, until a malloc of `size` bytes
        (`nbytes` asked for) is _under_peaks -- whether it is then: the deaths left uncounted
        only make the counts higher than the truth, so a malloc under the peaks stays under
        them (a partial sweep, where the commonest dead arrays are the newest)."""
        for block in reversed(self.held):
            if not block.dead and getrefcount(block.array) == 2:
                block.dead = True
                self._count_free(block)
                if self._under_peaks(pool, size, nbytes):
                    return True
        return False

    def _count_malloc(self, pool, size, nbytes):
        """allocation += 1, allocated_bytes += size, requested_bytes += nbytes, with peaks."""
        other = pool.other
        c = pool.n + 1
        pool.n, pool.n_tot = c, pool.n_tot + 1
        if c > pool.n_pk:
            pool.n_pk = c
        if c + other.n > self.n_pk:
            self.n_pk = c + other.n
        c = pool.b + size
        pool.b, pool.b_tot = c, pool.b_tot + size
        if c > pool.b_pk:
            pool.b_pk = c
        if c + other.b > self.b_pk:
            self.b_pk = c + other.b
        c = pool.r + nbytes
        pool.r, pool.r_tot = c, pool.r_tot + nbytes
        if c > pool.r_pk:
            pool.r_pk = c
        if c + other.r > self.r_pk:
            self.r_pk = c + other.r

    def _new_segment(self, nbytes, size, pool):
        """No free block fits: a new segment (after releasing the cached ones and retrying, if
        need be) whose one block goes into `pool`; its index there. Dead blocks are freed
        first -- merged with their neighbours, they may fit: the kept ones always, the held
        ones for a large request or when the raw allocation is refused (Note [Held arrays])."""
        i = self._free_dead_for(pool, size, held=pool is self.large)
        if i is not None:
            return i
        block = self._alloc_block(size, pool, retry=False)
        if block is None:
            i = self._free_dead_for(pool, size, held=True)
            if i is not None:
                return i
            self._release_cached_blocks()
            block = self._alloc_block(size, pool, retry=True)
            if block is None:
                self._out_of_memory(nbytes, size)
        pool.insert(block)
        return bisect_left(pool.keys, (size,))  # the new block: nothing else fits

    def _more_split(self, pool, count, nbytes):
        """Add count >= 0 inactive split blocks of nbytes >= 0 bytes to `pool`'s statistics,
        with the peaks (written out: every free between allocated blocks comes here)."""
        other = pool.other
        if count:
            c = pool.s + count
            pool.s, pool.s_tot = c, pool.s_tot + count
            if c > pool.s_pk:
                pool.s_pk = c
            if c + other.s > self.s_pk:
                self.s_pk = c + other.s
        if nbytes:
            c = pool.sb + nbytes
            pool.sb, pool.sb_tot = c, pool.sb_tot + nbytes
            if c > pool.sb_pk:
                pool.sb_pk = c
            if c + other.sb > self.sb_pk:
                self.sb_pk = c + other.sb

    def _alloc_block(self, size, pool, retry):
        """A new segment for a block of `size` bytes: its one free block (not yet in `pool`),
        or None when the raw allocator or the memory limit refuses."""
        if retry:
            self.num_alloc_retries += 1
        nbytes = allocation_size(size)
        reserved = self.stats["reserved_bytes"][ALL].current
        if self.limit is not None and reserved + nbytes > self.limit:
            return None
        array = self.raw.malloc(nbytes)
        if array is None:
            return None
        self.num_device_alloc += 1
        history = self.recording
        frames = history.frames() if history is not None else None
        segment = Segment(array, pool, frames)
        self.segments[segment.address] = segment
        self.buffers.add(id(segment.buffer))
        self._change("segment", pool.kind, 1)
        self._change("reserved_bytes", pool.kind, nbytes)
        if history is not None:
            history.record("segment_alloc", segment.address, nbytes, frames)
        segment.head = Block(segment, segment.address, nbytes)
        return segment.head

    def _out_of_memory(self, nbytes, size):
        self.num_ooms += 1
        total = self.raw.total_memory()
        reserved = self.stats["reserved_bytes"][ALL].current
        allocated = self.current("allocated_bytes")
        free = max(total - reserved, 0) if self.limit is None else max(self.limit - reserved, 0)
        if self.recording is not None:
            self.recording.record("oom", 0, size, self.recording.frames(), device_free=free)
        allowed = f"{format_size(self.limit)} allowed; " if self.limit is not None else ""
        raise OutOfMemoryError(
            f"CPU out of memory. Tried to allocate {format_size(allocation_size(size))}. "
            f"CPU {self.device} has a total capacity of {format_size(total)} of which "
            f"{format_size(free)} is free. "
            f"{allowed}Of the allocated memory {format_size(allocated)} is allocated by "
            f"ember, and {format_size(reserved - allocated)} is reserved by ember but "
            f"unallocated. If reserved but unallocated memory is large, empty_cache() returns "
            f"it to the system.")

    # ---- free ---------------------------------------------------------------------------
    def _on_lease_dead(self, lease):
        """The lease callback while history is recorded: the free is recorded at once, with
        the stack that dropped the last reference."""
        lock = self.lock
        if lock.acquire(False):
            try:
                self._drain()
                self._free(lease.block)
            finally:
                lock.release()
        else:
            self.pending.append(lease)

    def free(self, block):
        with self.lock:
            self._drain()
            self._free(block)

    def _drain(self):
        """Free the blocks of the queued leases (in the order their arrays died) and of the
        dead held arrays, with the lock held: before the pools' layout is read."""
        self._sweep(None, 0)
        self._free_all_dead()

    def _free(self, block):
        pool = block.segment.free_blocks
        pool.n -= 1
        pool.b -= block.size
        pool.r -= block.requested_size
        self._release(block)

    def _release(self, block):
        """A block back into its pool, merged with free neighbours (the statistics of the
        free are counted already)."""
        size = block.size
        if self.recording is not None:
            frames = self.recording.frames()
            self.recording.record("free_requested", block.address, size, frames)
            self.recording.record("free_completed", block.address, size, frames)
        block.lease = block.frames = None
        block.allocated = False
        pool = block.segment.free_blocks
        prev, nxt = block.prev, block.next
        if prev is not None and not prev.allocated:
            self._merge_into_prev(block, pool)
        elif nxt is not None and not nxt.allocated:
            # the common merge (a block freed before the free rest of its segment): the next
            # block absorbs it, keeping its pool entry's place when the larger size allows
            keys = pool.keys
            i = bisect_left(keys, (nxt.size, nxt.address))
            grown = nxt.size + size
            nxt.address = block.address
            nxt.size = grown
            nxt.prev = prev
            if prev is None:
                block.segment.head = nxt
            else:
                prev.next = nxt
            entry = (grown, block.address, nxt)
            if i + 1 < len(keys) and keys[i + 1] < entry:
                del keys[i]
                insort(keys, entry)
            else:
                keys[i] = entry
            if prev is not None or nxt.next is not None:  # still a piece: `size` more bytes
                self._more_split(pool, 0, size)
            else:  # the whole segment is one free block again
                pool.s -= 1
                pool.sb -= grown - size
        else:
            insort(pool.keys, (size, block.address, block))
            if prev is not None or nxt is not None:
                self._more_split(pool, 1, size)

    def _merge_into_prev(self, block, pool):
        """Free `block` into the free block before it (and the one after it, if free)."""
        keys = pool.keys
        prev, nxt = block.prev, block.next
        if nxt is not None and not nxt.allocated:
            del keys[bisect_left(keys, (nxt.size, nxt.address))]
            merged_count, merged_bytes = 2, prev.size + nxt.size
            nxt = nxt.next
        else:
            merged_count, merged_bytes = 1, prev.size
        i = bisect_left(keys, (prev.size, prev.address))
        prev.size = block.size + merged_bytes
        prev.next = nxt
        if nxt is not None:
            nxt.prev = prev
        pool.grown(prev, i)
        # the merged neighbours stop being inactive split blocks; the result is one if it is
        # still a piece of its segment
        count, nbytes = -merged_count, -merged_bytes
        if prev.prev is not None or nxt is not None:
            count, nbytes = count + 1, nbytes + prev.size
        if count > 0 or nbytes > 0:
            self._more_split(pool, max(count, 0), max(nbytes, 0))
        if count < 0:
            pool.s += count
        if nbytes < 0:
            pool.sb += nbytes

    def _release_cached_blocks(self):
        """Return every wholly free segment to the raw allocator."""
        self._free_all_dead()
        for pool in (self.large, self.small):
            for block in [b for b in pool.blocks() if not b.is_split()]:
                pool.remove(block)
                segment = self.segments.pop(block.segment.address)
                self.buffers.discard(id(segment.buffer))
                self._change("segment", pool.kind, -1)
                self._change("reserved_bytes", pool.kind, -segment.size)
                self.num_device_free += 1
                if self.recording is not None:
                    self.recording.record("segment_free", segment.address, segment.size,
                                          self.recording.frames())
                self.raw.free(segment.array)

    def empty_cache(self):
        with self.lock:
            self._drain()
            self._release_cached_blocks()

    def set_memory_fraction(self, fraction):
        self.fraction = fraction
        self.limit = int(fraction * self.raw.total_memory())

    # ---- arrays over blocks -------------------------------------------------------------
    def lease(self, block, nbytes, dtype):
        """A 1-d array of `dtype` over the block's first `nbytes` bytes, leasing the block."""
        segment = block.segment
        array = np.ndarray((nbytes // dtype.itemsize,), dtype, segment.buffer,
                           block.address - segment.address)
        self._lease(block, array)
        return array

    # ---- snapshots ----------------------------------------------------------------------
    def snapshot(self):
        """Segments and blocks as torch.cuda.memory._snapshot() lays them out."""
        with self.lock:
            self._drain()
            segments = []
            for address in sorted(self.segments):
                seg = self.segments[address]
                blocks, allocated, active, requested = [], 0, 0, 0
                b = seg.head
                while b is not None:
                    state = "active_allocated" if b.allocated else "inactive"
                    blocks.append({"address": b.address, "size": b.size,
                                   "requested_size": b.requested_size if b.allocated else 0,
                                   "state": state, "frames": b.frames or []})
                    if b.allocated:
                        allocated += b.size
                        active += b.size
                        requested += b.requested_size
                    b = b.next
                segments.append({
                    "device": self.device, "address": address, "total_size": seg.size,
                    "allocated_size": allocated, "active_size": active,
                    "requested_size": requested, "stream": 0,
                    "segment_type": "small" if seg.pool == SMALL else "large",
                    "segment_pool_id": (0, 0), "is_expandable": False,
                    "frames": seg.frames or [], "blocks": blocks})
            history = self.recording
            traces = list(history.entries()) if history is not None else []
            if history is not None:
                history.record("snapshot", 0, 0, [])
            return {"segments": segments, "device_traces": [traces],
                    "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "",
                                           "max_split_size": -1,
                                           "garbage_collection_threshold": 0.0,
                                           "expandable_segments": False,
                                           "pinned_num_register_threads": 1,
                                           "release_lock_on_malloc": False,
                                           "pinned_use_host_register": False,
                                           "roundup_power2_divisions": {}}}


_MACHINERY = {__file__, os.path.join(os.path.dirname(__file__), "tensor.py"),
              os.path.join(os.path.dirname(__file__), "storage.py")}


class History:
    """The trace `_record_memory_history` keeps: a ring of TraceEntry dicts, with frames."""

    def __init__(self, context="all", stacks="python", max_entries=sys.maxsize,
                 keep_trace=True, skip_actions=()):
        self.context = context
        self.stacks = stacks
        self.max_entries = max_entries
        self.keep_trace = keep_trace
        self.skip = set(skip_actions or ())
        self.trace = []
        self.next = 0

    def frames(self):
        """The Python stack of the caller outside ember's own machinery, innermost first."""
        if self.context is None:
            return []
        frames = []
        f = sys._getframe(1)
        while f is not None and f.f_code.co_filename in _MACHINERY:
            f = f.f_back
        while f is not None:
            code = f.f_code
            frames.append({"filename": code.co_filename, "line": f.f_lineno,
                           "name": code.co_name})
            f = f.f_back
        return frames

    def record(self, action, address, size, frames, **extra):
        if not self.keep_trace or action in self.skip:
            return
        entry = {"action": action, "addr": address, "size": size, "stream": 0,
                 "time_us": time.time_ns() // 1000, "frames": frames, "device": 0,
                 "pool_id": (0, 0), "compile_context": "N/A", "user_metadata": ""}
        if action == "oom":
            del entry["addr"]
        entry.update(extra)
        if len(self.trace) < self.max_entries:
            self.trace.append(entry)
        else:
            self.trace[self.next] = entry
            self.next = (self.next + 1) % self.max_entries

    def entries(self):
        return self.trace[self.next:] + self.trace[:self.next]


# ---- the CPU device's allocator, and arrays in its blocks -----------------------------------
cpu_allocator = CachingAllocator()
# EMBER_CPU_ALLOCATOR=native gives every tensor a plain NumPy array instead (for comparison)
enabled = os.environ.get("EMBER_CPU_ALLOCATOR", "caching") != "native"


def _new_lock_in_child():
    # a forked child (a DataLoader worker) may inherit the lock held by a thread it does not have
    cpu_allocator.lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_in_child)


def empty(shape, dtype):
    """A C-contiguous uninitialized array in an allocator block (for kernels' `out=`)."""
    dtype = np.dtype(dtype)
    if type(shape) is not tuple:  # the held arrays are looked up by (shape, dtype, strides)
        shape = tuple(shape)
    # (a kernel's shape may hold NumPy ints: the statistics stay Python ints)
    nbytes = int(prod(shape)) * dtype.itemsize
    if not enabled or nbytes == 0:
        return np.empty(shape, dtype)
    return cpu_allocator.array(nbytes, dtype, shape)


def in_block(arr):
    """Whether `arr`'s memory is an allocator block (the array over it or a view of that)."""
    buffers = cpu_allocator.buffers
    base = arr.base
    while base is not None:  # through views, and as_strided's wrapper object
        if id(base) in buffers:
            return True
        base = getattr(base, "base", None)
    return False


def into_block(arr):
    """`arr`'s values in a new block, laid out in the same dimension order (a kernel result
    that NumPy allocated); an array already in a block is returned as it is."""
    if arr.base is not None and in_block(arr):
        return arr
    return copy(arr)


def copy(arr):
    """A copy of `arr` in a new block (plain NumPy memory when the allocator is off)."""
    nbytes = arr.nbytes
    if not enabled or nbytes == 0:
        return arr.copy(order="K")
    if arr.flags.c_contiguous:
        out = cpu_allocator.array(nbytes, arr.dtype, arr.shape)
    else:  # F-ordered, permuted or strided: keep its order of dimensions, drop any gaps
        shape = arr.shape
        strides = [0] * arr.ndim
        step = arr.itemsize
        for d in sorted(range(arr.ndim), key=lambda d: abs(arr.strides[d])):
            strides[d] = step
            step *= shape[d]
        out = cpu_allocator.array(nbytes, arr.dtype, shape, tuple(strides))
    out[...] = arr
    return out
