"""torch._refs as code written for PyTorch reaches it: `torch._refs.abs`,
`torch._refs.nn.functional.relu`, `torch._refs.linalg.vector_norm` (PyTorch's OpInfo database
names one such "Python reference" per op in its `python_ref_db`).

In PyTorch those are second implementations of its C++ operators, written in Python from a few
primitives, and tested against the operators. ember's operators are already Python, so ember
has no second implementation: a reference is ember's own operator of the same meaning.
`torch._refs.X` is ember's `torch.X`, or -- where PyTorch has no function of that name, only a
Tensor method (`T`, `view`, `to`, `expand`, the dtype conversions ...) -- that method called with
the tensor first; `torch._refs.<namespace>.X` is ember's `torch.<namespace>.X`. A name ember
has no operator for raises AttributeError. The names ember's own code defines in `ember._refs`
come first; these are looked up only for a name it does not have (a module `__getattr__`)."""
import importlib

__all__ = ["cauchy", "exponential", "geometric", "log_normal"]


def _tensor_method(name):
    """Tensor.<name> as a function of the tensor (a property is read)."""
    from .._core.tensor import Tensor
    attr = getattr(Tensor, name)
    if isinstance(attr, property):
        return attr.fget

    def method(self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)
    method.__name__ = method.__qualname__ = name
    return method


def namespace_getattr(module_name, namespace, *, tensor_methods=False):
    """A module `__getattr__` for `module_name` resolving a public name to the callable of that
    name in `namespace` (or, with `tensor_methods`, to the Tensor method)."""
    def __getattr__(name):
        if not name.startswith("_"):
            value = getattr(importlib.import_module(namespace), name, None)
            if callable(value):
                return value
            if tensor_methods:
                try:
                    return _tensor_method(name)
                except AttributeError:
                    pass
        raise AttributeError(f"module '{module_name}' has no attribute '{name}' (ember has no "
                             f"{namespace.replace('ember', 'torch')}.{name})")
    return __getattr__


# PyTorch's references of the random samplers that only exist in place (Tensor.cauchy_, ...):
# a new tensor like `self` filled by the in-place sampler.
def cauchy(self, median=0, sigma=1, generator=None):
    return self.new_empty(self.shape).cauchy_(median, sigma, generator=generator)


def exponential(self, rate=1, generator=None):
    return self.new_empty(self.shape).exponential_(rate, generator=generator)


def geometric(self, p, generator=None):
    return self.new_empty(self.shape).geometric_(p, generator=generator)


def log_normal(self, mean=1, std=2, generator=None):
    return self.new_empty(self.shape).log_normal_(mean, std, generator=generator)
