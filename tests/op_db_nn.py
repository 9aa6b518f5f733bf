"""The op test table's rows for the neural-network functions of `nn.functional` (convolution,
pooling, padding, interpolation, normalization, embedding, dropout, attention, distances).

Same conventions as op_db.py, which appends these rows to its OPS. The first samples of each
row are small enough (<= 20 elements per tensor) for gradcheck and gradgradcheck; random ops
seed both libraries' generators inside the op, so ember must draw torch's exact stream.
"""
import numpy as np

from op_db import (ALL, FLOATS, INTS, NUMBERS, ErrorInput, OpInfo, Sample, T, f32, f64, i64,
                   make, round_to)

F_ONLY = FLOATS
INT64_FLOATS = ("int64",) + FLOATS
NO_BOOL = NUMBERS
SMALL_INTS = ("uint8", "int8", "int16", "int32")   # no dilated or transposed int convolution
HALF_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}


def _F(m):
    return m.nn.functional


def fn(name, **fixed):
    """m.nn.functional.<name>(*args, **fixed, **kwargs)."""
    def op(m, *args, **kwargs):
        return getattr(_F(m), name)(*args, **fixed, **kwargs)
    op.__name__ = name
    return op


def seeded(name, **fixed):
    """A random function with both generators seeded first: the same stream is drawn."""
    def op(m, *args, **kwargs):
        m.manual_seed(0)
        return getattr(_F(m), name)(*args, **fixed, **kwargs)
    return op


def small_ints(dtype):
    """Integer data small enough that sums of products stay in range of every integer dtype."""
    return dict(low=-2, high=2) if dtype in INTS else {}


def idx(values):
    return T(np.asarray(values, dtype=np.int64), "int64")


def zeros(shape, dtype):
    return T(round_to(np.zeros(shape), dtype), dtype)


