"""Whether a storage may grow (PyTorch's StorageImpl::resizable): a storage whose memory a NumPy
array shares (`torch.from_numpy`, `Tensor.numpy()`) is marked not resizable, so `resize_` past
its end raises instead of moving the tensor away from the array's memory."""
import weakref

NOT_RESIZABLE = weakref.WeakSet()


def mark_not_resizable(storage):
    NOT_RESIZABLE.add(storage)


def check_resizable(storage):
    if storage in NOT_RESIZABLE:
        raise RuntimeError("Trying to resize storage that is not resizable")
