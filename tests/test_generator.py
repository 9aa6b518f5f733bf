"""ember._core.generator (the engine) and ember._aten.distributions (its kernels) against torch's CPU generator, bit for bit.

Every comparison is exact (same dtype, shape and bytes), and most tests also
compare the full generator state afterwards, which pins the stream position
and the cached Box-Muller sample.
"""

import math
import pathlib
import struct
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ml_dtypes = pytest.importorskip("ml_dtypes")


import ember._aten.distributions as ed  # noqa: E402
import ember._core.generator as eg  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)

FLOAT_DTYPES = [
    (torch.float32, np.dtype(np.float32)),
    (torch.float64, np.dtype(np.float64)),
    (torch.float16, np.dtype(np.float16)),
    (torch.bfloat16, BF16),
]
FLOAT_IDS = ["float32", "float64", "float16", "bfloat16"]

INT_DTYPES = [
    (torch.int64, np.dtype(np.int64)),
    (torch.int32, np.dtype(np.int32)),
    (torch.int16, np.dtype(np.int16)),
    (torch.int8, np.dtype(np.int8)),
    (torch.uint8, np.dtype(np.uint8)),
]
INT_IDS = ["int64", "int32", "int16", "int8", "uint8"]

# Sizes around the 16-element Box-Muller block, odd sizes, empty and 0-d.
SHAPES = [(), (0,), (1,), (2,), (5,), (15,), (16,), (17,), (31,), (32,), (33,),
          (3, 4), (4, 4), (2, 3, 5), (7, 0, 3), (1000,), (4097,)]
SHAPE_IDS = ["x".join(map(str, s)) or "scalar" for s in SHAPES]


def to_numpy(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(BF16)
    return t.numpy()


def assert_same(ours, theirs, what=""):
    theirs = to_numpy(theirs) if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    ours = np.asarray(ours)
    assert ours.dtype == theirs.dtype, f"{what}: dtype {ours.dtype} != {theirs.dtype}"
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} != {theirs.shape}"
    if ours.tobytes() != theirs.tobytes():
        differ = np.flatnonzero(ours.reshape(-1).view(np.uint8) != theirs.reshape(-1).view(np.uint8))
        first = differ[0] // ours.itemsize
        raise AssertionError(
            f"{what}: {differ.size} differing bytes; first at element {first}: "
            f"{ours.reshape(-1)[first]!r} vs {theirs.reshape(-1)[first]!r}"
        )


def assert_same_state(gen, tgen):
    assert_same(gen.get_state().numpy(), tgen.get_state(), "generator state")


def pair(seed):
    gen = eg.Generator().manual_seed(seed)
    tgen = torch.Generator().manual_seed(seed)
    return gen, tgen


def header(state):
    """(the_initial_seed, left, seeded, next) of a state byte array."""
    return struct.unpack("<QiiQ", bytes(np.asarray(state)[:24]))


# ---------------------------------------------------------------------------
# seeding and raw stream
# ---------------------------------------------------------------------------

def test_default_seed_matches_torch_generator():
    gen, tgen = eg.Generator(), torch.Generator()
    assert gen.initial_seed() == tgen.initial_seed() == 67280421310721
    assert_same_state(gen, tgen)
    assert_same(ed.uniform(gen, (10,), np.float32), torch.rand(10, generator=tgen))


@pytest.mark.parametrize("seed", [0, 1, 42, 2**31 - 1, 2**32, 2**32 + 5, 2**63, 2**64 - 1,
                                  -1, -(2**63), 67280421310721])
def test_manual_seed_values(seed):
    gen = eg.Generator()
    assert gen.manual_seed(seed) is gen
    tgen = torch.Generator().manual_seed(seed)
    assert gen.initial_seed() == tgen.initial_seed()
    assert_same_state(gen, tgen)
    assert_same(ed.uniform(gen, (700,), np.float32), torch.rand(700, generator=tgen))
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("seed", [2**64, -(2**63) - 1])
def test_manual_seed_out_of_range(seed):
    with pytest.raises(ValueError):
        eg.Generator().manual_seed(seed)
    with pytest.raises(ValueError):
        torch.Generator().manual_seed(seed)


def test_manual_seed_rejects_float():
    with pytest.raises(RuntimeError):
        eg.Generator().manual_seed(1.5)
    with pytest.raises(RuntimeError):
        torch.Generator().manual_seed(1.5)


