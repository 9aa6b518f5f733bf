"""torch._C._functorch: the helpers PyTorch's functorch exposes from C++ that ember has --
moving a dim into or out of a neighbour (reshape_dim_into / reshape_dim_outof) and reading a
BatchedTensor's level and batch dim, the transform kinds, wrapping a tensor as batched."""
import enum

from .._core.tensor import _wrap_dim
from .._core.grad_mode import _grad_state
from .._functorch.vmap import BatchedTensor, _wrap, push_level, pop_level


def reshape_dim_into(src, dst, x):
    """Merge dim `src` of `x` into dim `dst` of the result (which has one dim fewer): `src`
    becomes the outer factor of that dim."""
    src = _wrap_dim(src, x.dim())
    dst = _wrap_dim(dst, x.dim() - 1)
    shape = list(x.shape)
    n = shape.pop(src)
    shape[dst] *= n
    return x.movedim(src, dst).reshape(shape)


def reshape_dim_outof(src, size1, x):
    """Split dim `src` of `x` into (size1, the rest); a dim of size 0 splits into (size1, 0)."""
    src = _wrap_dim(src, x.dim())
    shape = list(x.shape)
    n = shape[src]
    shape[src:src + 1] = [size1, n // size1 if n else 0]
    return x.reshape(shape)


def is_batchedtensor(t):
    return type(t) is BatchedTensor


def maybe_get_level(t):
    return t._level if type(t) is BatchedTensor else -1


def maybe_get_bdim(t):
    return t._bdim if type(t) is BatchedTensor else -1


def _unwrap_batched(t, level):
    """(physical tensor, batch dim) of `t` batched at `level`, else (t, None)."""
    if type(t) is BatchedTensor and t._level == level:
        return t._value, t._bdim
    return t, None


class TransformType(enum.Enum):
    """The kinds of functorch transform (PyTorch's interpreters)."""
    Torch = 0
    Vmap = 1
    Grad = 2
    Jvp = 3
    Functionalize = 4


def get_unwrapped(t):
    """The tensor a BatchedTensor wraps (one level)."""
    if type(t) is not BatchedTensor:
        raise RuntimeError("get_unwrapped: expected a functorch wrapped tensor")
    return t._value


def is_functorch_wrapped_tensor(t):
    return type(t) is BatchedTensor


def _add_batch_dim(t, bdim, level):
    """`t` as a BatchedTensor of vmap `level` whose batch dim is `bdim` of `t`."""
    return _wrap(t, bdim + t.dim() if bdim < 0 else bdim, level)


# ---- the transform stack entered by hand (PyTorch's DynamicLayer stack API) ---------------------
# Each *_increment_nesting pushes a layer that the matching *_decrement_nesting (or
# pop_dynamic_layer_stack_and_undo_to_depth) pops. A vmap layer is a real vmap level; ember's
# grad and jvp have no levels of their own, so theirs only count as a running transform (which
# is what code below functorch asks: requires_grad_ is refused inside one, as in PyTorch).
_manual_layers = []


def get_dynamic_layer_stack_depth():
    return _grad_state.transforms


def _push_layer(kind):
    _grad_state.transforms += 1
    _manual_layers.append(kind)
    return _grad_state.transforms


def _pop_layer(kind):
    if not _manual_layers or _manual_layers[-1] != kind:
        raise RuntimeError(f"{kind}_decrement_nesting: the innermost transform is not a {kind} "
                           "entered by _" + kind + "_increment_nesting")
    _manual_layers.pop()
    if kind == "vmap":
        pop_level()
    else:
        _grad_state.transforms -= 1
    return _grad_state.transforms + 1


def _vmap_increment_nesting(batch_size, randomness):
    _manual_layers.append("vmap")
    return push_level(batch_size, randomness)


def _vmap_decrement_nesting():
    return _pop_layer("vmap")


def _grad_increment_nesting():
    return _push_layer("grad")


def _grad_decrement_nesting():
    return _pop_layer("grad")


def _jvp_increment_nesting():
    return _push_layer("jvp")


def _jvp_decrement_nesting():
    return _pop_layer("jvp")


def pop_dynamic_layer_stack_and_undo_to_depth(depth):
    """Pop the layers entered by hand until the stack is `depth` deep."""
    while _grad_state.transforms > depth and _manual_layers:
        _pop_layer(_manual_layers[-1])
