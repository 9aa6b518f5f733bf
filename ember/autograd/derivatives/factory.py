"""Factories and random sampling: ops whose outputs never require grad."""
from ..variable_type import not_differentiable

not_differentiable("empty.memory_format", "empty_strided", "full", "arange.start_step",
                   "linspace", "eye.m", "scalar_tensor", "_tensor_from_data", "full_like")
not_differentiable("uniform_", "normal_", "random_.from", "random_", "bernoulli_.float",
                   "randperm", "exponential_", "geometric_", "cauchy_",
                   "log_normal_", "multinomial")