def test_seed_is_nondeterministic_and_recorded():
    gen = eg.Generator()
    s1, s2 = gen.seed(), eg.Generator().seed()
    assert s1 != s2
    assert 0 <= s1 < 2**64
    gen.manual_seed(5)
    s3 = gen.seed()
    assert gen.initial_seed() == s3
    tgen = torch.Generator().manual_seed(s3)
    assert_same(ed.normal(gen, (20,), np.float32), torch.randn(20, generator=tgen))


def test_device_attribute():
    assert str(eg.Generator().device) == "cpu"
    assert str(eg.Generator("cpu").device) == "cpu"
    assert eg.Generator().device != "cpu"   # as torch's: a device never equals a string
    with pytest.raises(RuntimeError):   # as torch's, built without CUDA
        eg.Generator("cuda")


def test_random64_is_high_word_first():
    words = eg.Generator().manual_seed(123)._random(6)
    # The raw words are torch's: float32 rand keeps their low 24 bits.
    assert_same((words & np.uint64(0xFFFFFF)).astype(np.float32) * np.float32(2.0**-24),
                torch.rand(6, generator=torch.Generator().manual_seed(123)))
    high_first = ((words[0::2] << np.uint64(32)) | words[1::2]) & np.uint64(2**53 - 1)
    assert_same(high_first.astype(np.float64) * 2.0**-53,
                torch.rand(3, dtype=torch.float64, generator=torch.Generator().manual_seed(123)))


# ---------------------------------------------------------------------------
# uniform
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("tdt,dt", FLOAT_DTYPES, ids=FLOAT_IDS)
def test_rand(shape, tdt, dt):
    gen, tgen = pair(0)
    assert_same(ed.uniform(gen, shape, dt), torch.rand(shape, dtype=tdt, generator=tgen))
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("bounds", [(-2.5, 3.7), (-1.0, 1.0), (1e-3, 1e-3 + 1e-5), (5.0, 5.0),
                                    (-100.0, 1e4), (0.25, 0.5)])
@pytest.mark.parametrize("tdt,dt", FLOAT_DTYPES, ids=FLOAT_IDS)
@pytest.mark.parametrize("seed", [3, 2024])
def test_uniform_bounds(bounds, tdt, dt, seed):
    gen, tgen = pair(seed)
    low, high = bounds
    ours = ed.uniform(gen, (3001,), dt, low, high)
    assert_same(ours, torch.empty(3001, dtype=tdt).uniform_(low, high, generator=tgen))
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("tdt,dt", [(torch.complex64, np.complex64), (torch.complex128, np.complex128)])
@pytest.mark.parametrize("n", [1, 7, 8, 9, 20])
def test_rand_complex(tdt, dt, n):
    gen, tgen = pair(9)
    assert_same(ed.uniform(gen, (n,), dt), torch.rand(n, dtype=tdt, generator=tgen))
    assert_same_state(gen, tgen)


def test_uniform_errors():
    gen = eg.Generator()
    with pytest.raises(RuntimeError):
        ed.uniform(gen, (3,), np.float32, 2.0, 1.0)
    with pytest.raises(RuntimeError):
        ed.uniform(gen, (3,), np.float16, 0.0, 1e6)
    with pytest.raises(TypeError):
        ed.uniform(gen, (3,), np.int32)


# ---------------------------------------------------------------------------
# normal
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("tdt,dt", FLOAT_DTYPES, ids=FLOAT_IDS)
def test_randn(shape, tdt, dt):
    gen, tgen = pair(1)
    assert_same(ed.normal(gen, shape, dt), torch.randn(shape, dtype=tdt, generator=tgen))
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("n", [3, 15, 16, 17, 100, 2001])
@pytest.mark.parametrize("mean,std", [(0.3, 1.7), (-2.0, 0.01), (5.0, 0.0), (1e3, 3e2)])
@pytest.mark.parametrize("tdt,dt", FLOAT_DTYPES, ids=FLOAT_IDS)
def test_normal_mean_std(n, mean, std, tdt, dt):
    gen, tgen = pair(11)
    ours = ed.normal(gen, (n,), dt, mean, std)
    assert_same(ours, torch.empty(n, dtype=tdt).normal_(mean, std, generator=tgen))
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("seed", range(8))
def test_randn_float32_many_seeds(seed):
    # The vectorised float32 Box-Muller (avx_mathfun log/sincos with fused
    # multiply-adds) is where a last-bit difference would show up.
    gen, tgen = pair(seed)
    assert_same(ed.normal(gen, (50_000,), np.float32), torch.randn(50_000, generator=tgen))
    assert_same(ed.normal(gen, (20_011,), np.float64), torch.randn(20_011, dtype=torch.float64, generator=tgen))
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("tdt,dt", FLOAT_DTYPES[:1] + FLOAT_DTYPES[2:], ids=["float32", "float16", "bfloat16"])
def test_randn_uniform_of_zero(tdt, dt):
    # With seed 52372 word 656 has zero low bits and feeds u1 = 1 - 0: log
    # gives +0, the radius -0.0, and the fused multiply-add with mean 0 must
    # still return +0.0 (theta is in the fourth quadrant, so cos > 0 and the
    # plain product would be -0.0).
    gen, tgen = pair(52372)
    ours = ed.normal(gen, (2048,), dt)
    assert_same(ours, torch.randn(2048, dtype=tdt, generator=tgen))
    assert ours[656] == 0 and not np.signbit(ours[656])


