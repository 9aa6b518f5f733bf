"""torch.testing._internal.custom_op_db: custom ops (in the `_torch_testing` namespace)
written with NumPy kernels, that PyTorch's tests of torch.library call: a data-dependent
output shape (numpy_nonzero), several outputs with a backward (numpy_cube), a SymInt list
argument (numpy_view_copy)."""
import numpy as np

from ... import library
from ..._core.tensor import Tensor
from ... import int64, tensor as _tensor

custom_op_db = []   # PyTorch's OpInfos for these ops; ember's opcheck tests call the ops directly


def _to_numpy(t):
    return t.detach().cpu().numpy()


@library.custom_op("_torch_testing::numpy_nonzero", mutates_args=())
def numpy_nonzero(x: Tensor) -> Tensor:
    return _tensor(np.stack(np.nonzero(_to_numpy(x)), axis=1), device=x.device)


@numpy_nonzero.register_fake
def _(x):
    ctx = library.get_ctx()   # the number of nonzeros depends on the data
    return x.new_empty([ctx.new_dynamic_size(), x.dim()], dtype=int64)


@library.custom_op("_torch_testing::numpy_cube", mutates_args=())
def numpy_cube(x: Tensor) -> tuple[Tensor, Tensor]:
    x_np = _to_numpy(x)
    return _tensor(x_np ** 3, device=x.device), _tensor(3 * x_np ** 2, device=x.device)


@numpy_cube.register_fake
def _(x):
    return x.clone(), x.clone()


def _cube_setup_context(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], output[1])


def _cube_backward(ctx, grad_out, grad_dx):
    x, dx = ctx.saved_tensors
    return grad_out * dx + grad_dx * 6 * x


numpy_cube.register_autograd(_cube_backward, setup_context=_cube_setup_context)


@library.custom_op("_torch_testing::numpy_view_copy", mutates_args=())
def numpy_view_copy(x: Tensor, shape: list[int]) -> Tensor:
    return _tensor(np.copy(_to_numpy(x).reshape(shape)), device=x.device)


@numpy_view_copy.register_fake
def _(x, shape):
    return x.clone().view(shape).clone()
