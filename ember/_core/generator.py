"""PyTorch's CPU random number generator engine, rebuilt on NumPy.

In PyTorch terms this module is ``at::CPUGeneratorImpl``: an mt19937 engine plus the cached
second Box-Muller samples, its seed and its state in PyTorch's byte layout, so that states move
between the two libraries.  The kernels that turn the engine's 32-bit words into uniform, normal,
integer, Bernoulli, exponential and multinomial samples are ``ember/_aten/distributions.py``.

The raw stream comes from ``numpy.random.MT19937``: PyTorch seeds mt19937 with the classic
``init_genrand`` and draws the same 32-bit outputs.  ``random64()`` is two consecutive outputs,
the first one being the high word.
"""

import os
import sys
import threading

import numpy as np

__all__ = [
    "Generator",
    "default_generator",
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
]

_MT_N = 624
_DEFAULT_SEED = 67280421310721
_UINT64_MASK = (1 << 64) - 1

# Byte layout of PyTorch's CPUGeneratorImplState (the legacy TH POD followed by
# the float normal cache), padding included, so states move between libraries.
_STATE_DTYPE = np.dtype(
    [
        ("the_initial_seed", "<u8"),
        ("left", "<i4"),
        ("seeded", "<i4"),
        ("next", "<u8"),
        ("state", "<u8", (_MT_N,)),
        ("normal_x", "<f8"),
        ("normal_y", "<f8"),
        ("normal_rho", "<f8"),
        ("normal_is_valid", "<i4"),
        ("_pad0", "V4"),
        ("next_float_normal_sample", "<f4"),
        ("is_next_float_normal_sample_valid", "u1"),
        ("_pad1", "V3"),
    ]
)
assert _STATE_DTYPE.itemsize == 5056


# ----------------------------------------------------------------------------
# The generator
# ----------------------------------------------------------------------------

def _seed_to_uint64(seed):
    if isinstance(seed, (bool, float)) or not hasattr(seed, "__index__"):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = seed.__index__()
    if not -(1 << 63) <= seed <= _UINT64_MASK:
        raise ValueError("Overflow when unpacking long long")
    return seed & _UINT64_MASK