@pytest.mark.parametrize("tdt,dt", [(torch.complex64, np.complex64), (torch.complex128, np.complex128)])
@pytest.mark.parametrize("n", [1, 3, 7, 8, 9, 20])
def test_randn_complex(tdt, dt, n):
    gen, tgen = pair(4)
    assert_same(ed.normal(gen, (n,), dt), torch.randn(n, dtype=tdt, generator=tgen))
    assert_same_state(gen, tgen)


def test_normal_cache_carries_between_calls():
    gen, tgen = pair(5)
    # Odd-sized small draws leave a cached sample; the vectorised path of
    # large tensors neither uses nor clears it; any dtype may consume it.
    steps = [
        ((3,), np.float64, torch.float64, 0.0, 1.0),
        ((40,), np.float32, torch.float32, 0.0, 1.0),
        ((2,), np.float16, torch.float16, 1.0, 3.0),
        ((1,), BF16, torch.bfloat16, 0.0, 1.0),
        ((17,), np.float64, torch.float64, 0.0, 1.0),
        ((5,), np.float32, torch.float32, -1.0, 0.5),
        ((1,), np.float64, torch.float64, 0.0, 1.0),
    ]
    for shape, dt, tdt, mean, std in steps:
        ours = ed.normal(gen, shape, dt, mean, std)
        assert_same(ours, torch.empty(shape, dtype=tdt).normal_(mean, std, generator=tgen))
        assert_same_state(gen, tgen)
    # manual_seed drops the cache.
    gen.manual_seed(5)
    tgen.manual_seed(5)
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("rows,cols", [(8, 6), (3, 4), (20, 10)])
@pytest.mark.parametrize("tdt,dt", FLOAT_DTYPES, ids=FLOAT_IDS)
def test_normal_non_contiguous(rows, cols, tdt, dt):
    gen, tgen = pair(8)
    target = torch.empty(rows, cols, dtype=tdt).t()  # filled in memory order
    target.normal_(0.5, 2.0, generator=tgen)
    ours = ed.normal(gen, (rows * cols,), dt, 0.5, 2.0, contiguous=False).reshape(rows, cols)
    assert_same(ours, target.t())
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("tdt,dt", FLOAT_DTYPES, ids=FLOAT_IDS)
@pytest.mark.parametrize("n", [5, 20])
def test_normal_tensor_arguments(tdt, dt, n):
    mean32 = np.linspace(-1, 1, n)
    std32 = np.linspace(0.1, 2, n)
    mean, std = mean32.astype(dt), std32.astype(dt)
    tmean = torch.from_numpy(mean32).to(tdt)
    tstd = torch.from_numpy(std32).to(tdt)
    gen, tgen = pair(21)
    assert_same(ed.normal(gen, (n,), dt, mean, std), torch.normal(tmean, tstd, generator=tgen))
    assert_same(ed.normal(gen, (n,), dt, mean, 0.7), torch.normal(tmean, 0.7, generator=tgen))
    assert_same(ed.normal(gen, (n,), dt, 0.3, std), torch.normal(0.3, tstd, generator=tgen))
    assert_same_state(gen, tgen)


