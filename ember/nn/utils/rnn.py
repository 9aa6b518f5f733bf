"""torch.nn.utils.rnn: PackedSequence and the functions that pack, pad and unpad batches of
variable-length sequences.

A PackedSequence stores a batch of sequences, sorted longest first, time step by time step:
`data` holds step 0 of every sequence, then step 1 of every sequence still running, and so on;
`batch_sizes[t]` says how many sequences are still running at step t. The recurrent layers
read this layout directly, so padding is never computed. `sorted_indices` records the sort
(sorted position -> original column) and `unsorted_indices` its inverse.

Packing and padding are both row gathers: each output row either copies one input row or is
padding. `_gather_rows` does that with one `index_select` on the data with a padding row
appended, so gradients flow back through ordinary autograd.
"""
from typing import NamedTuple

import numpy as np

from ..._core import dtype as D
from ... import _refs as E
from ..._core.tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor = None
    unsorted_indices: Tensor = None


def _bind(optional, fn):
    return None if optional is None else fn(optional)


def _cast_to(dtype, name):
    """A PackedSequence method `name()` that returns `self.to(dtype=dtype)`."""
    def cast(self):
        return self.to(dtype=dtype)
    cast.__name__ = name
    cast.__qualname__ = f"PackedSequence.{name}"
    return cast


class PackedSequence(PackedSequence_):
    """The four fields of a packed batch (see the module docstring). Build one with
    `pack_padded_sequence` or `pack_sequence` rather than by hand."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence "
                             "should never be created manually. They should be instantiated by "
                             "functions like pack_sequence and pack_padded_sequences in "
                             "nn.utils.rnn.")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def pin_memory(self):
        """data and the index tensors in pinned memory (batch_sizes is never moved)."""
        def pin(t):
            return t.pin_memory()
        return type(self)(pin(self.data), self.batch_sizes, _bind(self.sorted_indices, pin),
                          _bind(self.unsorted_indices, pin))

    def is_pinned(self):
        return self.data.is_pinned()

    def to(self, *args, **kwargs):
        """`data.to(...)`; the index tensors follow data's device, batch_sizes stays on CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        non_blocking = kwargs.get("non_blocking", False)

        def follow(t):
            return t.to(data.device, non_blocking=non_blocking)
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, follow),
                          _bind(self.unsorted_indices, follow))

    def cpu(self, *args, **kwargs):
        return self.to("cpu", *args, **kwargs)

    def cuda(self, *args, **kwargs):
        return self.to("cuda", *args, **kwargs)

    double = _cast_to(D.float64, "double")
    float = _cast_to(D.float32, "float")
    half = _cast_to(D.float16, "half")
    long = _cast_to(D.int64, "long")
    int = _cast_to(D.int32, "int")
    short = _cast_to(D.int16, "short")
    char = _cast_to(D.int8, "char")
    byte = _cast_to(D.uint8, "byte")

    @property
    def is_cuda(self):
        return self.data.is_cuda


def invert_permutation(permutation):
    if permutation is None:
        return None
    output = E.empty_like(permutation)
    output.scatter_(0, permutation, E.arange(0, permutation.numel(), device=permutation.device))
    return output


def _gather_rows(data, index, padding_value):
    """Rows of `data` picked by the integer array `index` (any shape), with -1 meaning a row
    of `padding_value`; the result has shape index.shape + data.shape[1:]."""
    feature_shape = tuple(data.shape[1:])
    pad = E.full((1,) + feature_shape, padding_value, dtype=data.dtype, device=data.device)
    rows = np.where(index < 0, data.shape[0], index).reshape(-1)
    picked = E.cat([data, pad]).index_select(0, E.as_tensor(rows, device=data.device))
    return picked.reshape(index.shape + feature_shape)


def _lengths_array(lengths):
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.dim()}D {lengths.device.type} Long tensor")
        return lengths.to(dtype=D.int64).numpy(force=True)
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def _batch_sizes_of(lengths):
    """batch_sizes[t] = how many of the (decreasing) lengths exceed t."""
    return (lengths[None, :] > np.arange(lengths[0])[:, None]).sum(1)


def _packed_offsets(batch_sizes):
    return np.concatenate([[0], np.cumsum(batch_sizes)[:-1]])


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded (T, B, *) batch (or (B, T, *) with batch_first) whose column b holds a
    sequence of lengths[b] steps. With enforce_sorted the lengths must already decrease;
    otherwise the batch is sorted here and the permutation kept in the result."""
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    lengths = _lengths_array(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        sorted_indices = E.as_tensor(order, device=input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else input.shape[:2]
    if len(lengths) != batch:
        raise RuntimeError("Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if np.any(np.diff(lengths) > 0):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if lengths[0] > steps:
        raise RuntimeError(f"pack_padded_sequence: a length of {lengths[0]} exceeds the "
                           f"{steps} time steps of the padded input")
    batch_sizes = _batch_sizes_of(lengths)
    time = np.repeat(np.arange(len(batch_sizes)), batch_sizes)
    column = np.arange(len(time)) - np.repeat(_packed_offsets(batch_sizes), batch_sizes)
    flat = column * steps + time if batch_first else time * batch + column
    data = input.reshape((steps * batch,) + tuple(input.shape[2:]))
    data = _gather_rows(data, flat, 0)
    return PackedSequence(data, E.as_tensor(batch_sizes.astype(np.int64)), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: (padded batch in the original column order, lengths)."""
    batch_sizes = sequence.batch_sizes.numpy(force=True)
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_seq_length}")
        max_seq_length = total_length
    batch = int(batch_sizes[0])
    order = np.arange(batch) if sequence.unsorted_indices is None \
        else sequence.unsorted_indices.numpy(force=True)
    running = np.pad(batch_sizes, (0, max_seq_length - len(batch_sizes)))[:, None]
    offsets = np.pad(_packed_offsets(batch_sizes), (0, max_seq_length - len(batch_sizes)))
    index = np.where(order[None, :] < running, offsets[:, None] + order[None, :], -1)
    if batch_first:
        index = index.T
    lengths = (np.arange(batch)[:, None] < batch_sizes[None, :]).sum(1)[order]
    return (_gather_rows(sequence.data, index, padding_value),
            E.as_tensor(lengths.astype(np.int64)))


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of shapes (L_i, *) into (max L, B, *) (or (B, max L, *) with
    batch_first), filling the rest with padding_value on the right or on the left."""
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    try:
        sequences = tuple(sequences)
    except TypeError:
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}") from None
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    first = sequences[0]
    if first.dim() == 0:
        raise RuntimeError("pad_sequence: sequences must have at least one dimension")
    for seq in sequences[1:]:
        for d in range(1, max(first.dim(), seq.dim())):
            a = first.shape[d] if d < first.dim() else None
            b = seq.shape[d] if d < seq.dim() else None
            if a != b:
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor "
                                   f"b ({b}) at non-singleton dimension {d}")
    lengths = np.array([s.shape[0] for s in sequences], dtype=np.int64)
    max_len = int(lengths.max())
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    time = np.arange(max_len)[:, None]
    if padding_side == "left":
        time = time - (max_len - lengths)[None, :]
    index = np.where((time >= 0) & (time < lengths[None, :]), starts[None, :] + time, -1)
    if batch_first:
        index = index.T
    data = E.cat([s.to(first.dtype) for s in sequences])
    return _gather_rows(data, index, padding_value)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences in a padded batch, each cut to its length (right padding)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(length)] for seq, length in zip(padded_sequences, _lengths_array(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    lengths = E.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
