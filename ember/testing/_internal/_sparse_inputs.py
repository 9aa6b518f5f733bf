"""TestCase.generate_simple_inputs: small tensors that every layout (strided, COO, CSR, CSC,
BSR, BSC) can hold, the same mathematical tensor in each, as PyTorch's sparse tests use them.

A tensor starts as an integer *pattern*: a matrix (or a batch of matrices) whose nonzero
elements are the specified ones. Its specified elements get the values 1, 2, 3, ... in row-major
order (counted per matrix of a batch), and each layout's indices are read off the pattern:

    pattern      strided values   COO (indices; values)    CSR (crow; col; values)
    [[1, 2, 0],  [[1, 2, 0],      [[0, 0, 1, 1],           [0, 2, 4]; [0, 1, 0, 2];
     [1, 0, 3]]   [3, 0, 4]]       [0, 1, 0, 2]]; 1..4      1..4

CSC walks the transposed pattern (its values are the strided values read column by column).
The block layouts treat each block of the given block size that holds a specified element as
one specified block: their indices are the CSR/CSC indices of the block pattern, their values
the blocks of the strided values (BSC's blocks are BSR's reordered column by column).

A hybrid tensor replaces each value v by a dense block of the given dense size holding
v + i_1 + 10 i_2 + 100 i_3 + ... at position (i_1, i_2, ...): distinct values, recognizable by
eye. Each pattern is yielded contiguous, then (for batches) with non-contiguous indices, and
with non-contiguous values; zero-sized tensors come last."""
import numpy as np

import ember

# (pattern, block sizes, dense sizes): a 2 x 3 matrix; a 2 x 3 batch of them; a matrix with a
# non-trivial block size; a batch whose matrices hold different numbers of elements (yielded
# only when asked: its compressed indices cannot be stacked).
_PATTERNS = (
    ([[1, 2, 0],
      [1, 0, 3]], [(2, 1), (1, 3)], [(), (2,), (4, 5)]),
    ([[[[1, 2, 0], [1, 0, 3]], [[1, 2, 3], [1, 0, 0]], [[1, 0, 0], [1, 2, 3]]],
      [[[0, 2, 0], [1, 2, 3]], [[1, 0, 3], [1, 2, 0]], [[1, 2, 3], [0, 2, 0]]]],
     [(2, 1), (2, 3)], [(), (2,)]),
    ([[0, 1, 0, 2, 0, 2],
      [0, 1, 0, 0, 2, 0],
      [3, 3, 3, 0, 0, 0],
      [0, 0, 0, 0, 0, 0],
      [0, 5, 0, 6, 6, 6],
      [5, 0, 5, 6, 6, 6],
      [0, 0, 0, 0, 8, 8],
      [7, 7, 7, 0, 8, 8]], [(2, 3)], [(), (4, 5)]),
    ([[[1, 2], [3, 4]], [[1, 0], [0, 0]]], [(1, 1)], "variable nse"),
)

# (base size, block sizes, dense sizes) of the zero-sized tensors; the hybrid ones' dense sizes
# are dropped when hybrids are not wanted
_ZERO_SIZED = (((2, 0), [(1, 2)], [(), (2,), (2, 3)]),
               ((0, 2), [(1, 2), (2, 1), (3, 2)], [()]),
               ((0, 0), [(1, 2)], [()]))

_COMPRESSED = (ember.sparse_csr, ember.sparse_csc, ember.sparse_bsr, ember.sparse_bsc)


def _compressed(rows, cols, nrows):
    """(compressed indices, plain indices) of the elements at (rows, cols), sorted by row."""
    counts = np.bincount(rows, minlength=nrows)
    return np.concatenate(([0], np.cumsum(counts))).astype(np.int64), cols


def _matrix_data(pattern):
    """Each layout's (indices..., values) arrays of a non-block matrix pattern."""
    rows, cols = np.nonzero(pattern)
    strided = np.zeros(pattern.shape, np.int64)
    strided[rows, cols] = np.arange(1, rows.size + 1)
    rows_t, cols_t = np.nonzero(pattern.T)
    return {ember.strided: (strided,),
            ember.sparse_coo: (np.stack([rows, cols]), strided[rows, cols]),
            ember.sparse_csr: (*_compressed(rows, cols, pattern.shape[0]), strided[rows, cols]),
            ember.sparse_csc: (*_compressed(rows_t, cols_t, pattern.shape[1]),
                               strided.T[rows_t, cols_t])}