def test_normal_tensor_arguments_broadcast():
    mean = np.linspace(-1, 1, 20).astype(np.float32)
    std = np.full((4, 1), 0.5, dtype=np.float32)
    gen, tgen = pair(2)
    ours = ed.normal(gen, (4, 20), np.float32, mean, std)
    theirs = torch.normal(torch.from_numpy(mean), torch.from_numpy(std), generator=tgen)
    assert_same(ours, theirs)
    assert_same_state(gen, tgen)


def test_normal_errors():
    gen = eg.Generator()
    with pytest.raises(RuntimeError):
        ed.normal(gen, (3,), np.float32, 0.0, -1.0)
    with pytest.raises(RuntimeError):
        ed.normal(gen, (3,), np.float32, 0.0, np.array([1.0, -1.0, 1.0], np.float32))
    with pytest.raises(TypeError):
        ed.normal(gen, (3,), np.int64)


# ---------------------------------------------------------------------------
# integers
# ---------------------------------------------------------------------------

RANDINT_RANGES = [(0, 2), (0, 10), (-5, 100), (3, 200), (-128, 128), (0, 2**15),
                  (-(2**31), 2**31), (0, 2**28 - 1), (0, 2**28), (5, 5 + 2**28),
                  (0, 2**32 - 1), (0, 2**32), (-(2**40), 2**40), (-(2**62), 2**62),
                  (-(2**63), 2**63 - 1)]

RANDINT_DTYPES = INT_DTYPES + FLOAT_DTYPES + [(torch.bool, np.dtype(np.bool_))]
RANDINT_IDS = INT_IDS + FLOAT_IDS + ["bool"]


def _torch_random_(tdt, n, low, high, tgen):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.empty(n, dtype=tdt).random_(low, high, generator=tgen)


def _ours_random_int(gen, dt, n, low, high):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ed.random_int(gen, (n,), dt, low, high)


@pytest.mark.parametrize("bounds", RANDINT_RANGES, ids=str)
@pytest.mark.parametrize("tdt,dt", RANDINT_DTYPES, ids=RANDINT_IDS)
def test_random_from_to(bounds, tdt, dt):
    low, high = bounds
    gen, tgen = pair(17)
    try:
        theirs = _torch_random_(tdt, 257, low, high, tgen)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            _ours_random_int(gen, dt, 257, low, high)
        return
    assert_same(_ours_random_int(gen, dt, 257, low, high), theirs)
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("low", [0, 3, -7, 200, -(2**40), -(2**63)])
@pytest.mark.parametrize("tdt,dt", RANDINT_DTYPES, ids=RANDINT_IDS)
def test_random_from_only(low, tdt, dt):
    gen, tgen = pair(23)
    try:
        theirs = _torch_random_(tdt, 300, low, None, tgen)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            _ours_random_int(gen, dt, 300, low, None)
        return
    assert_same(_ours_random_int(gen, dt, 300, low, None), theirs)
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("tdt,dt", RANDINT_DTYPES, ids=RANDINT_IDS)
def test_random_no_bounds(tdt, dt):
    gen, tgen = pair(29)
    assert_same(ed.random(gen, (500,), dt), torch.empty(500, dtype=tdt).random_(generator=tgen))
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("tdt,dt", [(torch.int64, np.dtype(np.int64)), (torch.uint8, np.dtype(np.uint8)),
                                    (torch.bool, np.dtype(np.bool_))], ids=["int64", "uint8", "bool"])
