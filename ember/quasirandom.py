"""torch.quasirandom: SobolEngine, the (optionally scrambled) Sobol low-discrepancy sequence.

The engine keeps, per dimension, 30 direction numbers (`sobolstate`, Joe & Kuo's
new-joe-kuo-6.21201 table, read from SciPy's copy of it) and a running 30-bit integer point
(`quasi`). Drawing the point after index i XORs in the direction number chosen by the position of
the rightmost zero bit of i (Antonov & Saleev's Gray-code order), then divides by 2**30.
Scrambling (Owen's linear matrix scramble plus a digital shift) draws its random bits with
`randint` from a Generator seeded with `seed`, as PyTorch does, so the scrambled points match.

Note: PyTorch computes this with the private ops `_sobol_engine_initialize_state_`,
`_sobol_engine_draw`, `_sobol_engine_ff_` and `_sobol_engine_scramble_` on int64 tensors; here the
integer bookkeeping is NumPy inside this module (it has no autograd and no other dtype), and only the
scramble's random bits and the returned points are ember tensors.
"""
import numpy as np

from ._core.generator import Generator

__all__ = ["SobolEngine"]

_direction_numbers = None  # (poly, vinit) from SciPy, loaded on first use


def _load_direction_numbers():
    """SciPy's Joe & Kuo table: primitive polynomials `poly` and initial numbers `vinit`."""
    global _direction_numbers
    if _direction_numbers is None:
        try:
            import scipy  # the table is a data file of scipy.stats; importing scipy.stats is slow
        except ImportError as e:
            raise ImportError(
                "ember.quasirandom.SobolEngine reads the Joe & Kuo direction numbers from SciPy, "
                "which is not installed: pip install 'ember[scipy]'") from e
        import os
        path = os.path.join(os.path.dirname(scipy.__file__), "stats", "_sobol_direction_numbers.npz")
        try:
            with np.load(path) as table:
                _direction_numbers = (table["poly"].astype(np.int64),
                                      table["vinit"].astype(np.int64))
        except (OSError, KeyError) as e:
            raise ImportError(f"SciPy's Sobol direction numbers were not found at {path} "
                              f"(SciPy {scipy.__version__}): {e}") from e
    return _direction_numbers


_state_cache = np.zeros((0, 30), dtype=np.int64)  # direction numbers of the widest engine so far


def _initial_state(dimension, maxbit):
    """The (dimension, maxbit) direction numbers (a fresh copy), rows shared with earlier engines."""
    global _state_cache
    if _state_cache.shape[0] < dimension or _state_cache.shape[1] != maxbit:
        _state_cache = _direction_numbers_for(dimension, maxbit)
    return _state_cache[:dimension].copy()


def _direction_numbers_for(dimension, maxbit):
    """The (dimension, maxbit) direction numbers, each already shifted to its bit position."""
    poly, vinit = _load_direction_numbers()
    v = np.zeros((dimension, maxbit), dtype=np.int64)
    v[0, :] = 1
    if dimension > 1:
        p = poly[1:dimension]
        degree = np.array([int(x).bit_length() - 1 for x in p], dtype=np.int64)
        # Dimensions sharing a degree m follow the same recurrence (Bratley & Fox, Algorithm 659):
        # v[j] = v[j-m] ^ XOR_k (bit k of the polynomial's inner coefficients) * 2**(k+1) * v[j-k-1].
        for m in np.unique(degree):
            rows = np.nonzero(degree == m)[0] + 1
            w = np.zeros((len(rows), maxbit), dtype=np.int64)
            w[:, :m] = vinit[rows, :m]
            pr = poly[rows]
            for j in range(m, maxbit):
                new = w[:, j - m].copy()
                for k in range(m):
                    coeff = (pr >> (m - 1 - k)) & 1
                    new ^= coeff * (w[:, j - k - 1] << (k + 1))
                w[:, j] = new
            v[rows] = w
    return v << np.arange(maxbit - 1, -1, -1, dtype=np.int64)


