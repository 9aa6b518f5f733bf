"""What every layer may ask of vmap: whether a vmap is running, and its answers for the calls
written outside the dispatcher (PyTorch's DynamicLayer stack, seen from below functorch).

The levels live here and ember._functorch.vmap pushes and pops them; it registers in `RULES`
the rules that need its BatchedTensor, which only run while a level is active -- so the
kernels and bindings below functorch ask here, and never import it."""
import contextlib
import functools

from .._core.grad_mode import _grad_state
from .._core.tensor import Tensor

# the vmap levels running now, innermost last: [level, batch size, randomness, the index of its
# mode in the dispatcher's mode stack]
levels = []
legacy_levels = set()  # the levels of torch._vmap_internals' vmap (forward AD's make_dual
#   takes batched tangents there)
drawing = [False]  # a random function (random_function) is drawing for the whole batch
RULES = {}  # "draw", "refuse", "inplace_draw", "per_example", "new_like": ember._functorch.vmap's,
#   registered at its import
#   "function": autograd.Function.apply while a transform runs (ember._functorch.autograd_function)


def transforms_active():
    """Whether a functorch transform is running (PyTorch's _are_functorch_transforms_active)."""
    return _grad_state.transforms > 0


@contextlib.contextmanager
def transform():
    """The block is a transform's call of the user's function (vmap's levels, grad, vjp, jvp,
    functionalize); `_grad_state.transforms` counts them, so the layers below (requires_grad_,
    retain_grad, autograd.Function) can ask."""
    _grad_state.transforms += 1
    try:
        yield
    finally:
        _grad_state.transforms -= 1


def reads_data(message):
    """The RuntimeError for reading a BatchedTensor's data (item, bool, numpy), marked so that
    `per_example` may take the call over (see `is_data_read`)."""
    error = RuntimeError(message)
    error._vmap_reads_data = True
    return error


def is_data_read(error):
    return getattr(error, "_vmap_reads_data", False)


def random_function(fn=None, *, like=False):
    """A random function written outside the dispatcher (a NumPy sampler, a composite that
    checks its arguments' values, a *_like factory) made to follow vmap's randomness flag as
    PyTorch's random ops do: 'error' refuses; 'same' takes only unbatched tensors (a `like`
    factory, which reads only its input's shape and layout, takes one example's); 'different'
    draws once over the whole batch, the physical tensors batch first (unbatched tensor
    arguments expanded to it). Without tensor arguments (the factory forms) it is called as
    it is: its random ops see the flag themselves."""
    if fn is None:
        return functools.partial(random_function, like=like)

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if not levels or drawing[0] or not any(isinstance(a, Tensor) for a in args):
            return fn(*args, **kwargs)
        return RULES["draw"](fn, args, kwargs, len(levels) - 1, like)
    return run


def refuse_batched(tensors, opname, why):
    """PyTorch's error for a call vmap can neither batch nor run per example (an out= variant,
    an op returning a Python value) when one of `tensors` is batched."""
    if levels:
        RULES["refuse"](tensors, opname, why)


def check_inplace_draw(self, *others):
    """For an in-place random fill composed of other ops (bernoulli_ with a tensor p): PyTorch's
    refusals under vmap (see ember._functorch.vmap)."""
    if levels and not drawing[0]:
        RULES["inplace_draw"](self, *others)


def per_example(fn, args, kwargs, error):
    """A public function whose ember decomposition read a BatchedTensor's data (`error`), where
    PyTorch's is a kernel that vmap batches: run it once per example and stack the results, as
    PyTorch's fallback does. Refused (`error` raised) for what a per-example run cannot stand
    for: an in-place or out= call, a function taking a function, a result that is not tensors."""
    return RULES["per_example"](fn, args, kwargs, error)