# ---- convolution ------------------------------------------------------------------------------
def conv_samples(nd, transposed=False):
    """Tiny gradcheck samples first, then strides, padding (incl. 'same'/'valid'), dilation,
    groups (incl. depthwise), bias, unbatched, empty and non-contiguous inputs."""
    def weight(rng, dtype, c_in, c_out, k, groups=1):
        shape = (c_in, c_out // groups) if transposed else (c_out, c_in // groups)
        return make(rng, shape + (k,) * nd, dtype, **small_ints(dtype))

    def samples(dtype, rng):
        s = (5,) * nd

        def x(n, c, size=s, layout="contiguous"):
            return make(rng, (n, c) + size, dtype, layout, **small_ints(dtype))
        out = [Sample(x(1, 1, (3,) * nd if nd < 3 else (2,) * nd), weight(rng, dtype, 1, 1, 2)),
               Sample(x(1, 2, (3,) * nd if nd < 3 else (2,) * nd), weight(rng, dtype, 2, 1, 2),
                      make(rng, (1,), dtype), stride=2 if transposed else 1)]
        out += [
            Sample(x(2, 3), weight(rng, dtype, 3, 4, 3), make(rng, (4,), dtype), stride=2,
                   padding=1),
            Sample(x(2, 4), weight(rng, dtype, 4, 6, 3, 2), groups=2, padding=1,
                   dilation=1 if dtype in SMALL_INTS else 2),
            Sample(x(2, 3), weight(rng, dtype, 3, 3, 3, 3), groups=3, stride=(2,) + (1,) *
                   (nd - 1)),
            Sample(x(2, 3, layout="transposed"), weight(rng, dtype, 3, 2, 2)),
            Sample(make(rng, (3,) + s, dtype, **small_ints(dtype)), weight(rng, dtype, 3, 2, 3)),
            Sample(x(0, 3), weight(rng, dtype, 3, 2, 3)),
        ]
        if transposed:
            out += [Sample(x(2, 3), weight(rng, dtype, 3, 4, 3), stride=2, padding=1,
                           output_padding=1),
                    Sample(x(1, 4), weight(rng, dtype, 4, 2, 2, 2), stride=3, groups=2,
                           dilation=2, output_padding=1)]
        else:
            out += [Sample(x(2, 3), weight(rng, dtype, 3, 2, 3), padding="same"),
                    Sample(x(2, 3), weight(rng, dtype, 3, 2, 2), padding="same", dilation=1),
                    Sample(x(2, 3), weight(rng, dtype, 3, 2, 2), padding="valid"),
                    Sample(x(2, 3), weight(rng, dtype, 3, 2, 1), stride=2)]
        return out
    return samples


def conv_errors(nd, transposed=False):
    def errors():
        s = (5,) * nd
        w = (3, 2) if transposed else (2, 3)
        out = [ErrorInput(f32(2, 4, *s), f32(*w, *(3,) * nd), match="channels"),
               ErrorInput(f32(2, 3, *s), f64(*w, *(3,) * nd), match="Float|float|Double"),
               ErrorInput(f32(*s[:1]), f32(*w, *(3,) * nd), match="input"),
               ErrorInput(f32(2, 3, *s), f32(*w, *(3,) * nd), f32(3), match="bias"),
               ErrorInput(f32(2, 3, *s), f32(*w, *(3,) * nd), stride=0, match="stride"),
               ErrorInput(f32(2, 3, *s), f32(*w, *(3,) * nd), padding=-1, match="padding")]
        if not transposed:
            out += [ErrorInput(f32(2, 3, *s), f32(2, 3, *(7,) * nd), match="Kernel size"),
                    ErrorInput(f32(2, 3, *s), f32(2, 3, *(3,) * nd), padding="full",
                               match="padding"),
                    ErrorInput(f32(2, 3, *s), f32(2, 3, *(3,) * nd), padding="same", stride=2,
                               match="strided"),
                    ErrorInput(f32(2, 4, *s), f32(3, 2, *(3,) * nd), groups=2,
                               match="divisible")]
        else:
            out.append(ErrorInput(f32(2, 3, *s), f32(3, 2, *(3,) * nd), output_padding=1,
                                  match="output padding"))
        return out
    return errors


def unfold_samples(dtype, rng):
    return [Sample(make(rng, (1, 1, 3, 3), dtype), 2),
            Sample(make(rng, (1, 2, 3, 3), dtype), (2, 1), padding=1, stride=(2, 1)),
            Sample(make(rng, (2, 3, 6, 7), dtype), (2, 3), dilation=2, padding=1, stride=2),
            Sample(make(rng, (3, 5, 4), dtype), 3),
            Sample(make(rng, (2, 3, 5, 4), dtype, "transposed"), 2, stride=2)]


def fold_samples(dtype, rng):
    return [Sample(make(rng, (1, 4, 4), dtype), (3, 3), 2),
            Sample(make(rng, (1, 2, 4), dtype), (3, 4), (2, 1), stride=(2, 1)),
            Sample(make(rng, (2, 18, 9), dtype), (5, 6), (2, 3), padding=1, stride=2),
            Sample(make(rng, (18, 9), dtype), (6, 6), 3, dilation=1, padding=1, stride=2),
            Sample(make(rng, (2, 8, 9), dtype, "transposed"), (4, 4), 2)]


# ---- pooling ----------------------------------------------------------------------------------
def pool_samples(nd, dilation=True, ceil=True, extra=({},)):
    """Small gradcheck sample, then overlapping and non-overlapping windows, padding, dilation,
    ceil_mode, unbatched and non-contiguous inputs."""
    def samples(dtype, rng):
        s = (7, 6, 5)[:nd]
        small = (3, 4, 3)[:nd] if nd < 3 else (2, 3, 3)
        out = []
        for kw in extra:
            out += [Sample(make(rng, (1, 1) + small, dtype), 2, 1, **kw),
                    Sample(make(rng, (2, 3) + s, dtype), 2, **kw),
                    Sample(make(rng, (2, 3) + s, dtype), 3, 2, 1, **kw),
                    Sample(make(rng, (2, 3) + s, dtype), (2,) + (3,) * (nd - 1), 1, **kw),
                    Sample(make(rng, (3,) + s, dtype), 2, **kw),
                    Sample(make(rng, (2, 3) + s, dtype, "transposed"), 2, **kw)]
            if ceil:
                out += [Sample(make(rng, (2, 3) + s, dtype), 2, ceil_mode=True, **kw),
                        Sample(make(rng, (2, 3) + s, dtype), 3, 2, 1, ceil_mode=True, **kw)]
            if dilation:
                out += [Sample(make(rng, (2, 2) + s, dtype), 2, 1, 1, dilation=2, **kw),
                        Sample(make(rng, (2, 2) + s, dtype), 3, 2, 1, dilation=(2,) +
                               (1,) * (nd - 1), ceil_mode=True, **kw)]
        return out
    return samples


def pool_errors(nd):
    def errors():
        s = (6,) * nd
        return [ErrorInput(f32(2, 3, *s), 2, padding=2, match="pad"),
                ErrorInput(f32(2, 3, *s), 0, match="stride|kernel"),
                ErrorInput(f32(2, 3, *s), 8, match="small|Invalid computed output size"),
                ErrorInput(f32(*s[:1]), 2, match="input|tensor|range")]
    return errors


def adaptive_samples(nd):
    def samples(dtype, rng):
        s = (7, 6, 5)[:nd]
        small = (3, 4)[:nd] if nd < 3 else (2, 3, 3)
        return [Sample(make(rng, (1, 1) + small, dtype), (2, 3, 2)[:nd]),
                Sample(make(rng, (2, 3) + s, dtype), (3, 4, 2)[:nd]),
                Sample(make(rng, (2, 3) + s, dtype), 1),
                Sample(make(rng, (2, 3) + s, dtype), (5, 6, 5)[:nd] if nd > 1 else 5),
                Sample(make(rng, (3,) + s, dtype), 2),
                Sample(make(rng, (2, 3) + s, dtype, "transposed"), (4, 3, 3)[:nd])] + \
            ([Sample(make(rng, (2, 3) + s, dtype), (None, 2) + (None,) * (nd - 2))]
             if nd > 1 else [])
    return samples


def unpool_samples(nd):
    def samples(dtype, rng):
        s = (4, 6, 4)[:nd]
        return [Sample(make(rng, (1, 1) + (4, 4)[:nd] if nd < 3 else (1, 1, 2, 2, 4), dtype), 2),
                Sample(make(rng, (2, 3) + s, dtype), 2),
                Sample(make(rng, (2, 3) + s, dtype), 2, output_size=tuple(
                    x + 1 for x in s)),
                Sample(make(rng, (3,) + s, dtype), 2)]
    return samples


def _unpool(nd):
    """max_unpool of a max_pool's values and indices (or of given ones)."""
    def op(m, x, k, output_size=None, indices=None):
        F = _F(m)
        pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[nd - 1]
        unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[nd - 1]
        if indices is None:
            x, indices = pool(x, k, return_indices=True)
        return unpool(x, indices, k, output_size=output_size)
    return op


def lp_samples(nd):
    def samples(dtype, rng):
        s = (6, 6, 4)[:nd]
        small = (3, 4)[:nd] if nd < 3 else (2, 3, 3)
        return [Sample(make(rng, (1, 1) + small, dtype, low=0.5, high=2), 2, 2),
                Sample(make(rng, (2, 3) + s, dtype, low=0.5, high=2), 2, 2),
                Sample(make(rng, (2, 3) + s, dtype, low=0.5, high=2), 3, 3, 2),
                Sample(make(rng, (2, 3) + s, dtype, low=0.5, high=2), 1.5, 2, ceil_mode=True)]
    return samples


# ---- padding, interpolation, sampling ---------------------------------------------------------
def pad_samples(mode):
    def samples(dtype, rng):
        out = [Sample(make(rng, (1, 2, 3), dtype), (1, 2)),
               Sample(make(rng, (1, 1, 3, 4), dtype), (1, 2, 2, 1)),
               Sample(make(rng, (2, 3, 4, 5), dtype), (2, 1, 3, 2)),
               Sample(make(rng, (2, 3, 4, 4, 3), dtype), (1, 2, 2, 1, 1, 2)),
               Sample(make(rng, (3, 5), dtype), (2, 3)),
               Sample(make(rng, (2, 3, 4, 5), dtype, "transposed"), (1, 1, 2, 0))]
        if mode == "constant":
            out += [Sample(make(rng, (2, 3, 4), dtype), (1, -1, 0, 2, 1, 1)),
                    Sample(make(rng, (5,), dtype), (2, 1), value=1),
                    Sample(make(rng, (2, 3), dtype), (-1, -1))]
        if mode == "circular":
            out.append(Sample(make(rng, (2, 3, 4, 5), dtype), (-1, 2, 1, -2)))
        return [Sample(s.args[0], s.args[1], mode=mode, **s.kwargs) for s in out]
    return samples


def pad_errors(mode):
    def errors():
        out = [ErrorInput(f32(2, 3, 4), (1, 2, 3), mode=mode, match="pad|Padding")]
        if mode != "constant":
            out += [ErrorInput(f32(2, 3, 4, 5), (1, 1), mode=mode, match="not supported"),
                    ErrorInput(f32(2, 3, 4), (1, 1), mode=mode, value=2.0, match="value")]
        if mode == "reflect":
            out.append(ErrorInput(f32(2, 3, 4), (4, 1), mode=mode, match="Padding size"))
        return out
    return errors


def interpolate_samples(mode):
    """Upsampling and downsampling by size and by scale factor, per spatial rank."""
    nd = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(mode)
    ranks = (nd,) if nd else (1, 2, 3)
    corners = (False, True) if nd else (None,)

    def samples(dtype, rng):
        out = []
        for r in ranks:
            s = (4, 5, 3)[:r]
            out.append(Sample(make(rng, (1, 1) + (3, 2, 2)[:r], dtype), size=(4, 3, 3)[:r]))
            for ac in corners:
                kw = {} if ac is None else {"align_corners": ac}
                out += [Sample(make(rng, (2, 3) + s, dtype), size=(7, 3, 4)[:r], **kw),
                        Sample(make(rng, (2, 3) + s, dtype), scale_factor=2, **kw),
                        Sample(make(rng, (2, 3) + s, dtype), scale_factor=(1.7, 0.6, 2.5)[:r],
                               **kw),
                        Sample(make(rng, (2, 3) + s, dtype), scale_factor=0.5,
                               recompute_scale_factor=True, **kw)]
            out.append(Sample(make(rng, (2, 3) + s, dtype, "transposed"), size=(5, 5, 5)[:r]))
        return [Sample(*smp.args, mode=mode, **smp.kwargs) for smp in out]
    return samples


def interpolate_errors():
    return [ErrorInput(f32(2, 3, 4), size=3, scale_factor=2, match="only one"),
            ErrorInput(f32(2, 3, 4), match="either size or scale_factor"),
            ErrorInput(f32(2, 3, 4), size=3, align_corners=True, match="align_corners"),
            ErrorInput(f32(2, 3, 4), size=3, mode="bilinear", match="4D input"),
            ErrorInput(f32(2, 3, 4, 4), size=3, mode="cubic", match="Input Error")]


def grid_sample_samples(dtype, rng):
    out = []
    for mode in ("bilinear", "nearest"):
        for padding_mode in ("zeros", "border", "reflection"):
            for ac in (False, True):
                kw = dict(mode=mode, padding_mode=padding_mode, align_corners=ac)
                out.append(Sample(make(rng, (1, 1, 3, 3), dtype),
                                  make(rng, (1, 2, 2, 2), dtype, low=-1.4, high=1.4), **kw))
                out.append(Sample(make(rng, (2, 3, 4, 5), dtype),
                                  make(rng, (2, 3, 6, 2), dtype, low=-1.7, high=1.7), **kw))
        out.append(Sample(make(rng, (2, 2, 3, 4, 3), dtype),
                          make(rng, (2, 2, 3, 2, 3), dtype, low=-1.2, high=1.2), mode=mode,
                          align_corners=False))
    return out


def affine_grid_samples(dtype, rng):
    return [Sample(make(rng, (1, 2, 3), dtype), (1, 1, 3, 2), align_corners=False),
            Sample(make(rng, (2, 2, 3), dtype), (2, 3, 4, 5), align_corners=True),
            # PyTorch cannot make the size-1 grid axis in float16/bfloat16
            *([Sample(make(rng, (2, 2, 3), dtype), (2, 3, 1, 5), align_corners=False)]
              if dtype in ("float32", "float64") else []),
            Sample(make(rng, (2, 3, 4), dtype), (2, 3, 4, 2, 3), align_corners=False),
            Sample(make(rng, (1, 3, 4), dtype), (1, 1, 2, 3, 2), align_corners=True)]


def shuffle_samples(unshuffle):
    def samples(dtype, rng):
        if unshuffle:
            return [Sample(make(rng, (1, 1, 2, 4), dtype), 2),
                    Sample(make(rng, (2, 3, 6, 4), dtype), 2),
                    Sample(make(rng, (2, 2, 3, 6, 6), dtype), 3),
                    Sample(make(rng, (3, 4, 4), dtype, "transposed"), 2)]
        return [Sample(make(rng, (1, 4, 2, 2), dtype), 2),
                Sample(make(rng, (2, 12, 3, 2), dtype), 2),
                Sample(make(rng, (2, 2, 9, 2, 2), dtype), 3),
                Sample(make(rng, (8, 3, 2), dtype, "transposed"), 2)]
    return samples


# ---- embedding --------------------------------------------------------------------------------
def embedding_samples(dtype, rng):
    return [Sample(idx([[0, 2], [3, 2]]), make(rng, (4, 3), dtype)),
            Sample(idx([4, 1, 1, 0, 4, 4]), make(rng, (5, 3), dtype)),
            Sample(idx([[0, 1, 4], [4, 4, 2]]), make(rng, (5, 3), dtype), padding_idx=4),
            Sample(idx([[0, 1, 4], [4, 4, 2]]), make(rng, (5, 3), dtype), padding_idx=-1),
            Sample(idx([[0, 1, 4], [4, 4, 2]]), make(rng, (5, 3), dtype),
                   scale_grad_by_freq=True),
            Sample(idx(3), make(rng, (5, 3), dtype)),
            Sample(idx(np.zeros((0, 2))), make(rng, (5, 3), dtype)),
            Sample(idx([1, 3]), make(rng, (5, 3), dtype, "transposed"))]


def embedding_max_norm(m, input, weight, **kwargs):
    """max_norm rescales the rows in place: on a copy, so the leaf stays untouched."""
    w = weight.detach().clone().requires_grad_(weight.requires_grad)
    out = _F(m).embedding(input, w, **kwargs)
    return out, w.detach()


def embedding_bag_samples(dtype, rng):
    out = []
    for mode in ("sum", "mean", "max"):
        out += [Sample(idx([[0, 2], [3, 2]]), make(rng, (4, 3), dtype), mode=mode),
                Sample(idx([0, 1, 4, 4, 4, 2, 3]), make(rng, (5, 3), dtype), idx([0, 2, 2, 6]),
                       mode=mode),
                Sample(idx([0, 1, 4, 4, 4, 2, 3]), make(rng, (5, 3), dtype), idx([0, 3, 7]),
                       mode=mode, include_last_offset=True),
                Sample(idx([[0, 1, 4], [4, 4, 2]]), make(rng, (5, 3), dtype), mode=mode,
                       padding_idx=4)]
    out.append(Sample(idx([0, 1, 4, 4, 2]), make(rng, (5, 3), dtype), idx([0, 2]), mode="sum",
                      per_sample_weights=make(rng, (5,), dtype)))
    return out


# ---- dropout ----------------------------------------------------------------------------------
def dropout_samples(shape, kwargs=({},)):
    def samples(dtype, rng):
        out = []
        for kw in kwargs:
            for p in (0.0, 0.3, 0.5, 1.0):
                out.append(Sample(make(rng, shape, dtype), p=p, **kw))
            out.append(Sample(make(rng, shape, dtype), p=0.4, training=False, **kw))
            out.append(Sample(make(rng, shape, dtype, "transposed"), p=0.2, **kw))
        return [Sample(make(rng, (2, 3, 2), dtype), p=0.5)] + out
    return samples


def dropout_inplace(name):
    def op(m, x, **kwargs):
        m.manual_seed(0)
        return getattr(_F(m), name)(x.clone(), inplace=True, **kwargs)
    return op


def native_dropout_samples(dtype, rng):
    return [Sample(make(rng, (2, 3, 2), dtype), 0.5, True)] + \
        [Sample(make(rng, (3, 4, 2), dtype), p, train)
            for p, train in ((0.3, True), (0.5, None), (1.0, True), (0.0, True), (0.4, False))] + \
        [Sample(make(rng, (3, 4), dtype, "transposed"), 0.2, True)]


def seeded_torch(name):
    """m.<name>(*args, **kwargs) with the generator seeded first."""
    def op(m, *args, **kwargs):
        m.manual_seed(0)
        return getattr(m, name)(*args, **kwargs)
    op.__name__ = name
    return op


def aten_op(name, seed=False):
    """m.ops.aten.<name>(*args, **kwargs), the generator seeded first if `seed`."""
    def op(m, *args, **kwargs):
        if seed:
            m.manual_seed(0)
        return getattr(m.ops.aten, name)(*args, **kwargs)
    op.__name__ = name
    return op


# ---- normalization ----------------------------------------------------------------------------
def batch_norm_legit_samples(training):
    """(input, weight, bias, running_mean, running_var, [training,] momentum, eps) for the
    forms torch.export lowers batch norm to."""
    def samples(dtype, rng):
        out = []
        for shape, affine in (((4, 3), True), ((2, 3, 4, 2), False), ((3, 2, 3), True)):
            c = shape[1]
            wb = (make(rng, (c,), dtype), make(rng, (c,), dtype)) if affine else (None, None)
            stats = (make(rng, (c,), dtype, grad=False),
                     make(rng, (c,), dtype, low=0.5, high=2, grad=False))
            flag = (True,) if training else ()
            out.append(Sample(make(rng, shape, dtype), *wb, *stats, *flag, 0.3, 1e-3))
        return out
    return samples


def batch_norm_samples(training):
    def samples(dtype, rng):
        def stats(c):
            return (make(rng, (c,), dtype, grad=False),
                    make(rng, (c,), dtype, low=0.5, high=2, grad=False))
        out = []
        for shape in ((3, 2, 3), (4, 3), (2, 3, 4, 2), (2, 2, 2, 3, 2)):
            c = shape[1]
            mean, var = stats(c)
            if training:
                out.append(Sample(make(rng, shape, dtype), None, None,
                                  make(rng, (c,), dtype), make(rng, (c,), dtype),
                                  training=True))
                out.append(Sample(make(rng, shape, dtype), mean, var, training=True,
                                  momentum=0.3, eps=1e-3))
            else:
                out.append(Sample(make(rng, shape, dtype), mean, var, make(rng, (c,), dtype),
                                  make(rng, (c,), dtype)))
                out.append(Sample(make(rng, shape, dtype), *stats(c)))
        out.append(Sample(make(rng, (3, 4, 2), dtype, "transposed"), *stats(4),
                          training=training))
        return out
    return samples


def layer_norm_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), (4,), make(rng, (4,), dtype),
                   make(rng, (4,), dtype)),
            Sample(make(rng, (2, 3, 4), dtype), (3, 4)),
            Sample(make(rng, (2, 3, 4), dtype), [4], make(rng, (4,), dtype), eps=1e-2),
            Sample(make(rng, (5,), dtype), (5,), None, make(rng, (5,), dtype)),
            Sample(make(rng, (2, 3, 4), dtype, "transposed"), (4,), make(rng, (4,), dtype))]