class SobolEngine:
    """Draws points of a (scrambled) Sobol sequence of `dimension` coordinates in [0, 1).

    dimension: 1 .. 21201. scramble: apply Owen's linear matrix scramble and a digital shift.
    seed: seed of the Generator the scramble draws from (the default generator when None).
    """

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality "
                             f"for SobolEngine is [1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self._state = _initial_state(dimension, self.MAXBIT)
        if not self.scramble:
            self._shift = np.zeros(dimension, dtype=np.int64)
        else:
            self._scramble()
        self._quasi = self._shift.copy()
        # PyTorch divides the integer point by 2**30 in the default dtype at construction time.
        from . import get_default_dtype, tensor
        default = get_default_dtype()
        self._first_point = (tensor(self._shift) / 2 ** self.MAXBIT).to(default).reshape(1, -1)
        self.num_generated = 0

    @property
    def sobolstate(self):
        from . import tensor
        return tensor(self._state)

    @property
    def shift(self):
        from . import tensor
        return tensor(self._shift)

    @property
    def quasi(self):
        from . import tensor
        return tensor(self._quasi)

    def _advance(self, n, start):
        """The integer points after indices start .. start+n-1, as an (n, dimension) array.

        Stepping past index i XORs in direction number rightmost_zero(i), which flips bit
        rightmost_zero(i) of the Gray code i ^ (i >> 1); so the point after index k is the start
        point XOR the direction numbers of the bits where gray(start) and gray(k + 1) differ.
        """
        if n <= 0:
            return np.zeros((0, self.dimension), dtype=np.int64)
        ends = np.arange(start + 1, start + n + 1, dtype=np.int64)
        flips = (ends ^ (ends >> 1)) ^ (start ^ (start >> 1))
        flips &= (1 << self.MAXBIT) - 1
        # Low k bits: a table of the XOR of every subset of the first k direction numbers, built by
        # doubling; the few distinct high parts are XORed in per value.
        k = min(int(n).bit_length(), self.MAXBIT)
        table = np.zeros((1 << k, self.dimension), dtype=np.int64)
        for bit in range(k):
            table[1 << bit:2 << bit] = table[:1 << bit] ^ self._state[:, bit]
        # n < 2**k consecutive indices span at most two blocks of 2**k: two high parts at most.
        high = flips >> k
        highs, which = high[[0, -1]], (high != high[0]).astype(np.intp)
        high_xor = np.zeros((len(highs), self.dimension), dtype=np.int64)
        for bit in range(k, self.MAXBIT):
            take = -((highs >> (bit - k)) & 1)
            high_xor ^= take[:, None] & self._state[:, bit]
        high_xor ^= self._quasi
        points = table[flips & ((1 << k) - 1)]
        points ^= high_xor[which]
        self._quasi = points[-1].copy()
        return points

    def _draw_kernel(self, n, start, dtype):
        """Points start+1 .. start+n as floats; bad counts and dtypes raise before the state moves."""
        from . import from_numpy, float32, float64
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}, {self.dimension}]")
        if dtype not in (float32, float64):
            raise NotImplementedError(f'"_sobol_engine_draw" not implemented for \'{_scalar_name(dtype)}\'')
        ints = self._advance(n, start)
        # Each 30-bit integer times 2**-30 is exact in float64; the cast rounds once, as PyTorch does.
        values = ints.astype(np.float64) * (1.0 / (1 << self.MAXBIT))
        return from_numpy(values).to(dtype)

    def draw(self, n=1, out=None, dtype=None):
        """The next `n` points, an (n, dimension) tensor of `dtype` (default: the default dtype)."""
        from . import get_default_dtype, cat
        if dtype is None:
            dtype = get_default_dtype()
        if self.num_generated == 0:
            if n == 1:
                result = self._first_point.to(dtype)
            else:
                rest = self._draw_kernel(n - 1, 0, dtype)
                result = cat((self._first_point.to(dtype), rest), dim=-2)
        else:
            result = self._draw_kernel(n, self.num_generated - 1, dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        """The next 2**m points; the total drawn must stay a power of two (Sobol's balance)."""
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError(
                "The balance properties of Sobol' points require "
                f"n to be a power of 2. {self.num_generated} points have been "
                f"previously generated, then: n={self.num_generated}+2**{m}={total_n}. "
                "If you still want to do this, please use 'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Back to the first point (the scramble is kept)."""
        self._quasi = self._shift.copy()
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skip `n` points, as if they had been drawn."""
        if self.num_generated == 0:
            self._advance(n - 1, 0)
        else:
            self._advance(n, self.num_generated - 1)
        self.num_generated += n
        return self

    def _scramble(self):
        from . import randint
        g = None
        if self.seed is not None:
            g = Generator()
            g.manual_seed(self.seed)
        bits = self.MAXBIT
        shift_bits = randint(2, (self.dimension, bits), generator=g).numpy().astype(np.int64)
        self._shift = shift_bits @ (np.int64(1) << np.arange(bits, dtype=np.int64))
        ltm = np.tril(randint(2, (self.dimension, bits, bits), generator=g).numpy().astype(np.int64))
        idx = np.arange(bits)
        ltm[:, idx, idx] = 1
        # Row p of each lower-triangular matrix as an integer, column k at bit (bits-1-k).
        rows = ltm @ (np.int64(1) << np.arange(bits - 1, -1, -1, dtype=np.int64))
        # New direction number j: bit (bits-1-p) is the parity of (row p) AND (old number j).
        weights = np.int64(1) << np.arange(bits - 1, -1, -1, dtype=np.int64)
        state = self._state
        for lo in range(0, self.dimension, 1024):  # blocks keep the (d, j, p) array small
            hi = lo + 1024
            parity = np.bitwise_count(rows[lo:hi, None, :] & state[lo:hi, :, None]) & 1
            state[lo:hi] = (parity.astype(np.int64) * weights).sum(-1)

    def __repr__(self):
        fmt = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt.append("scramble=True")
        if self.seed is not None:
            fmt.append(f"seed={self.seed}")
        return self.__class__.__name__ + "(" + ", ".join(fmt) + ")"


def _scalar_name(dtype):
    names = {"torch.int64": "Long", "torch.int32": "Int", "torch.int16": "Short", "torch.int8": "Char",
             "torch.uint8": "Byte", "torch.bool": "Bool", "torch.float16": "Half", "torch.bfloat16": "BFloat16", "torch.complex64": "ComplexFloat",
             "torch.complex128": "ComplexDouble"}
    return names.get(str(dtype), str(dtype))
