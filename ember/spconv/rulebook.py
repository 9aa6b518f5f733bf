"""The rulebook of a sparse convolution: for every kernel offset, which input rows feed which
output rows (spconv's `get_indice_pairs`), found by hashing the active coordinates.

Note [The rulebook]
~~~~~~~~~~~~~~~~~~~
A sparse tensor keeps only its active sites: `indices` (N, 1 + ndim) rows of (batch, z, y, x)
and `features` (N, C). A convolution over it is a sum over kernel offsets k of
`W_k @ x[input site]` added into `y[output site]`, for the pairs of sites that offset k connects.
The rulebook lists those pairs once, so that the compute is a gather, a matmul and a
scatter-add per offset (ops.py), and so that layers sharing an `indice_key` (and the inverse
convolution) reuse it:

    indice_pairs     int32 (2, kernel_volume, N_in): [0, k, :n_k] input rows, [1, k, :n_k] the
                     output rows they feed through offset k; the rest of each row is -1
    indice_pair_num  int32 (kernel_volume,): n_k

Offsets are numbered in (z, y, x) order, the order of the weight's kernel axes (KRSC,
`[out, kz, ky, kx, in]`), and the convolution is a cross-correlation like nn.Conv3d's: output
site q reads input site `q * stride - padding + k * dilation`.

Finding pairs is a lookup "is this coordinate active, and which row is it?". Instead of a hash
table probed point by point, every site becomes one integer key (its row-major position in the
(batch, *spatial_shape) grid); the input keys are sorted once, and all kernel_volume x N
queries are answered together by `np.searchsorted` into them. No Python loop runs over points.

A 2-D example: a 4x4 grid with three active sites, kernel 3x3, offsets k = 0..8 from
(dy, dx) = (-1, -1) to (1, 1); the key of (y, x) is 4y + x.

          x=0 x=1 x=2 x=3         row  site   key
    y=0    .   a   .   .           0   (0,1)    1     sorted keys [1, 5, 11]
    y=1    .   b   .   .           1   (1,1)    5
    y=2    .   .   .   c           2   (2,3)   11
    y=3    .   .   .   .

Submanifold convolution (SubMConv2d): outputs are exactly the input sites, and output q reads
q + (dy, dx). For k = 1, (dy, dx) = (-1, 0): a asks for (-1,1) (outside the grid), b asks for
(0,1) = key 1, found at row 0, c asks for (1,3) = key 7, not found (searchsorted lands on 11).
All offsets together:

    k      0  1  2  3  4        5  6  7  8
    pairs  -  a->b  -  -  a->a  -  -  b->a  -
                          b->b
                          c->c
    indice_pair_num = [0, 1, 0, 0, 3, 0, 0, 1, 0]

(`a->b` is the pair (input row 0, output row 1).) The centre offset pairs every site with
itself, in row order; ops.py uses that to skip its gather and scatter. c has no active
neighbour, so its output sees only its own input: the sparsity pattern never dilates, which is
why deep stacks of submanifold convolutions stay sparse.

Regular convolution (SparseConv2d, stride 2, padding 1, output 2x2): input site p feeds output
q = (p + padding - k) / stride through offset k when that division is exact and q is inside
the output grid. a = (0,1) reaches (0,0) via k = (1,2) and (0,1) via k = (1,0); b reaches all
four outputs; c = (2,3) reaches (1,1) via k = (1,2). The output sites are the distinct keys
reached (np.unique also gives each pair its output row), here all four:

          x=0 x=1
    y=0    o   o        indice_pair_num = [1, 0, 1, 1, 0, 2, 1, 0, 1]
    y=1    o   o

A transposed convolution (SparseConvTranspose) runs the same mapping the other way,
q = p * stride - padding + k * dilation. The inverse convolution builds no rulebook at all: it
takes the forward convolution's (stored under its `indice_key`) with the roles of the rows
swapped, so its outputs are exactly the forward convolution's input sites.
"""
import numpy as np