def group_norm_samples(dtype, rng):
    return [Sample(make(rng, (2, 4, 2), dtype), 2),
            Sample(make(rng, (2, 6, 3, 2), dtype), 3, make(rng, (6,), dtype),
                   make(rng, (6,), dtype)),
            Sample(make(rng, (3, 4), dtype), 1, make(rng, (4,), dtype)),
            Sample(make(rng, (2, 4, 3, 2), dtype), 4, eps=1e-2),
            Sample(make(rng, (2, 4, 3), dtype, "transposed"), 2)]


def native_layer_norm_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), [4], make(rng, (4,), dtype),
                   make(rng, (4,), dtype), 1e-5),
            Sample(make(rng, (2, 3, 2), dtype), [3, 2], None, None, 1e-2),
            Sample(make(rng, (2, 3, 4), dtype, "transposed"), [4], make(rng, (4,), dtype), None,
                   1e-5)]


def weight_norm_samples(dtype, rng):
    """(v, g, dim) for the first and the last dim (the fused kernel reads v as contiguous:
    torch._weight_norm makes it so first)."""
    return [Sample(make(rng, (3, 4), dtype, low=0.5), make(rng, (3, 1), dtype), 0),
            Sample(make(rng, (2, 3, 4), dtype, low=0.5), make(rng, (1, 1, 4), dtype), 2)]


def weight_norm_middle_samples(dtype, rng):
    """torch._weight_norm: also a middle dim (composed) and a non-contiguous v."""
    return weight_norm_samples(dtype, rng) + [
        Sample(make(rng, (2, 3, 4), dtype, low=0.5), make(rng, (1, 3, 1), dtype), 1),
        Sample(make(rng, (3, 2, 4), dtype, "transposed", low=0.5), make(rng, (3, 1, 1), dtype),
               0)]


