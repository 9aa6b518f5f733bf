"""How tensors and storages pickle when they cross a process boundary (ForkingPickler reductions).

`multiprocessing` pickles everything it sends (queue items, a spawned process's arguments) with
`ForkingPickler`, which looks types up in its own table before `__reduce_ex__`. `init_reductions`
registers ember's types there, as torch.multiprocessing does for torch's: a tensor travels as its
metadata plus its storage; a storage is moved into shared memory (see shared_memory.py) and travels
as the descriptor of its memory file, wrapped in `DupFd` (passed to a process being spawned, or
fetched from the sender's resource-sharer thread otherwise). Nothing is copied: the receiver maps
the very same pages.
"""
from multiprocessing import reduction

from .._core.storage import UntypedStorage
from .._core.tensor import Tensor, _meta
from .shared_memory import segment_of, share_storage, share_tensor_storage, storage_from_fd
from .shared_memory import tensor_over


def rebuild_tensor(cls, storage, dtype, offset, size, stride, requires_grad):
    t = tensor_over(storage, dtype, offset, size, stride)
    if cls is not Tensor:  # nn.Parameter
        return cls(t, requires_grad)
    t.requires_grad = requires_grad
    return t


def rebuild_meta_tensor(cls, dtype, offset, size, stride, requires_grad):
    t = _meta(size, dtype, stride, offset)
    if cls is not Tensor:
        return cls(t, requires_grad)
    t.requires_grad = requires_grad
    return t


def reduce_tensor(tensor):
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the queue).")
    metadata = (tensor.dtype, tensor.storage_offset(), tuple(tensor.shape), tensor.stride(),
                tensor.requires_grad)
    if tensor.device.type == "meta":
        return rebuild_meta_tensor, (type(tensor),) + metadata
    share_tensor_storage(tensor)
    return rebuild_tensor, (type(tensor), tensor.untyped_storage()) + metadata


def rebuild_storage_fd(df, nbytes):
    return storage_from_fd(df.detach(), nbytes)


def reduce_storage(storage):
    if storage.device.type == "meta":
        raise RuntimeError("Cannot pickle meta storage; try pickling a meta tensor instead")
    share_storage(storage)
    return rebuild_storage_fd, (reduction.DupFd(segment_of(storage).fd), storage.nbytes())


def init_reductions():
    from ..nn.parameter import Parameter
    reduction.register(UntypedStorage, reduce_storage)
    reduction.register(Tensor, reduce_tensor)
    reduction.register(Parameter, reduce_tensor)