import ember


def get_conv_output_size(input_size, kernel_size, stride, padding, dilation):
    """The output grid of a strided convolution, as nn.Conv3d computes it."""
    return [(i + 2 * p - d * (k - 1) - 1) // s + 1
            for i, k, s, p, d in zip(input_size, kernel_size, stride, padding, dilation)]


def get_deconv_output_size(input_size, kernel_size, stride, padding, dilation, output_padding):
    """The output grid of a transposed convolution, as nn.ConvTranspose3d computes it."""
    return [(i - 1) * s - 2 * p + d * (k - 1) + op + 1
            for i, k, s, p, d, op in zip(input_size, kernel_size, stride, padding, dilation,
                                         output_padding)]


def kernel_offsets(kernel_size):
    """(kernel_volume, ndim) kernel positions in (z, y, x) order: row k is offset k."""
    return np.indices(kernel_size).reshape(len(kernel_size), -1).T


def linear_keys(batch, coords, shape):
    """Row-major position of each (batch, *coords) in the grid (batch_size, *shape), as int64."""
    key = batch.astype(np.int64)
    for axis, size in enumerate(shape):
        key = key * size + coords[..., axis]
    return key


def _check_indices(indices, batch_size, spatial_shape):
    """The (N, 1 + ndim) int array of active sites, checked: in the grid, no site twice."""
    ndim = len(spatial_shape)
    if indices.dim() != 2 or indices.shape[1] != ndim + 1:
        raise ValueError(f"indices must have shape [N, {ndim + 1}] (batch index, then {ndim} "
                         f"coordinates) for spatial_shape {list(spatial_shape)}, got "
                         f"{list(indices.shape)}")
    ind = indices.numpy(force=True).astype(np.int64, copy=False)
    upper = np.array([batch_size, *spatial_shape])
    bad = ((ind < 0) | (ind >= upper)).any(axis=1)
    if bad.any():
        raise ValueError(f"index {ind[bad][0].tolist()} lies outside the grid [batch_size, "
                         f"*spatial_shape] = {upper.tolist()}")
    return ind


def _pack(kernel_volume, n_in, offset, in_row, out_row):
    """Lay the pairs (offset, in_row, out_row) out as spconv does: per offset, its pairs first,
    in the order given, then -1."""
    order = np.argsort(offset, kind="stable")
    offset, in_row, out_row = offset[order], in_row[order], out_row[order]
    counts = np.bincount(offset, minlength=kernel_volume)
    slot = np.arange(offset.size) - np.repeat(np.cumsum(counts) - counts, counts)
    pairs = np.full((2, kernel_volume, n_in), -1, dtype=np.int32)
    pairs[0, offset, slot] = in_row
    pairs[1, offset, slot] = out_row
    return pairs, counts.astype(np.int32)