def _init_genrand(seed32):
    key = [0] * _MT_N
    key[0] = seed32
    for i in range(1, _MT_N):
        prev = key[i - 1]
        key[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF
    return np.array(key, dtype=np.uint32)


def _locked(method):
    """Run `method(gen, ...)` holding gen's lock: the Generator's own methods and the
    distribution kernels of ember/_aten/distributions.py, which take the generator first."""
    def wrapper(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    wrapper.__name__ = method.__name__
    wrapper.__qualname__ = method.__qualname__
    wrapper.__doc__ = method.__doc__
    return wrapper


class Generator:
    """torch.Generator for the CPU: an mt19937 stream plus the normal caches.

    The engine hands out raw 32- and 64-bit words (``_random``, ``_random32``, ``_random64``);
    the distribution kernels in ``ember/_aten/distributions.py`` hold ``_lock`` while they draw.
    """

    def __init__(self, device="cpu"):
        kind = str(device).split(":")[0]
        if kind == "cuda":
            raise RuntimeError("Cannot get CUDA generator: ember has no CUDA backend")
        if kind != "cpu":
            raise RuntimeError(f"{kind.upper()} device type not an accelerator.")
        from .device import cpu
        self.device = cpu
        self._lock = threading.RLock()
        self._bitgen = np.random.MT19937()
        # integers() over the full uint32 range hands out the raw 32-bit
        # outputs straight into a uint32 array (no rejection, no buffering).
        self._draws = np.random.Generator(self._bitgen)
        self.manual_seed(_DEFAULT_SEED)

    # -- seeding and state ----------------------------------------------------

    @_locked
    def manual_seed(self, seed):
        """Seed like torch: 64-bit seed kept, its low 32 bits seed mt19937."""
        seed = _seed_to_uint64(seed)
        self._set_engine(_init_genrand(seed & 0xFFFFFFFF), _MT_N)
        self._initial_seed = seed
        # torch reports next_=0 until the first twist after seeding.
        self._next_at_twist = 0
        self._normal_cache = None
        self._float_normal_cache = None
        return self

    def seed(self):
        """Reseed from the OS entropy pool and return the new seed."""
        new_seed = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(new_seed)
        return new_seed

    def initial_seed(self):
        """The seed last given to manual_seed/seed (or carried by set_state)."""
        return self._initial_seed

    def _set_engine(self, key, pos):
        self._bitgen.state = {
            "bit_generator": "MT19937",
            "state": {"key": key, "pos": pos},
        }

    @_locked
    def get_state(self):
        """The state as torch.Generator.get_state() lays it out (5056 bytes)."""
        engine = self._bitgen.state["state"]
        pos = int(engine["pos"])
        record = np.zeros((), dtype=_STATE_DTYPE)
        record["the_initial_seed"] = self._initial_seed
        record["seeded"] = 1
        # torch counts down `left` and twists when it reaches zero.
        if pos >= _MT_N:
            record["left"] = 1
            record["next"] = self._next_at_twist
        else:
            record["left"] = _MT_N + 1 - pos
            record["next"] = pos
        record["state"] = engine["key"].astype(np.uint64)
        if self._normal_cache is not None:
            record["normal_is_valid"] = 1
            record["normal_y"] = self._normal_cache
        if self._float_normal_cache is not None:
            record["is_next_float_normal_sample_valid"] = 1
            record["next_float_normal_sample"] = self._float_normal_cache
        from .tensor import _wrap  # the state is a uint8 tensor, as in torch
        return _wrap(record.reshape(1).view(np.uint8).copy())

    @_locked
    def set_state(self, state):
        """Load a state produced by get_state() here or by torch."""
        from .tensor import Tensor
        if isinstance(state, Tensor) and state._np is not None:
            state = state._np   # not Tensor.numpy: a torch function mode must not see the call
        else:
            state = state.numpy(force=True) if hasattr(state, "numpy") else np.asarray(state)
        if state.dtype != np.uint8:
            raise RuntimeError(f"expected a torch.ByteTensor-like uint8 state, but got {state.dtype}")
        if state.size != _STATE_DTYPE.itemsize:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {_STATE_DTYPE.itemsize} "
                f"but found the input RNG state size to be {state.size}"
            )
        record = np.ascontiguousarray(state).reshape(-1).view(_STATE_DTYPE)[0]
        left, nxt = int(record["left"]), int(record["next"])
        if not (record["seeded"] != 0 and 0 < left <= _MT_N and nxt <= _MT_N):
            raise RuntimeError("Invalid mt19937 state")
        if left == 1:
            pos = _MT_N
        else:
            pos = _MT_N + 1 - left
            if nxt != pos:
                # torch would read state[next] onwards and twist after left-1
                # draws; numpy's MT19937 cannot separate the two positions, and
                # no state torch produces has them apart.
                raise ValueError(f"unsupported mt19937 state: next={nxt} does not follow left={left}")
        self._set_engine((record["state"] & 0xFFFFFFFF).astype(np.uint32), pos)
        self._initial_seed = int(record["the_initial_seed"])
        self._next_at_twist = nxt
        self._normal_cache = float(record["normal_y"]) if record["normal_is_valid"] else None
        self._float_normal_cache = (
            np.float32(record["next_float_normal_sample"])
            if record["is_next_float_normal_sample_valid"]
            else None
        )
        return self

    def clone_state(self):
        """A new generator in this one's state (the two then draw the same streams)."""
        return Generator(self.device).set_state(self.get_state())

    def graphsafe_get_state(self):
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state):
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    # -- raw streams ----------------------------------------------------------

    def _random(self, n):
        """n outputs of generator->random() (uint32 values in a uint64 array)."""
        if n > 0:
            self._next_at_twist = _MT_N
        return self._bitgen.random_raw(n)

    def _random32(self, n):
        """n outputs of generator->random() in a uint32 array."""
        if n > 0:
            self._next_at_twist = _MT_N
        return self._draws.integers(0, 1 << 32, size=n, dtype=np.uint32)

    def _random_pairs(self, n):
        """n pairs of draws as (high words, low words) of generator->random64()."""
        raw = self._random32(2 * n)
        return raw[0::2], raw[1::2]

    def _random64(self, n):
        """n outputs of generator->random64(): two draws, high word first."""
        high, low = self._random_pairs(n)
        # Interleave the two halves in the host's byte order and view the
        # pairs as uint64, instead of shifting and or-ing 64-bit arrays.
        words = np.empty((n, 2), dtype=np.uint32)
        high_col = 1 if sys.byteorder == "little" else 0
        words[:, high_col] = high
        words[:, 1 - high_col] = low
        return words.view(np.uint64).reshape(n)

# torch seeds its default CPU generator from the OS at start-up;
# torch.Generator() objects start from _DEFAULT_SEED.
default_generator = Generator()
default_generator.seed()


def manual_seed(seed):
    """torch.manual_seed: seed the default generator and return it."""
    return default_generator.manual_seed(int(seed))


def seed():
    """torch.seed: reseed the default generator nondeterministically."""
    return default_generator.seed()


def initial_seed():
    """torch.initial_seed: the default generator's seed."""
    return default_generator.initial_seed()


def get_rng_state():
    """torch.get_rng_state: the default generator's state, as uint8 bytes."""
    return default_generator.get_state()


def set_rng_state(state):
    """torch.set_rng_state: restore the default generator's state."""
    default_generator.set_state(state)