def test_randint_shapes(shape, tdt, dt):
    gen, tgen = pair(31)
    assert_same(ed.random_int(gen, shape, dt, 0, 2), torch.randint(0, 2, shape, dtype=tdt, generator=tgen))
    assert_same(ed.random_int(gen, shape, dt, 0, 1), torch.randint(0, 1, shape, dtype=tdt, generator=tgen))
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("tdt,dt", [(torch.uint16, np.dtype(np.uint16)), (torch.uint32, np.dtype(np.uint32)),
                                    (torch.uint64, np.dtype(np.uint64))], ids=["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("bounds", [(0, 7), (0, 2**16), (0, 2**28), (0, 2**32), (5, 2**40)], ids=str)
def test_random_unsigned(tdt, dt, bounds):
    gen, tgen = pair(37)
    try:
        theirs = _torch_random_(tdt, 99, *bounds, tgen)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            _ours_random_int(gen, dt, 99, *bounds)
        return
    assert_same(_ours_random_int(gen, dt, 99, *bounds), theirs)
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("tdt,dt", [(torch.int64, np.dtype(np.int64)), (torch.float32, np.dtype(np.float32))],
                         ids=["int64", "float32"])
def test_random_int_full_int64_range_given_as_bounds(tdt, dt):
    # high = 2**63 is not expressible in torch; it means random_(-2**63, None).
    gen, tgen = pair(39)
    ours = ed.random_int(gen, (50,), dt, -(2**63), 2**63)
    assert_same(ours, torch.empty(50, dtype=tdt).random_(-(2**63), None, generator=tgen))
    assert_same_state(gen, tgen)


def test_random_from_to_errors():
    gen = eg.Generator()
    with pytest.raises(RuntimeError):
        ed.random_int(gen, (3,), np.int64, 5, 5)
    with pytest.raises(RuntimeError):
        ed.random_int(gen, (3,), np.int8, 0, 1000)
    with pytest.raises(RuntimeError):
        ed.random_int(gen, (3,), np.int32, -(2**63))


# ---------------------------------------------------------------------------
# randperm
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 17, 100, 1000, 5000, 65_537])
@pytest.mark.parametrize("seed", [0, 99])
def test_randperm(n, seed):
    gen, tgen = pair(seed)
    assert_same(ed.randperm(gen, n), torch.randperm(n, generator=tgen))
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("tdt,dt", [(torch.int32, np.int32), (torch.int16, np.int16), (torch.uint8, np.uint8),
                                    (torch.float32, np.float32), (torch.float64, np.float64),
                                    (torch.float16, np.float16), (torch.bfloat16, BF16)],
                         ids=["int32", "int16", "uint8", "float32", "float64", "float16", "bfloat16"])
def test_randperm_dtypes(tdt, dt):
    gen, tgen = pair(3)
    assert_same(ed.randperm(gen, 200, dt), torch.randperm(200, dtype=tdt, generator=tgen))
    assert_same_state(gen, tgen)


def test_randperm_swap_replay_matches_loop():
    # _apply_swaps resolves the Fisher-Yates swaps without a loop; check it
    # against the literal loop on many small random swap sequences.
    rng = np.random.default_rng(0)
    for _ in range(500):
        n = int(rng.integers(2, 80))
        targets = np.array([int(rng.integers(i, n)) for i in range(n - 1)], dtype=np.int64)
        perm = list(range(n))
        for i, j in enumerate(targets.tolist()):
            perm[i], perm[j] = perm[j], perm[i]
        np.testing.assert_array_equal(ed._apply_swaps(targets), perm)


def test_randperm_large_n_path_replays_inside_out_shuffle():
    # torch only takes this path for n >= 2**32 // 20 (too big to compare
    # here), so check the replay against the kernel's loop written out.
    gen = eg.Generator().manual_seed(5)
    ours = ed._inside_out_shuffle(gen, 3000, chunk=1000)
    words = eg.Generator().manual_seed(5)._random64(3000).tolist()
    expected = [0] * 3000
    for i in range(3000):
        z = words[i] % (i + 1)
        expected[i] = expected[z]
        expected[z] = i
    np.testing.assert_array_equal(ours, expected)


# ---------------------------------------------------------------------------
# bernoulli, exponential, multinomial
# ---------------------------------------------------------------------------

BERNOULLI_OUT = [(torch.float32, np.float32), (torch.float64, np.float64), (torch.float16, np.float16),
                 (torch.bfloat16, BF16), (torch.int64, np.int64), (torch.uint8, np.uint8),
                 (torch.bool, np.bool_)]
BERNOULLI_IDS = ["float32", "float64", "float16", "bfloat16", "int64", "uint8", "bool"]


@pytest.mark.parametrize("p", [0.0, 0.3, 0.5, 1.0])
@pytest.mark.parametrize("tdt,dt", BERNOULLI_OUT, ids=BERNOULLI_IDS)
@pytest.mark.parametrize("shape", [(0,), (1,), (17,), (10, 33)], ids=str)
def test_bernoulli_scalar_p(p, tdt, dt, shape):
    gen, tgen = pair(41)
    ours = ed.bernoulli(gen, p, shape, dt)
    assert_same(ours, torch.empty(shape, dtype=tdt).bernoulli_(p, generator=tgen))
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("ptdt,pdt", FLOAT_DTYPES, ids=FLOAT_IDS)
@pytest.mark.parametrize("tdt,dt", BERNOULLI_OUT, ids=BERNOULLI_IDS)
def test_bernoulli_tensor_p(ptdt, pdt, tdt, dt):
    probs = np.random.default_rng(7).random((6, 35))
    probs[0, :5] = [0.0, 1.0, 0.5, 0.25, 0.75]
    tp = torch.from_numpy(probs).to(ptdt)
    p = to_numpy(tp)
    gen, tgen = pair(43)
    assert_same(ed.bernoulli(gen, p, p.shape, dt), torch.empty(6, 35, dtype=tdt).bernoulli_(tp, generator=tgen))
    # torch.bernoulli(p): the output takes p's dtype.
    assert_same(ed.bernoulli(gen, p, p.shape, p.dtype), torch.bernoulli(tp, generator=tgen))
    assert_same_state(gen, tgen)