def get_indice_pairs(indices, batch_size, spatial_shape, algo=None, ksize=3, stride=1,
                     padding=0, dilation=1, out_padding=0, subm=False, transpose=False):
    """The rulebook of one convolution (see Note [The rulebook]): returns
    `(out_indices, indice_pairs, indice_pair_num)`, int32 tensors. `algo` is accepted for
    spconv's signature; every algorithm uses this rulebook here."""
    ndim = len(spatial_shape)
    ksize, stride, padding, dilation, out_padding = (
        _expand(ndim, v) for v in (ksize, stride, padding, dilation, out_padding))
    ind = _check_indices(indices, batch_size, spatial_shape)
    batch, coords = ind[:, 0], ind[:, 1:]
    offsets = kernel_offsets(ksize)
    kernel_volume, n_in = len(offsets), len(ind)
    if subm:
        if any(k % 2 == 0 for k in ksize):
            raise ValueError(f"submanifold convolution needs an odd kernel_size (the output "
                             f"site is the kernel's centre), got {ksize}")
        out_shape = list(spatial_shape)
    elif transpose:
        out_shape = get_deconv_output_size(spatial_shape, ksize, stride, padding, dilation,
                                           out_padding)
    else:
        out_shape = get_conv_output_size(spatial_shape, ksize, stride, padding, dilation)
    if any(s <= 0 for s in out_shape):
        raise ValueError(f"the output spatial shape {out_shape} is empty: input spatial shape "
                         f"{list(spatial_shape)}, kernel_size {ksize}, stride {stride}, "
                         f"padding {padding}, dilation {dilation}")
    if batch_size * np.prod(out_shape, dtype=np.float64) >= 2 ** 62:
        raise ValueError(f"the grid [{batch_size}, *{out_shape}] has too many sites for "
                         f"int64 keys")

    in_keys = linear_keys(batch, coords, spatial_shape)
    sorter = np.argsort(in_keys, kind="stable")
    sorted_keys = in_keys[sorter]
    if n_in > 1 and (sorted_keys[1:] == sorted_keys[:-1]).any():
        dup = sorted_keys[1:][sorted_keys[1:] == sorted_keys[:-1]][0]
        raise ValueError(f"indices hold the site "
                         f"{np.unravel_index(dup, [batch_size, *spatial_shape])} more than once")

    if subm:
        # output q reads q + (k - centre) * dilation; look those coordinates up among the inputs
        shift = (offsets - np.array(ksize) // 2) * np.array(dilation)        # (K, ndim)
        wanted = coords[None, :, :] + shift[:, None, :]                     # (K, N, ndim)
        inside = ((wanted >= 0) & (wanted < np.array(spatial_shape))).all(axis=2)
        keys = linear_keys(batch[None, :], wanted, spatial_shape)
        pos = np.minimum(np.searchsorted(sorted_keys, keys), max(n_in - 1, 0))
        found = inside & (sorted_keys[pos] == keys) if n_in else inside
        offset, out_row = np.nonzero(found)
        in_row = sorter[pos[offset, out_row]]
        out_indices = indices
    else:
        if transpose:   # input p feeds q = p * stride - padding + k * dilation
            reach = (coords[None] * np.array(stride) - np.array(padding)
                     + (offsets * np.array(dilation))[:, None, :])
            exact = np.ones(reach.shape[:2], dtype=bool)
        else:           # input p feeds q when q * stride = p + padding - k * dilation
            num = (coords[None] + np.array(padding)
                   - (offsets * np.array(dilation))[:, None, :])
            exact = (num % np.array(stride) == 0).all(axis=2)
            reach = num // np.array(stride)
        valid = exact & ((reach >= 0) & (reach < np.array(out_shape))).all(axis=2)
        offset, in_row = np.nonzero(valid)
        out_keys = linear_keys(batch[in_row], reach[offset, in_row], out_shape)
        unique_keys, out_row = np.unique(out_keys, return_inverse=True)
        if unique_keys.size == 0 and n_in:
            raise ValueError(f"no output site is active: every input point vanished "
                             f"(input spatial shape {list(spatial_shape)}, kernel_size "
                             f"{ksize}, stride {stride}, padding {padding}, dilation "
                             f"{dilation})")
        out_np = np.stack(np.unravel_index(unique_keys, [batch_size, *out_shape]), axis=1)
        out_indices = ember.from_numpy(out_np.astype(np.int32).reshape(-1, ndim + 1))
    pairs, counts = _pack(kernel_volume, n_in, offset, in_row, out_row.reshape(-1))
    return out_indices, ember.from_numpy(pairs), ember.from_numpy(counts)


def _expand(ndim, value):
    """An int or a sequence as a list of ndim ints (spconv's expand_nd)."""
    if isinstance(value, (int, np.integer)):
        return [int(value)] * ndim
    value = [int(v) for v in value]
    if len(value) != ndim:
        raise ValueError(f"expected {ndim} values (one per spatial dimension), got {value}")
    return value
