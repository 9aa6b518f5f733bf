"""torch._subclasses.fake_tensor: PyTorch's FakeTensorMode runs ops on tensors that carry only
metadata (shape, dtype, device) for tracing. ember has no fake tensors -- its meta device
(`device="meta"`) is the metadata-only tensor -- so entering the mode raises; the name exists
so code that imports it loads."""

__all__ = ["FakeTensorMode", "UnsupportedOperatorException"]


class UnsupportedOperatorException(RuntimeError):
    """An op with no fake kernel was called under FakeTensorMode."""


class FakeTensorMode:
    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        raise NotImplementedError("FakeTensorMode: ember has no fake tensors; tensors on the "
                                  "meta device (device='meta') carry metadata only")

    def __exit__(self, *exc):
        return False