def weight_norm_backward_samples(dtype, rng):
    out = []
    for s in weight_norm_samples(dtype, rng):
        v, g, dim = s.args
        x = v.data.astype(np.float64)
        other = tuple(d for d in range(x.ndim) if d != dim)
        norms = np.sqrt((x * x).sum(axis=other)).reshape(g.data.shape)
        norm_dt = "float32" if dtype in ("float16", "bfloat16") else dtype
        out.append(Sample(make(rng, x.shape, dtype, grad=False), T(v.data, dtype, grad=False),
                          T(g.data, dtype, grad=False), T(round_to(norms, norm_dt), norm_dt,
                                                          grad=False), dim))
    return out


def native_group_norm_samples(dtype, rng):
    return [Sample(make(rng, (2, 4, 2), dtype), None, None, 2, 4, 2, 2, 1e-5),
            Sample(make(rng, (2, 6, 3), dtype), make(rng, (6,), dtype), make(rng, (6,), dtype),
                   2, 6, 3, 3, 1e-5),
            Sample(make(rng, (2, 4, 3), dtype), make(rng, (4,), dtype), None, 2, 4, 3, 1,
                   1e-2)]


def instance_norm_samples(dtype, rng):
    def stats(c):
        return dict(running_mean=make(rng, (c,), dtype, grad=False),
                    running_var=make(rng, (c,), dtype, low=0.5, high=2, grad=False))
    return [Sample(make(rng, (2, 2, 3), dtype)),
            Sample(make(rng, (2, 3, 4, 2), dtype), weight=make(rng, (3,), dtype),
                   bias=make(rng, (3,), dtype)),
            Sample(make(rng, (2, 3, 4), dtype), **stats(3)),
            Sample(make(rng, (2, 3, 4), dtype), use_input_stats=False, **stats(3)),
            Sample(make(rng, (2, 2, 3, 2, 2), dtype), momentum=0.5, **stats(2))]


def rms_norm_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), (4,), make(rng, (4,), dtype)),
            Sample(make(rng, (2, 3, 4), dtype), (3, 4)),
            Sample(make(rng, (2, 3, 4), dtype), [4], eps=1e-3),
            Sample(make(rng, (2, 3, 4), dtype, "transposed"), (4,), make(rng, (4,), dtype))]


def local_response_norm_samples(dtype, rng):
    return [Sample(make(rng, (1, 4, 3), dtype), 2),
            Sample(make(rng, (2, 5, 3, 2), dtype), 3, alpha=1e-2, beta=0.5, k=2.0),
            Sample(make(rng, (2, 5, 3, 2, 2), dtype), 2)]


# ---- attention and distances ------------------------------------------------------------------
def sdpa_samples(dtype, rng):
    def qkv(b, l_q, l_k, e, ev):
        return (make(rng, b + (l_q, e), dtype), make(rng, b + (l_k, e), dtype),
                make(rng, b + (l_k, ev), dtype))
    return [Sample(*qkv((1,), 2, 3, 2, 2)),
            Sample(*qkv((2, 3), 4, 5, 8, 6)),
            Sample(*qkv((2, 3), 4, 4, 8, 6), is_causal=True),
            Sample(*qkv((2, 3), 4, 5, 8, 6), is_causal=True, scale=0.5),
            Sample(*qkv((2, 3), 4, 5, 8, 6), attn_mask=make(rng, (4, 5), dtype, grad=False)),
            Sample(*qkv((2, 3), 4, 5, 8, 6), attn_mask=T(rng.random((2, 1, 4, 5)) < 0.7,
                                                          "bool")),
            Sample(*qkv((2, 3), 4, 5, 8, 6), dropout_p=0.3),
            Sample(*qkv((4,), 3, 5, 8, 6), attn_mask=T(np.array([[1, 1, 0, 0, 0]] * 2 + [[0] * 5],
                                                                 dtype=bool), "bool"))]


def cdist_samples(dtype, rng):
    return [Sample(make(rng, (2, 3), dtype), make(rng, (3, 3), dtype)),
            Sample(make(rng, (2, 4, 3), dtype), make(rng, (2, 5, 3), dtype), p=1.0),
            Sample(make(rng, (4, 3), dtype), make(rng, (5, 3), dtype), p=3.0),
            Sample(make(rng, (4, 3), dtype), make(rng, (5, 3), dtype), p=0.0),
            Sample(make(rng, (4, 3), dtype), make(rng, (5, 3), dtype), p=float("inf")),
            Sample(make(rng, (30, 3), dtype), make(rng, (5, 3), dtype)),
            Sample(make(rng, (4, 3), dtype), make(rng, (5, 3), dtype),
                   compute_mode="use_mm_for_euclid_dist")]


def cdist_forward_samples(dtype, rng):
    """_cdist_forward's p-norm path: broadcast batch dims, p < 1, 1 < p < 2, and no columns."""
    return [Sample(make(rng, (2, 1, 3, 2), dtype), make(rng, (4, 5, 2), dtype), 2.0, None),
            Sample(make(rng, (4, 3), dtype), make(rng, (5, 3), dtype), 0.5, 0),
            Sample(make(rng, (4, 3), dtype), make(rng, (5, 3), dtype), 1.5, None),
            Sample(make(rng, (4, 3), dtype), make(rng, (5, 3), dtype), float("inf"), 2),
            Sample(make(rng, (3, 0), dtype), make(rng, (2, 0), dtype), 2.0, None)]


def cdist_backward(m, grad, x1, x2, p):
    """Each library's backward kernel from its own forward's distances."""
    return m.ops.aten._cdist_backward(grad, x1, x2, p, m.ops.aten._cdist_forward(x1, x2, p, None))


def cdist_backward_samples(dtype, rng):
    return [Sample(make(rng, (2, 4, 4, 5), dtype), make(rng, (2, 1, 4, 2), dtype),
                   make(rng, (4, 5, 2), dtype), p)
            for p in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf"))]


def distance_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), make(rng, (3, 4), dtype)),
            Sample(make(rng, (2, 3, 4), dtype), make(rng, (3, 4), dtype), p=1.0),
            Sample(make(rng, (5,), dtype), make(rng, (5,), dtype), p=3.0, keepdim=True),
            Sample(make(rng, (3, 4), dtype), make(rng, (3, 4), dtype), p=float("inf"), eps=0.1),
            Sample(make(rng, (3, 4), dtype, "transposed"), make(rng, (3, 4), dtype))]


def cosine_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), make(rng, (3, 4), dtype)),
            Sample(make(rng, (2, 3, 4), dtype), make(rng, (3, 4), dtype), dim=-1),
            Sample(make(rng, (4, 3), dtype), make(rng, (4, 1), dtype), dim=0, eps=0.5),
            # a zero vector: its norm clamps to eps (in half precision eps=1e-8 underflows to 0,
            # where ember's gradient is inf and torch's NaN: the zero sample uses a larger eps)
            Sample(zeros((2, 3), dtype), make(rng, (2, 3), dtype),
                   **({"eps": 1e-3} if dtype in ("float16", "bfloat16") else {})),
            Sample(make(rng, (3, 4), dtype, "transposed"), make(rng, (3, 4), dtype))]


def normalize_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype)),
            Sample(make(rng, (2, 3, 4), dtype), p=1.0, dim=-1),
            Sample(make(rng, (4, 3), dtype), p=float("inf"), dim=0),
            Sample(zeros((2, 3), dtype), eps=0.1),
            Sample(make(rng, (3, 4), dtype, "transposed"), p=3.0)]


def one_hot_samples(dtype, rng):
    return [Sample(idx([0, 3, 1])), Sample(idx([[0, 1], [2, 2]]), 5), Sample(idx(2), 3),
            Sample(idx(np.zeros((0,))), 4)]



# ---- torch-level forms of the nn functions (torch.convolution, grid_sampler, embedding_bag,
# the functional recurrent ops and cells) and F.grouped_mm -----------------------------------
_GRID_MODES, _GRID_PADDINGS = ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection")


def grid_sampler(name, spatial_dims=None):
    """m.<name>(input, grid, mode number, padding number, align_corners) on F.grid_sample's
    samples (those of the given spatial rank)."""
    def op(m, x, grid, mode="bilinear", padding_mode="zeros", align_corners=False):
        return getattr(m, name)(x, grid, _GRID_MODES.index(mode),
                                _GRID_PADDINGS.index(padding_mode), align_corners)

    def samples(dtype, rng):
        return [s for s in grid_sample_samples(dtype, rng)
                if spatial_dims is None or s.args[0].data.ndim == spatial_dims + 2]
    return op, samples