def _block_matrix_data(pattern, blocksize):
    """_matrix_data plus the block layouts' arrays for `blocksize`."""
    data = _matrix_data(pattern)
    (m, n), (bm, bn) = pattern.shape, blocksize
    assert m % bm == 0 and n % bn == 0, (pattern.shape, blocksize)
    blocks = pattern.reshape(m // bm, bm, n // bn, bn).swapaxes(1, 2).any(axis=(2, 3))
    block_data = _matrix_data(blocks)
    strided = data[ember.strided][0]
    block_rows, block_cols = block_data[ember.sparse_coo][0]
    bsr_values = np.stack([strided[i * bm:(i + 1) * bm, j * bn:(j + 1) * bn]
                           for i, j in zip(block_rows, block_cols)]) if block_rows.size else \
        np.zeros((0, bm, bn), np.int64)
    # a block's CSC "value" is its position in BSR order plus one
    bsc_values = bsr_values[block_data[ember.sparse_csc][2] - 1]
    data[ember.sparse_bsr] = (*block_data[ember.sparse_csr][:2], bsr_values)
    data[ember.sparse_bsc] = (*block_data[ember.sparse_csc][:2], bsc_values)
    return data


def _batch_data(pattern, blocksize):
    """Each layout's arrays of a pattern with any number of leading batch dims: COO takes the
    batch dims as leading sparse dims, the other layouts stack their arrays."""
    if pattern.ndim <= 2:
        return _block_matrix_data(pattern, blocksize)
    items = [_batch_data(p, blocksize) for p in pattern]
    out = {}
    for layout in items[0]:
        if layout is ember.sparse_coo:
            indices = [np.concatenate([np.full((1, d[layout][1].size), b, np.int64),
                                       d[layout][0]]) for b, d in enumerate(items)]
            out[layout] = (np.concatenate(indices, 1),
                           np.concatenate([d[layout][1] for d in items]))
        else:
            out[layout] = tuple(np.stack(arrays) for arrays in zip(*(d[layout] for d in items)))
    return out


def _hybrid_values(values, densesize):
    """Each value v as a dense block v + i_1 + 10 i_2 + ... (zero stays zero)."""
    if not densesize:
        return values
    offsets = np.zeros(densesize, np.int64)
    for k, n in enumerate(densesize):
        offsets = offsets + (np.arange(n) * 10 ** k).reshape((-1,) + (1,) * (len(densesize) - 1 - k))
    v = values.reshape(values.shape + (1,) * len(densesize))
    return np.where(v == 0, 0, v + offsets)


def _non_contiguous_copy(case, t, dim, offset):
    """A non-contiguous copy of t: every max(2, offset + 1)-th slot along dim of a larger
    zero tensor, starting at offset."""
    case.assertTrue(t.is_contiguous())
    dim = dim % t.ndim
    step = max(2, offset + 1)
    shape = (*t.shape[:dim], t.shape[dim] * step, *t.shape[dim + 1:])
    r = ember.zeros(shape, dtype=t.dtype, device=t.device)[
        (slice(None),) * dim + (slice(offset, None, step),)].copy_(t)
    case.assertFalse(r.is_contiguous())
    case.assertEqual(t, r)
    return r


def _zero_sized_arrays(layout, basesize, blocksize, densesize):
    """(indices..., values shape) of a zero-sized tensor in `layout`."""
    empty = np.zeros(0, np.int64)
    if layout is ember.strided:
        return (), basesize + densesize
    if layout is ember.sparse_coo:
        return (np.zeros((len(basesize), 0), np.int64),), (0, *densesize)
    compressed_dim = 0 if layout in (ember.sparse_csr, ember.sparse_bsr) else 1
    if layout in (ember.sparse_bsr, ember.sparse_bsc):
        n, values_shape = basesize[compressed_dim] // blocksize[compressed_dim], (0, *blocksize)
    else:
        n, values_shape = basesize[compressed_dim], (0,)
    return (np.zeros(n + 1, np.int64), empty), values_shape + densesize


def constructor_inputs(case, layout, device, dtype, index_dtype, pin_memory, enable_batch,
                       enable_hybrid, enable_zero_sized, enable_non_contiguous_indices,
                       enable_non_contiguous_values, enable_batch_variable_nse):
    """Yield (args, kwargs) of the constructor of `layout` (see the module docstring)."""
    def tensor(a, dt):
        return ember.tensor(a, dtype=dt, device=device)

    def kwargs_for(size):
        kwargs = dict(device=device, dtype=dtype, size=ember.Size(size))
        if pin_memory is not None:
            kwargs.update(pin_memory=pin_memory)
        return kwargs

    for pattern, blocksizes, densesizes in _PATTERNS:
        if densesizes == "variable nse":
            densesizes = [()] if enable_batch_variable_nse else []
        if not enable_hybrid:
            densesizes = [s for s in densesizes if not s]
        pattern = np.array(pattern, np.int64)
        if not densesizes or (not enable_batch and pattern.ndim > 2):
            continue
        for blocksize in blocksizes:
            data = _batch_data(pattern, blocksize)[layout]
            for densesize in densesizes:
                indices = [tensor(a, index_dtype) for a in data[:-1]]
                values = tensor(_hybrid_values(data[-1], densesize), ember.int64).to(dtype)
                kwargs = kwargs_for(pattern.shape + densesize)
                yield (*indices, values), dict(kwargs)
                if enable_non_contiguous_indices and pattern.ndim > 2:
                    # compressed indices can be sliced along batch dims only
                    for dim, offset in {(0, 1), (-2, 0)}:
                        indices_copy = [_non_contiguous_copy(case, a, dim, offset) for a in indices]
                        yield (*indices_copy, values), dict(kwargs)
                        if enable_non_contiguous_values:
                            values_copy = _non_contiguous_copy(case, values, -1, 1)
                            yield (*indices_copy, values_copy), dict(kwargs)
                if enable_non_contiguous_values:
                    values_copy = _non_contiguous_copy(case, values, -1, 1)
                    yield (*indices, values_copy), dict(kwargs)

    if not enable_zero_sized:
        return
    for basesize, blocksizes, densesizes in _ZERO_SIZED:
        for blocksize in blocksizes:
            for densesize in densesizes if enable_hybrid else [()]:
                indices, values_shape = _zero_sized_arrays(layout, basesize, blocksize,
                                                           densesize)
                values = ember.empty(values_shape, device=device, dtype=dtype)
                yield (*(tensor(a, index_dtype) for a in indices), values), \
                    kwargs_for(basesize + densesize)


def simple_inputs(case, layout, device=None, dtype=None, index_dtype=None, pin_memory=None,
                  members_pin_memory=None, enable_batch=True, enable_hybrid=True,
                  enable_zero_sized=True, enable_non_contiguous_indices=True,
                  enable_non_contiguous_values=True, enable_batch_variable_nse=False,
                  output_tensor=True, patterns=None):
    """TestCase.generate_simple_inputs: the inputs as tensors of `layout`, or (output_tensor
    False) as (args, kwargs) of its constructor."""
    if patterns is not None:
        raise NotImplementedError("generate_simple_inputs: custom patterns are not supported")
    inputs = constructor_inputs(case, layout, device, dtype,
                                ember.int64 if index_dtype is None else index_dtype,
                                pin_memory, enable_batch, enable_hybrid, enable_zero_sized,
                                enable_non_contiguous_indices, enable_non_contiguous_values,
                                enable_batch_variable_nse)
    if not output_tensor:
        yield from inputs
        return
    for args, kwargs in inputs:
        if members_pin_memory:
            args = tuple(a.pin_memory() for a in args)
        if layout is ember.strided:
            t = args[0].reshape(kwargs.pop("size"))
            yield t.pin_memory() if pin_memory else t
        elif layout is ember.sparse_coo:
            yield ember.sparse_coo_tensor(*args, **kwargs)
        elif layout in _COMPRESSED:
            yield ember.sparse_compressed_tensor(*args, layout=layout, **kwargs)
        else:
            raise AssertionError(f"unexpected layout {layout}")
