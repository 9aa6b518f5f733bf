"""torch._subclasses.fake_utils: CrossRefFakeMode (each op run for real and on fakes, the
results' metadata compared) and `try_convert_fake_to_real`."""
from ..utils._python_dispatch import TorchDispatchMode
from .fake_tensor import FakeTensor, FakeTensorMode, MetadataMismatchError, _map_tensors

__all__ = ["CrossRefFakeMode", "try_convert_fake_to_real"]


def try_convert_fake_to_real(ten_list):
    """The real tensors the fakes in `ten_list` were made from (where they still live); other
    items as they are."""
    def real(t):
        if isinstance(t, FakeTensor):
            ref = getattr(t, "_real_ref", None)
            source = ref() if ref is not None else None
            if source is not None:
                return source
        return t
    return [real(t) for t in ten_list]


class CrossRefFakeMode(TorchDispatchMode):
    """Runs each op for real, then again on fakes of its inputs, and raises
    MetadataMismatchError when a fake result's shape, dtype or device (and strides, with
    `check_strides`) differs from the real one's. Returns the real results."""

    def __init__(self, ignore_op_fn=None, *, check_strides=True, check_aliasing=True,
                 only_check_ops_with_meta=True):
        super().__init__()
        self.ignore_op_fn = ignore_op_fn or (lambda op: False)
        self.check_strides = check_strides
        self.check_aliasing = check_aliasing

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        fake_out = None
        checked = not self.ignore_op_fn(func) and func.namespace == "aten" \
            and func._opname not in ("lift_fresh", "_tensor_from_data", "_local_scalar_dense")
        if checked:
            mode = FakeTensorMode(allow_non_fake_inputs=True)
            fake_args = _map_tensors(list(args), mode.from_tensor)
            fake_kwargs = {k: _map_tensors(v, mode.from_tensor) for k, v in kwargs.items()}
            with mode:
                fake_out = func(*fake_args, **fake_kwargs)
        out = func(*args, **kwargs)
        if checked:
            _compare(func, out, fake_out, self.check_strides)
        return out


def _compare(func, real, fake, check_strides):
    from .._prims_common import compare_tensor_meta
    from .._core.tensor import Tensor
    reals = real if isinstance(real, (list, tuple)) else [real]
    fakes = fake if isinstance(fake, (list, tuple)) else [fake]
    if len(reals) != len(fakes):
        raise MetadataMismatchError(f"{func}: {len(reals)} real results, {len(fakes)} fake")
    for i, (r, f) in enumerate(zip(reals, fakes)):
        if isinstance(r, Tensor) != isinstance(f, Tensor):
            raise MetadataMismatchError(f"{func}: output {i} is a tensor in one run only")
        if isinstance(r, Tensor):
            try:
                compare_tensor_meta(r, f, check_strides=check_strides)
            except (AssertionError, RuntimeError) as e:
                raise MetadataMismatchError(f"{func}: output {i}: {e}") from e