def test_bernoulli_tensor_p_broadcast():
    p = np.linspace(0, 1, 7).astype(np.float32)
    gen, tgen = pair(47)
    ours = ed.bernoulli(gen, p, (5, 7), np.float32)
    assert_same(ours, torch.empty(5, 7).bernoulli_(torch.from_numpy(p), generator=tgen))
    assert_same_state(gen, tgen)


def test_bernoulli_errors():
    gen = eg.Generator()
    with pytest.raises(RuntimeError):
        ed.bernoulli(gen, 1.5, (3,), np.float32)
    with pytest.raises(RuntimeError):
        ed.bernoulli(gen, np.array([0.5, 2.0], np.float32), (2,), np.float32)


@pytest.mark.parametrize("lambd", [1.0, 0.5, 2.5, 1e-3])
@pytest.mark.parametrize("tdt,dt", FLOAT_DTYPES, ids=FLOAT_IDS)
@pytest.mark.parametrize("shape", [(0,), (1,), (16,), (3, 41)], ids=str)
def test_exponential(lambd, tdt, dt, shape):
    gen, tgen = pair(53)
    ours = ed.exponential(gen, shape, dt, lambd)
    assert_same(ours, torch.empty(shape, dtype=tdt).exponential_(lambd, generator=tgen))
    assert_same_state(gen, tgen)


def test_exponential_errors():
    gen = eg.Generator()
    with pytest.raises(RuntimeError):
        ed.exponential(gen, (3,), np.float32, 0.0)
    with pytest.raises(TypeError):
        ed.exponential(gen, (3,), np.int64)


def _probabilities(rows, cols, seed, zeros=0):
    probs = np.random.default_rng(seed).random((rows, cols))
    probs[:, :zeros] = 0
    return probs


@pytest.mark.parametrize("tdt,dt", FLOAT_DTYPES, ids=FLOAT_IDS)
@pytest.mark.parametrize("num_samples", [1, 2, 7, 100])
def test_multinomial_with_replacement(tdt, dt, num_samples):
    tp = torch.from_numpy(_probabilities(5, 30, 1, zeros=4)).to(tdt)
    gen, tgen = pair(59)
    ours = ed.multinomial(gen, to_numpy(tp), num_samples, True)
    assert_same(ours, torch.multinomial(tp, num_samples, True, generator=tgen))
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("tdt,dt", [(torch.float32, np.float32), (torch.float64, np.float64)],
                         ids=["float32", "float64"])
@pytest.mark.parametrize("num_samples", [1, 3, 26])
def test_multinomial_without_replacement(tdt, dt, num_samples):
    # 26 samples out of 30 categories with 4 zero probabilities: never more
    # samples than positive probabilities, so there are no exact ties in topk.
    tp = torch.from_numpy(_probabilities(5, 30, 2, zeros=4)).to(tdt)
    gen, tgen = pair(61)
    ours = ed.multinomial(gen, to_numpy(tp), num_samples, False)
    assert_same(ours, torch.multinomial(tp, num_samples, False, generator=tgen))
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("tdt,dt", [(torch.float16, np.float16), (torch.bfloat16, BF16)], ids=["float16", "bfloat16"])
def test_multinomial_without_replacement_reduced_precision(tdt, dt):
    # Few categories with well separated probabilities keep probs / q free of
    # exact ties at this precision.
    tp = torch.tensor([[0.05, 0.1, 0.15, 0.3, 0.4], [0.5, 0.2, 0.1, 0.1, 0.1]], dtype=tdt)
    gen, tgen = pair(67)
    for _ in range(5):
        assert_same(ed.multinomial(gen, to_numpy(tp), 1, False), torch.multinomial(tp, 1, False, generator=tgen))
    assert_same_state(gen, tgen)