def affine_grid_generator_samples(dtype, rng):
    return [Sample(make(rng, (1, 2, 3), dtype), [1, 1, 3, 2], False),
            Sample(make(rng, (2, 2, 3), dtype), [2, 3, 4, 5], True),
            Sample(make(rng, (2, 3, 4), dtype), [2, 3, 4, 2, 3], False)]


def torch_embedding_bag(m, weight, indices, offsets, *args):
    """All four outputs: the bags and offset2bag, bag_size, max_indices (compared too)."""
    return m.embedding_bag(weight, indices, offsets, *args)


def torch_embedding_bag_samples(dtype, rng):
    out = []
    for mode in (0, 1, 2):
        out += [Sample(make(rng, (10, 3), dtype), idx([1, 2, 4, 5, 4, 3, 2, 9]), idx([0, 4]),
                       False, mode),
                Sample(make(rng, (10, 3), dtype), idx([1, 2, 4, 5, 4, 3, 2, 9]), idx([0, 0, 8]),
                       False, mode, False, None, False, 4),
                Sample(make(rng, (10, 3), dtype), idx([1, 2, 4, 5, 4, 3, 2, 9]),
                       idx([0, 3, 8]), False, mode, False, None, True)]
    out.append(Sample(make(rng, (6, 2), dtype), idx([0, 5, 5, 1]), idx([0, 2]), False, 0, False,
                      make(rng, (4,), dtype)))
    # nothing requires grad: the forward-only kernel (a sum's bag_size has one per offset)
    out += [Sample(make(rng, (6, 2), dtype, grad=False), idx([0, 5, 5, 1]), idx([0, 2, 4]),
                   False, mode, False, None, True) for mode in (0, 1)]
    return out


_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def recurrent(name, has_biases=True, num_layers=1, bidirectional=False, batch_first=False,
              packed=False):
    """m.<name>(input, hx, [params], ...) with the flat weights passed as separate tensors (the
    harness converts top-level arguments); packed: the data and batch sizes overload."""
    def op(m, x, h, *rest):
        if name == "lstm":
            hx, params = (h, rest[0]), list(rest[1:])
        else:
            hx, params = h, list(rest)
        if packed:
            return getattr(m, name)(x, m.tensor([3, 2, 2, 1]), hx, params, has_biases,
                                    num_layers, 0.0, False, bidirectional)
        return getattr(m, name)(x, hx, params, has_biases, num_layers, 0.0, False,
                                bidirectional, batch_first)

    def samples(dtype, rng):
        gates, hidden, features, directions = _GATES[name], 3, 2, 2 if bidirectional else 1
        x = make(rng, (8, features) if packed else (4, 3, features), dtype, low=-1, high=1)
        batch = 4 if batch_first else 3
        states = [make(rng, (num_layers * directions, batch, hidden), dtype, low=-1, high=1)
                  for _ in range(2 if name == "lstm" else 1)]
        params = []
        for layer in range(num_layers):
            for _ in range(directions):
                inputs = features if layer == 0 else hidden * directions
                params += [make(rng, (gates * hidden, inputs), dtype, low=-0.5, high=0.5),
                           make(rng, (gates * hidden, hidden), dtype, low=-0.5, high=0.5)]
                if has_biases:
                    params += [make(rng, (gates * hidden,), dtype, low=-0.5, high=0.5)
                               for _ in range(2)]
        return [Sample(x, *states, *params)]
    return op, samples


def cell(name, has_biases=True):
    def op(m, x, h, *rest):
        if name == "lstm_cell":
            return m.lstm_cell(x, (h, rest[0]), *rest[1:])
        return getattr(m, name)(x, h, *rest)

    def samples(dtype, rng):
        gates = _GATES[name[:-len("_cell")]]
        x = make(rng, (3, 2), dtype, low=-1, high=1)
        states = [make(rng, (3, 4), dtype, low=-1, high=1)
                  for _ in range(2 if name == "lstm_cell" else 1)]
        weights = [make(rng, (gates * 4, 2), dtype, low=-0.5, high=0.5),
                   make(rng, (gates * 4, 4), dtype, low=-0.5, high=0.5)]
        if has_biases:
            weights += [make(rng, (gates * 4,), dtype, low=-0.5, high=0.5) for _ in range(2)]
        return [Sample(x, *states, *weights)]
    return op, samples


def cell_errors(name):
    def errors():
        h = (f32(3, 4), f32(3, 4)) if name == "lstm_cell" else (f32(3, 4),)
        gates = 4 * _GATES[name[:-len("_cell")]]
        return [ErrorInput(f32(3, 5), *h, f32(gates, 2), f32(gates, 4),
                           match="inconsistent input_size"),
                ErrorInput(f32(2, 2), *h, f32(gates, 2), f32(gates, 4),
                           match="doesn't match hidden0")]
    return errors


def grouped_mm_samples(dtype, rng):
    offs = T(np.array([8, 16, 24], dtype=np.int32), "int32")
    return [Sample(make(rng, (24, 16), dtype, low=-1, high=1),
                   make(rng, (3, 16, 8), dtype, low=-1, high=1), offs=offs),
            Sample(make(rng, (3, 8, 16), dtype, low=-1, high=1),
                   make(rng, (3, 16, 8), dtype, low=-1, high=1)),
            Sample(make(rng, (3, 8, 16), dtype, low=-1, high=1),
                   make(rng, (16, 24), dtype, low=-1, high=1), offs=offs),
            Sample(make(rng, (8, 24), dtype, low=-1, high=1),
                   make(rng, (24, 16), dtype, low=-1, high=1), offs=offs)]


def grouped_mm_errors():
    i32 = T(np.array([8, 16, 24], dtype=np.int32), "int32")
    return [ErrorInput(f64(3, 8, 16), f64(3, 16, 8), match="Float32, BFloat16 or Float16"),
            ErrorInput(f32(16), f32(3, 16, 8), match="2 or 3d"),
            ErrorInput(f32(3, 8, 16), f32(3, 8, 8), match="contraction dimension"),
            ErrorInput(f32(24, 16), f32(3, 16, 8), match="Have to provide offsets"),
            ErrorInput(f32(3, 8, 16), f32(3, 16, 8), offs=i32, match="Have to provide offsets"),
            ErrorInput(f32(24, 16), f32(3, 16, 8), offs=idx([8, 16, 24]), match="int32"),
            ErrorInput(f32(2, 8, 16), f32(3, 16, 8), match="batched dimension"),
            ErrorInput(f32(3, 8, 16), f32(3, 16, 8), bias=f32(3, 8), match="Bias"),
            ErrorInput(f32(3, 8, 6), f32(3, 6, 8), match="16 bytes")]


_SAMPLER_2D, _SAMPLER_3D, _SAMPLER = (grid_sampler("grid_sampler_2d", 2),
                                      grid_sampler("grid_sampler_3d", 3),
                                      grid_sampler("grid_sampler"))

