"""torch.distributions.Distribution: the base class of every probability distribution.

Shapes are the heart of it. A distribution has a `batch_shape` (independent, differently
parameterised copies) and an `event_shape` (the shape of one draw: () for a scalar Normal,
(k,) for a k-dimensional MultivariateNormal). `sample(sample_shape)` returns
`sample_shape + batch_shape + event_shape`; `log_prob(value)` returns one number per event,
`sample_shape + batch_shape`.

`rsample` draws through a reparameterisation (x = loc + scale * eps with parameter-free eps),
so gradients flow from the sample back to the parameters; `sample` is `rsample` under
no_grad for the families that have one. With `validate_args` on (the default, like
`assert`, unless Python runs with -O) parameters are checked against `arg_constraints` at
construction and values against `support` in `log_prob`, raising ValueError.
"""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import ember
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """Abstract base class for probability distributions.

    Args:
        batch_shape (ember.Size): the shape over which parameters are batched.
        event_shape (ember.Size): the shape of a single sample (without batching).
        validate_args (bool, optional): check parameters and values. Default: None, which
            keeps the class-wide default (`set_default_validate_args`).
    """
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn validation on or off for every distribution constructed afterwards."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=ember.Size(), event_shape=ember.Size(), validate_args=None):
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=_user_stacklevel())
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # e.g. Uniform's low/high: they bound each other
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue  # the other parameterisation (logits when probs was given)
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution with parameters `expand`ed to `batch_shape` (views, no copies,
        no re-validation). Subclasses with a custom `__init__` implement it."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """Parameter name -> Constraint that the parameter must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint that samples (and `log_prob`'s values) satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=ember.Size()):
        """A sample of shape sample_shape + batch_shape + event_shape, without gradients."""
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=ember.Size()):
        """A reparameterised sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=_user_stacklevel())
        return self.sample(ember.Size((n,)))

    def log_prob(self, value):
        """The log density (or log mass) of `value`."""
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """All values of a discrete distribution along dim 0: shape (cardinality,) +
        batch_shape + event_shape (batch dims of size 1 with expand=False)."""
        raise NotImplementedError

    def entropy(self):
        """The entropy, one value per batch element."""
        raise NotImplementedError

    def perplexity(self):
        return ember.exp(self.entropy())

    def _extended_shape(self, sample_shape=ember.Size()):
        """sample_shape + batch_shape + event_shape."""
        if not isinstance(sample_shape, ember.Size):
            sample_shape = ember.Size(sample_shape)
        return ember.Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        """Check a value given to log_prob/cdf: a tensor, its rightmost dims equal to
        event_shape, broadcastable with batch_shape, and inside the support."""
        if not isinstance(value, ember.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=_user_stacklevel())
            return
        if support is None:
            raise AssertionError("support is unexpectedly None")
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) to be within the support ({support!r}) "
                             f"of the distribution {self!r}, but found invalid values:\n{value}")

    def _expand_parameters(self, cls, batch_shape, _instance, names, param_event_shape=()):
        """`expand` for the common case: a new `cls` instance whose parameters `names` are
        views of self's expanded to batch_shape + param_event_shape. A parameter missing from
        self's __dict__ (the lazy other half of probs/logits, not derived yet) is skipped; the
        caller copies any other attribute."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = ember.Size(batch_shape)
        for name in names:
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape + param_event_shape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names)
        return self.__class__.__name__ + "(" + args + ")"