# ---------------------------------------------------------------------------
# mixed sequences and state
# ---------------------------------------------------------------------------

def _program(gen, tgen, rng, steps):
    """Random mix of calls, each compared, with the state checked throughout."""
    for _ in range(steps):
        kind = rng.integers(0, 8)
        n = int(rng.choice([0, 1, 3, 15, 16, 17, 40, 333]))
        tdt, dt = FLOAT_DTYPES[int(rng.integers(0, 4))]
        if kind == 0:
            assert_same(ed.uniform(gen, (n,), dt), torch.rand(n, dtype=tdt, generator=tgen))
        elif kind == 1:
            assert_same(ed.normal(gen, (n,), dt), torch.randn(n, dtype=tdt, generator=tgen))
        elif kind == 2:
            assert_same(ed.normal(gen, (n,), dt, -1.5, 0.25),
                        torch.empty(n, dtype=tdt).normal_(-1.5, 0.25, generator=tgen))
        elif kind == 3:
            high = int(rng.choice([2, 1000, 2**30, 2**40]))
            assert_same(ed.random_int(gen, (n,), np.int64, 0, high), torch.randint(0, high, (n,), generator=tgen))
        elif kind == 4:
            assert_same(ed.randperm(gen, n), torch.randperm(n, generator=tgen))
        elif kind == 5:
            assert_same(ed.bernoulli(gen, 0.4, (n,), dt), torch.empty(n, dtype=tdt).bernoulli_(0.4, generator=tgen))
        elif kind == 6:
            assert_same(ed.exponential(gen, (n,), dt), torch.empty(n, dtype=tdt).exponential_(generator=tgen))
        else:
            low, high = -2.0, float(rng.integers(1, 9))
            assert_same(ed.uniform(gen, (n,), dt, low, high),
                        torch.empty(n, dtype=tdt).uniform_(low, high, generator=tgen))
        assert_same_state(gen, tgen)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_mixed_sequence(seed):
    gen, tgen = pair(seed)
    _program(gen, tgen, np.random.default_rng(seed), steps=60)


def test_state_layout_after_seed_and_draws():
    gen, tgen = pair(5)
    state = gen.get_state().numpy()
    assert state.dtype == np.uint8 and state.shape == (5056,)
    assert header(state) == (5, 1, 1, 0)
    ed.uniform(gen, (3,), np.float32)
    torch.rand(3, generator=tgen)
    assert header(gen.get_state().numpy()) == (5, 622, 1, 3)
    assert_same_state(gen, tgen)
    # Exactly exhaust the block: torch reports left=1, next=624 until the next twist.
    ed.uniform(gen, (621,), np.float32)
    torch.rand(621, generator=tgen)
    assert header(gen.get_state().numpy()) == (5, 1, 1, 624)
    assert_same_state(gen, tgen)
    ed.uniform(gen, (1,), np.float32)
    torch.rand(1, generator=tgen)
    assert header(gen.get_state().numpy()) == (5, 624, 1, 1)
    assert_same_state(gen, tgen)


@pytest.mark.parametrize("warmup", [0, 1, 3, 623, 624, 625, 2000])
def test_state_from_torch_continues_identically(warmup):
    tgen = torch.Generator().manual_seed(77)
    torch.rand(warmup, generator=tgen)
    torch.randn(3, dtype=torch.float64, generator=tgen)  # leaves a cached normal
    gen = eg.Generator()
    assert gen.set_state(tgen.get_state().numpy()) is gen
    assert gen.initial_seed() == 77
    assert_same_state(gen, tgen)
    assert_same(ed.normal(gen, (5,), np.float64), torch.randn(5, dtype=torch.float64, generator=tgen))
    _program(gen, tgen, np.random.default_rng(warmup), steps=10)


@pytest.mark.parametrize("warmup", [0, 5, 624])
def test_state_to_torch_continues_identically(warmup):
    gen = eg.Generator().manual_seed(78)
    ed.uniform(gen, (warmup,), np.float32)
    ed.normal(gen, (1,), np.float32)
    tgen = torch.Generator()
    tgen.set_state(torch.from_numpy(gen.get_state().numpy()))
    assert tgen.initial_seed() == 78
    assert_same_state(gen, tgen)
    _program(gen, tgen, np.random.default_rng(warmup + 1), steps=10)