# ---- the rows ---------------------------------------------------------------------------------
NN_OPS = [
    # convolution
    OpInfo("F.conv1d", fn("conv1d"), NO_BOOL, conv_samples(1), errors=conv_errors(1),
           tol=HALF_TOL,
           exact_half_reference=True),
    OpInfo("F.conv2d", fn("conv2d"), NO_BOOL, conv_samples(2), errors=conv_errors(2),
           tol=HALF_TOL,
           exact_half_reference=True),
    OpInfo("F.conv3d", fn("conv3d"), NO_BOOL, conv_samples(3), errors=conv_errors(3),
           tol=HALF_TOL,
           exact_half_reference=True),
    OpInfo("F.conv_transpose1d", fn("conv_transpose1d"), INT64_FLOATS,
           conv_samples(1, transposed=True), errors=conv_errors(1, transposed=True),
           tol=HALF_TOL,
           exact_half_reference=True),
    OpInfo("F.conv_transpose2d", fn("conv_transpose2d"), INT64_FLOATS,
           conv_samples(2, transposed=True), errors=conv_errors(2, transposed=True),
           tol=HALF_TOL,
           exact_half_reference=True),
    # PyTorch's float16 transposed 3-d convolution accumulates in float16
    OpInfo("F.conv_transpose3d", fn("conv_transpose3d"), INT64_FLOATS,
           conv_samples(3, transposed=True), tol={"float16": (5e-2, 5e-2),
                                                  "bfloat16": (5e-2, 5e-2)},
           exact_half_reference=True),
    OpInfo("F.unfold", fn("unfold"), ("bool",) + FLOATS, unfold_samples, tol=HALF_TOL,
           errors=lambda: [ErrorInput(f32(1, 2, 3, 4, 5), 2, match="4D"),
                           ErrorInput(f32(1, 2, 3, 3), 4, match="sliding blocks")]),
    OpInfo("F.fold", fn("fold"), ("bool",) + FLOATS, fold_samples, tol=HALF_TOL,
           errors=lambda: [ErrorInput(f32(2, 12, 5), (3, 3), 2, match="sliding blocks"),
                           ErrorInput(f32(2, 10, 4), (3, 3), 2, match="divisible")]),

    # pooling
    OpInfo("F.max_pool1d", fn("max_pool1d"), F_ONLY, pool_samples(1),
           errors=pool_errors(1)),
    OpInfo("F.max_pool1d_indices", fn("max_pool1d", return_indices=True), NO_BOOL,
           pool_samples(1)),
    OpInfo("F.max_pool2d", fn("max_pool2d"), NO_BOOL, pool_samples(2), errors=pool_errors(2)),
    OpInfo("F.max_pool2d_indices", fn("max_pool2d", return_indices=True), NO_BOOL,
           pool_samples(2)),
    OpInfo("F.max_pool3d", fn("max_pool3d", return_indices=True), NO_BOOL, pool_samples(3),
           errors=pool_errors(3)),
    OpInfo("F.avg_pool1d", fn("avg_pool1d"), INT64_FLOATS,
           pool_samples(1, dilation=False, extra=({}, {"count_include_pad": False}))),
    OpInfo("F.avg_pool2d", fn("avg_pool2d"), INT64_FLOATS,
           pool_samples(2, dilation=False, extra=({}, {"count_include_pad": False},
                                                  {"divisor_override": 3})),
           errors=pool_errors(2)),
    OpInfo("F.avg_pool3d", fn("avg_pool3d"), ("int64", "float32", "float64"),
           pool_samples(3, dilation=False, extra=({}, {"count_include_pad": False},
                                                  {"divisor_override": 2}))),
    OpInfo("F.adaptive_avg_pool1d", fn("adaptive_avg_pool1d"), F_ONLY, adaptive_samples(1),
           tol=HALF_TOL),
    OpInfo("F.adaptive_avg_pool2d", fn("adaptive_avg_pool2d"), F_ONLY, adaptive_samples(2),
           tol=HALF_TOL,
           errors=lambda: [ErrorInput(f32(3), 2, match="3D or 4D")]),
    OpInfo("F.adaptive_avg_pool3d", fn("adaptive_avg_pool3d"), F_ONLY, adaptive_samples(3),
           tol=HALF_TOL),
    OpInfo("F.adaptive_max_pool1d", fn("adaptive_max_pool1d", return_indices=True), F_ONLY,
           adaptive_samples(1)),
    OpInfo("F.adaptive_max_pool2d", fn("adaptive_max_pool2d", return_indices=True), F_ONLY,
           adaptive_samples(2)),
    OpInfo("F.adaptive_max_pool3d", fn("adaptive_max_pool3d"), F_ONLY, adaptive_samples(3)),
    OpInfo("F.max_unpool1d", _unpool(1), F_ONLY, unpool_samples(1)),
    OpInfo("F.max_unpool2d", _unpool(2), F_ONLY, unpool_samples(2),
           errors=lambda: [ErrorInput(f32(1, 1, 2, 2), 2, indices=idx([[[[0, 1], [2, 99]]]]),
                                      match="invalid max index")]),
    OpInfo("F.max_unpool3d", _unpool(3), F_ONLY, unpool_samples(3)),
    OpInfo("F.lp_pool1d", fn("lp_pool1d"), F_ONLY, lp_samples(1), other_dtypes_raise=False),
    OpInfo("F.lp_pool2d", fn("lp_pool2d"), F_ONLY, lp_samples(2), other_dtypes_raise=False),
    OpInfo("F.lp_pool3d", fn("lp_pool3d"), ("float32", "float64"), lp_samples(3),
           other_dtypes_raise=False),

    # padding, resampling
    OpInfo("F.pad_constant", fn("pad"), ALL, pad_samples("constant"),
           errors=pad_errors("constant")),
    OpInfo("F.pad_reflect", fn("pad"), NO_BOOL, pad_samples("reflect"),
           errors=pad_errors("reflect")),
    OpInfo("F.pad_replicate", fn("pad"), NO_BOOL, pad_samples("replicate"),
           errors=pad_errors("replicate")),
    OpInfo("F.pad_circular", fn("pad"), ALL, pad_samples("circular"),
           errors=pad_errors("circular")),
    OpInfo("F.interpolate_nearest", fn("interpolate"), ("uint8",) + FLOATS,
           interpolate_samples("nearest"), errors=interpolate_errors),
    OpInfo("F.interpolate_nearest_exact", fn("interpolate"), ("uint8",) + FLOATS,
           interpolate_samples("nearest-exact")),
    OpInfo("F.interpolate_area", fn("interpolate"), F_ONLY, interpolate_samples("area")),
    OpInfo("F.interpolate_linear", fn("interpolate"), F_ONLY, interpolate_samples("linear"),
           tol=HALF_TOL),
    # uint8 images too, as PyTorch's CPU kernels (PIL's fixed-point resampling)
    OpInfo("F.interpolate_bilinear", fn("interpolate"), F_ONLY + ("uint8",),
           interpolate_samples("bilinear"), tol=HALF_TOL, other_dtypes_raise=False),
    OpInfo("F.interpolate_bicubic", fn("interpolate"), F_ONLY + ("uint8",),
           interpolate_samples("bicubic"), tol=HALF_TOL, other_dtypes_raise=False),
    OpInfo("F.interpolate_trilinear", fn("interpolate"), F_ONLY,
           interpolate_samples("trilinear"), tol=HALF_TOL),
    OpInfo("F.grid_sample", fn("grid_sample"), F_ONLY, grid_sample_samples,
           tol={"float16": (5e-2, 5e-2), "bfloat16": (2e-1, 2e-1)},
           errors=lambda: [ErrorInput(f32(1, 1, 3, 3), f32(1, 2, 2, 2), mode="cubic",
                                      align_corners=False, match="mode"),
                           ErrorInput(f32(1, 1, 3, 3), f32(1, 2, 2, 2), padding_mode="wrap",
                                      align_corners=False, match="padding_mode")]),
    OpInfo("F.affine_grid", fn("affine_grid"), F_ONLY, affine_grid_samples, tol=HALF_TOL,
           errors=lambda: [ErrorInput(f32(2, 3, 3), (2, 3, 4, 5), align_corners=False,
                                      match="Nx2x3"),
                           ErrorInput(f32(2, 2, 3), (2, 3, 4), align_corners=False,
                                      match="4D and 5D")]),
    OpInfo("F.pixel_shuffle", fn("pixel_shuffle"), ALL, shuffle_samples(False),
           errors=lambda: [ErrorInput(f32(2, 5, 3, 3), 2, match="divisible"),
                           ErrorInput(f32(5, 3), 2, match="at least 3")]),
    OpInfo("F.pixel_unshuffle", fn("pixel_unshuffle"), ALL, shuffle_samples(True),
           errors=lambda: [ErrorInput(f32(2, 3, 5, 4), 2, match="divisible")]),

    # embedding
    OpInfo("F.embedding", fn("embedding"), ALL, embedding_samples,
           errors=lambda: [ErrorInput(idx([5]), f32(3, 2), match="index out of range"),
                           ErrorInput(f32(2), f32(3, 2), match="Long, Int"),
                           ErrorInput(idx([1]), f32(3, 2), padding_idx=3,
                                      match="Padding_idx")]),
    OpInfo("F.embedding_max_norm", embedding_max_norm, F_ONLY,
           lambda dtype, rng: [Sample(idx([[0, 2], [3, 2]]), make(rng, (4, 3), dtype),
                                      max_norm=1.5),
                               Sample(idx([1, 1, 0]), make(rng, (4, 3), dtype), max_norm=2.0,
                                      norm_type=1.0)],
           gradcheck=False, tol=HALF_TOL),
    # gradcheck=False: no double backward, as in PyTorch (tests/test_embedding_bag.py checks
    # the first derivatives with gradcheck and that the second raises as torch's does)
    OpInfo("F.embedding_bag", fn("embedding_bag"), F_ONLY, embedding_bag_samples,
           tol=HALF_TOL, gradcheck=False,
           errors=lambda: [ErrorInput(idx([1, 2]), f32(3, 2), match="offsets"),
                           ErrorInput(idx([[1, 2]]), f32(3, 2), mode="median", match="mode")]),
    OpInfo("F.one_hot", fn("one_hot"), ("int64",), one_hot_samples, grad=False,
           other_dtypes_raise=False,
           errors=lambda: [ErrorInput(idx([-1]), match="non-negative"),
                           ErrorInput(idx([3]), 3, match="smaller than num_classes"),
                           ErrorInput(f32(2), match="LongTensor")]),

    # dropout
    OpInfo("F.dropout", seeded("dropout"), F_ONLY, dropout_samples((3, 4, 2)),
           errors=lambda: [ErrorInput(f32(3), p=1.5, match="between 0 and 1")]),
    OpInfo("F.dropout_", dropout_inplace("dropout"), F_ONLY, dropout_samples((3, 4))),
    OpInfo("F.dropout1d", seeded("dropout1d"), F_ONLY, dropout_samples((3, 4, 2))),
    OpInfo("F.dropout1d_unbatched", seeded("dropout1d"), F_ONLY, dropout_samples((3, 4))),
    OpInfo("F.dropout2d", seeded("dropout2d"), F_ONLY, dropout_samples((2, 3, 4, 2))),
    OpInfo("F.dropout3d", seeded("dropout3d"), F_ONLY,
           dropout_samples((2, 3, 2, 2, 2), kwargs=({},))),
    OpInfo("F.alpha_dropout", seeded("alpha_dropout", training=True), F_ONLY,
           lambda dtype, rng: [s for s in dropout_samples((3, 4, 2))(dtype, rng)
                               if "training" not in s.kwargs]),
    OpInfo("F.feature_alpha_dropout", seeded("feature_alpha_dropout", training=True), F_ONLY,
           lambda dtype, rng: [s for s in dropout_samples((2, 3, 4))(dtype, rng)
                               if "training" not in s.kwargs]),

    OpInfo("aten.native_dropout", aten_op("native_dropout", seed=True), F_ONLY,
           native_dropout_samples, other_dtypes_raise=False),
    OpInfo("torch.native_dropout", seeded_torch("native_dropout"), F_ONLY,
           native_dropout_samples, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(i64(3), 0.5, True, match="desired output type Long")]),

    # normalization
    OpInfo("aten._native_batch_norm_legit_no_training",
           aten_op("_native_batch_norm_legit_no_training"), F_ONLY,
           batch_norm_legit_samples(False), tol=HALF_TOL),
    OpInfo("aten._native_batch_norm_legit_functional",
           aten_op("_native_batch_norm_legit_functional"), F_ONLY,
           batch_norm_legit_samples(True), tol=HALF_TOL),
    OpInfo("F.batch_norm_train", fn("batch_norm"), F_ONLY, batch_norm_samples(True),
           tol=HALF_TOL,
           errors=lambda: [ErrorInput(f32(1, 3), None, None, training=True,
                                      match="more than 1 value"),
                           ErrorInput(f32(2, 3), None, None, f32(4), training=True,
                                      match="weight")]),
    OpInfo("F.batch_norm_eval", fn("batch_norm"), F_ONLY, batch_norm_samples(False),
           tol=HALF_TOL, errors=lambda: [ErrorInput(f32(2, 3), None, None, match="running")]),
    OpInfo("F.layer_norm", fn("layer_norm"), F_ONLY, layer_norm_samples, tol=HALF_TOL,
           errors=lambda: [ErrorInput(f32(2, 3), (4,), match="normalized_shape")]),
    OpInfo("F.group_norm", fn("group_norm"), F_ONLY, group_norm_samples, tol=HALF_TOL,
           errors=lambda: [ErrorInput(f32(2, 3, 4), 2, match="divisible"),
                           ErrorInput(f32(3), 1, match="at least 2")]),
    # gradcheck=False: the backward formula under create_graph treats the saved norms as
    # constants, as PyTorch's _weight_norm_differentiable_backward does (torch's own
    # gradgradcheck fails the same way); test_weight_norm_interface.py compares the double
    # backward with torch's
    OpInfo("torch._weight_norm_interface", lambda m, *a: m._weight_norm_interface(*a), F_ONLY,
           weight_norm_samples, tol=HALF_TOL, gradcheck=False,
           errors=lambda: [ErrorInput(f32(2, 3, 4), f32(1, 3, 1), 1, match="first or last dim")]),
    OpInfo("torch._weight_norm", lambda m, *a: m._weight_norm(*a), F_ONLY,
           weight_norm_middle_samples, tol=HALF_TOL, gradcheck=False),
    OpInfo("aten._weight_norm_interface_backward",
           lambda m, *a: m.ops.aten._weight_norm_interface_backward(*a), F_ONLY,
           weight_norm_backward_samples, tol=HALF_TOL, grad=False),
    OpInfo("torch.native_layer_norm", lambda m, *a, **k: m.native_layer_norm(*a, **k), F_ONLY,
           native_layer_norm_samples, tol=HALF_TOL,
           errors=lambda: [ErrorInput(f32(2, 4), [3], None, None, 1e-5, match="normalized_sh"),
                           ErrorInput(f32(2, 4), [4], f32(3), None, 1e-5, match="weight"),
                           ErrorInput(f32(2, 4), [], None, None, 1e-5, match="1-dimensional")]),
    # gradcheck=False: mean and rstd feed the input gradient only when both receive one, so
    # the per-output Jacobian of mean (or rstd) is zero -- torch.autograd.gradcheck fails on
    # torch.native_group_norm the same way. F.group_norm's row gradchecks the output;
    # tests/test_compile.py compares every combination of the three with torch's gradients.
    OpInfo("torch.native_group_norm", lambda m, *a, **k: m.native_group_norm(*a, **k), F_ONLY,
           native_group_norm_samples, tol=HALF_TOL, gradcheck=False,
           errors=lambda: [ErrorInput(f32(2, 4, 3), None, None, 2, 4, 3, 3, 1e-5,
                                      match="divisible"),
                           ErrorInput(f32(2, 4, 3), f32(3), None, 2, 4, 3, 2, 1e-5,
                                      match="weight")]),
    OpInfo("F.instance_norm", fn("instance_norm"), F_ONLY, instance_norm_samples,
           tol=HALF_TOL,
           errors=lambda: [ErrorInput(f32(2, 3, 1), match="more than 1 spatial")]),
    OpInfo("F.rms_norm", fn("rms_norm"), F_ONLY, rms_norm_samples, tol=HALF_TOL),
    OpInfo("F.local_response_norm", fn("local_response_norm"), ("float32", "float64"),
           local_response_norm_samples, other_dtypes_raise=False),

    # attention, similarity, distances
    OpInfo("F.scaled_dot_product_attention", seeded("scaled_dot_product_attention"), F_ONLY,
           sdpa_samples, tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2),
                              "float32": (1e-5, 1e-5)},
           errors=lambda: [ErrorInput(f32(1, 2, 2), f32(1, 2, 2), f32(1, 2, 2),
                                      attn_mask=T(np.ones((2, 2), bool), "bool"),
                                      is_causal=True, match="is_causal")]),
    OpInfo("F.cosine_similarity", fn("cosine_similarity"), F_ONLY, cosine_samples,
           tol=HALF_TOL),
    OpInfo("F.pairwise_distance", fn("pairwise_distance"), NO_BOOL, distance_samples,
           tol=HALF_TOL),
    OpInfo("F.normalize", fn("normalize"), F_ONLY, normalize_samples, tol=HALF_TOL),
    OpInfo("F.pdist", fn("pdist"), ("float32", "float64"),
           lambda dtype, rng: [Sample(make(rng, (4, 3), dtype)),
                               Sample(make(rng, (5, 2), dtype), p=1.0),
                               Sample(make(rng, (3, 4), dtype), p=3.0)],
           other_dtypes_raise=False),
    OpInfo("cdist", lambda m, *a, **kw: m.cdist(*a, **kw), ("float32", "float64"),
           cdist_samples, gradgrad=False,
           errors=lambda: [ErrorInput(f32(3), f32(3), match="at least 2D"),
                           ErrorInput(f32(3, 2), f32(3, 4), match="columns"),
                           ErrorInput(i64(3, 2), i64(3, 2), match="floating"),
                           ErrorInput(f32(3, 2), f32(3, 2), p=-1.0, match="non-negative")]),
    OpInfo("aten._cdist_forward", lambda m, *a: m.ops.aten._cdist_forward(*a),
           ("float32", "float64"),
           cdist_forward_samples, gradgrad=False),
    OpInfo("aten._cdist_backward", cdist_backward, ("float32", "float64"), cdist_backward_samples,
           gradcheck=False),
    OpInfo("torch.conv_tbc", lambda m, *a: m.conv_tbc(*a), ("float32", "float64"),
           lambda dtype, rng: [Sample(make(rng, (5, 2, 3), dtype), make(rng, (3, 3, 4), dtype),
                                      make(rng, (4,), dtype)),
                               Sample(make(rng, (4, 1, 2), dtype), make(rng, (2, 2, 3), dtype),
                                      make(rng, (3,), dtype), 1)],
           other_dtypes_raise=False,
           errors=lambda: [ErrorInput(f32(2, 3), f32(3, 3, 4), f32(4), match="3 dims"),
                           ErrorInput(f32(5, 2, 3), f32(3, 2, 4), f32(4), match="input channels"),
                           ErrorInput(f32(5, 2, 3), f32(3, 3, 4), f32(5), match="Bias size")]),
    OpInfo("_C._nn.thnn_conv2d", lambda m, *a, **kw: m._C._nn.thnn_conv2d(*a, **kw),
           ("float32", "float64"),
           lambda dtype, rng: [Sample(make(rng, (2, 3, 5, 6), dtype), make(rng, (4, 3, 2, 3), dtype),
                                      [2, 3], make(rng, (4,), dtype), stride=[2, 1], padding=1),
                               Sample(make(rng, (1, 2, 3, 3), dtype), make(rng, (2, 2, 2, 2), dtype),
                                      2, make(rng, (2,), dtype))],
           other_dtypes_raise=False,
           errors=lambda: [ErrorInput(f32(1, 1, 1, 1), f32(1, 1), [], match="2D kernel_size"),
                           ErrorInput(f32(1, 1, 1, 1), f32(1, 1), 1, stride=[], match="2D stride"),
                           ErrorInput(f32(2, 5, 5), f32(3, 2, 2, 2), 2, match="4D input")]),
    OpInfo("_C._nn.slow_conv3d", lambda m, *a, **kw: m._C._nn.slow_conv3d(*a, **kw),
           ("float32", "float64"),
           lambda dtype, rng: [Sample(make(rng, (1, 2, 4, 5, 4), dtype),
                                      make(rng, (3, 2, 2, 3, 2), dtype), [2, 3, 2], None,
                                      stride=2, padding=[1, 0, 1]),
                               Sample(make(rng, (1, 1, 2, 3, 2), dtype),
                                      make(rng, (2, 1, 2, 2, 1), dtype), [2, 2, 1])],
           other_dtypes_raise=False,
           errors=lambda: [ErrorInput(f32(1, 1, 1, 1, 0), f32(1, 0, 1), 1, match="weight tensor"),
                           ErrorInput(f32(0, 7, 9, 1, 5), f32(9, 1), [5, 5, 5], None, [5, 5, 5],
                                      [2 ** 62] * 3, match="Padding height too large"),
                           ErrorInput(f32(0, 7, 9, 1, 5), f32(9, 1), [2 ** 32] * 3, None,
                                      [5, 5, 5], [2 ** 31] * 3, match="product is too large"),
                           ErrorInput(f32(1, 0, 2, 2, 2), f32(1, 1, 1, 1, 1), 1,
                                      match="non-empty 5D input"),
                           ErrorInput(f32(1, 1, 2, 2, 2), f32(1, 1, 1, 1, 1), 1, padding=[],
                                      match="padding equals to 3")]),
    # the double backward of a convolution (stride 2, a 1-d one, and a grouped transposed
    # 2-d one), every result and with ggI / ggW / ggb missing (None)
    OpInfo("aten._convolution_double_backward", aten_op("_convolution_double_backward"),
           ("float32", "float64"),
           lambda dtype, rng: [
               Sample(make(rng, (2, 3, 6), dtype), make(rng, (3, 3, 3), dtype),
                      make(rng, (3,), dtype), make(rng, (2, 3, 3), dtype),
                      make(rng, (3, 3, 3), dtype), make(rng, (2, 3, 6), dtype), [2], [1], [1],
                      False, [0], 1, [True, True, True]),
               Sample(None, make(rng, (3, 3, 3), dtype), None, make(rng, (2, 3, 3), dtype),
                      make(rng, (3, 3, 3), dtype), make(rng, (2, 3, 6), dtype), [2], [1], [1],
                      False, [0], 1, [True, False, True]),
               Sample(make(rng, (2, 4, 3, 4), dtype), None, make(rng, (4,), dtype),
                      make(rng, (2, 4, 6, 6), dtype), make(rng, (4, 2, 2, 3), dtype),
                      make(rng, (2, 4, 3, 4), dtype), [2, 1], [0, 1], [1, 2], True, [0, 0], 2,
                      [True, True, True])],
           other_dtypes_raise=False, gradcheck=False),
    # a convolution's backward (a strided 1-d one, a grouped transposed 2-d one), with gradients
    # left out by output_mask (None; torch's transposed kernels compute them anyway)
    OpInfo("aten.convolution_backward", aten_op("convolution_backward"), ("float32", "float64"),
           lambda dtype, rng: [
               Sample(make(rng, (2, 3, 3), dtype), make(rng, (2, 3, 6), dtype),
                      make(rng, (3, 3, 3), dtype), [3], [2], [1], [1], False, [0], 1,
                      [True, True, True]),
               Sample(make(rng, (2, 3, 3), dtype), make(rng, (2, 3, 6), dtype),
                      make(rng, (3, 3, 3), dtype), None, [2], [1], [1], False, [0], 1,
                      [False, True, False]),
               Sample(make(rng, (2, 4, 6, 6), dtype), make(rng, (2, 4, 3, 4), dtype),
                      make(rng, (4, 2, 2, 3), dtype), [4], [2, 1], [0, 1], [1, 2], True,
                      [0, 0], 2, [True, True, True])],
           other_dtypes_raise=False, gradcheck=False),
    # torch-level forms
    OpInfo("grid_sampler", _SAMPLER[0], F_ONLY, _SAMPLER[1],
           tol={"float16": (5e-2, 5e-2), "bfloat16": (2e-1, 2e-1)}),
    OpInfo("grid_sampler_2d", _SAMPLER_2D[0], F_ONLY, _SAMPLER_2D[1],
           tol={"float16": (5e-2, 5e-2), "bfloat16": (2e-1, 2e-1)},
           errors=lambda: [ErrorInput(f32(1, 1, 3, 3, 3), f32(1, 2, 2, 2, 3), match="4D")]),
    OpInfo("grid_sampler_3d", _SAMPLER_3D[0], F_ONLY, _SAMPLER_3D[1], gradcheck=False,
           tol={"float16": (5e-2, 5e-2), "bfloat16": (2e-1, 2e-1)},
           errors=lambda: [ErrorInput(f32(1, 1, 3, 3), f32(1, 2, 2, 2), match="5D")]),
    OpInfo("affine_grid_generator", lambda m, *a: m.affine_grid_generator(*a), F_ONLY,
           affine_grid_generator_samples, tol=HALF_TOL, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(f32(2, 2, 3), [2, 1, 3], False, match="4d"),
                           ErrorInput(f32(3, 2, 3), [2, 1, 3, 4], False, match="batch2")]),
    OpInfo("embedding_bag", torch_embedding_bag, F_ONLY, torch_embedding_bag_samples,
           tol=HALF_TOL, other_dtypes_raise=False, gradcheck=False),
    *[OpInfo(label, recurrent(name, **kw)[0], ("float32", "float64"), recurrent(name, **kw)[1],
             gradcheck=False, other_dtypes_raise=False)
      for label, name, kw in [
          ("lstm", "lstm", {}), ("lstm.bidirectional_2layers", "lstm",
                                 dict(num_layers=2, bidirectional=True)),
          ("lstm.packed", "lstm", dict(packed=True)), ("gru", "gru", dict(batch_first=True)),
          ("gru.packed_no_bias", "gru", dict(packed=True, has_biases=False)),
          ("rnn_tanh", "rnn_tanh", dict(bidirectional=True)),
          ("rnn_relu", "rnn_relu", dict(num_layers=2))]],
    *[OpInfo(name, cell(name)[0], ("float32", "float64"), cell(name)[1],
             errors=cell_errors(name), other_dtypes_raise=False, gradcheck=False)
      for name in ("lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell")],
    OpInfo("F.grouped_mm", fn("grouped_mm"), ("float32", "bfloat16", "float16"),
           grouped_mm_samples, tol=HALF_TOL, gradcheck=False, grad=False,
           errors=grouped_mm_errors),
]