def test_state_round_trip_on_one_generator():
    gen = eg.Generator().manual_seed(3)
    ed.normal(gen, (3,), np.float32)
    saved = gen.get_state().numpy()
    first = [ed.normal(gen, (7,), np.float64), ed.uniform(gen, (100,), np.float32), ed.randperm(gen, 50)]
    gen.manual_seed(1234)
    gen.set_state(saved)
    again = [ed.normal(gen, (7,), np.float64), ed.uniform(gen, (100,), np.float32), ed.randperm(gen, 50)]
    for a, b in zip(first, again):
        assert_same(a, b)


def test_float_normal_cache_survives_state_round_trip():
    # torch's kernels do not fill the float cache today, but its slot is part
    # of the state and must round-trip.
    state = torch.Generator().manual_seed(9).get_state().numpy().copy()
    state[5048:5052] = np.frombuffer(np.float32(1.25).tobytes(), np.uint8)
    state[5052] = 1
    gen = eg.Generator().set_state(state)
    np.testing.assert_array_equal(gen.get_state().numpy(), state)
    tgen = torch.Generator()
    tgen.set_state(torch.from_numpy(state))
    assert_same_state(gen, tgen)


def test_set_state_errors_match_torch():
    gen = eg.Generator()
    with pytest.raises(RuntimeError, match="5056"):
        gen.set_state(np.zeros(10, np.uint8))
    bad = gen.get_state().numpy()
    bad[8:12] = 0  # left = 0
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        gen.set_state(bad)
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        torch.Generator().set_state(torch.from_numpy(bad))


# ---------------------------------------------------------------------------
# module-level functions and nn init
# ---------------------------------------------------------------------------

def test_module_level_functions():
    saved = eg.get_rng_state().numpy()
    try:
        assert eg.manual_seed(42) is eg.default_generator
        assert eg.initial_seed() == 42
        tgen = torch.Generator().manual_seed(42)
        assert_same(eg.get_rng_state().numpy(), tgen.get_state())
        draws = ed.normal(eg.default_generator, (3, 4), np.float32)
        assert_same(draws, torch.randn(3, 4, generator=tgen))
        state = eg.get_rng_state().numpy()
        more = ed.uniform(eg.default_generator, (5,), np.float32)
        assert eg.set_rng_state(state) is None
        assert_same(ed.uniform(eg.default_generator, (5,), np.float32), more)
        new_seed = eg.seed()
        assert eg.initial_seed() == new_seed
        assert eg.manual_seed(np.int64(7)).initial_seed() == 7
    finally:
        eg.set_rng_state(saved)


def test_default_generator_seeded_nondeterministically():
    # Like torch's default generator, which is seeded from the OS at start-up.
    import subprocess
    import sys
    code = "import ember; print(ember.initial_seed())"
    seeds = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout for _ in range(2)}
    assert len(seeds) == 2


def test_global_stream_matches_torch_randn():
    saved = eg.get_rng_state().numpy()
    torch_saved = torch.get_rng_state()
    try:
        eg.manual_seed(0)
        torch.manual_seed(0)
        assert_same(ed.normal(eg.default_generator, (3, 4), np.float32), torch.randn(3, 4))
        assert_same(eg.get_rng_state().numpy(), torch.get_rng_state())
    finally:
        eg.set_rng_state(saved)
        torch.set_rng_state(torch_saved)


@pytest.mark.parametrize("in_features,out_features", [(20, 30), (1, 1), (128, 64), (3, 17)])
def test_linear_kaiming_uniform_init(in_features, out_features):
    tgen_state = torch.get_rng_state()
    try:
        torch.manual_seed(1234)
        layer = torch.nn.Linear(in_features, out_features)
    finally:
        torch.set_rng_state(tgen_state)
    gen = eg.Generator().manual_seed(1234)
    # torch.nn.init.kaiming_uniform_(weight, a=sqrt(5)), then the bias bound.
    gain = math.sqrt(2.0 / (1 + math.sqrt(5) ** 2))
    bound = math.sqrt(3.0) * (gain / math.sqrt(in_features))
    weight = ed.uniform(gen, (out_features, in_features), np.float32, -bound, bound)
    bias_bound = 1 / math.sqrt(in_features)
    bias = ed.uniform(gen, (out_features,), np.float32, -bias_bound, bias_bound)
    assert_same(weight, layer.weight)
    assert_same(bias, layer.bias)
