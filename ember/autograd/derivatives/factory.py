"""Factories and random sampling: outputs that never require grad, or (sampling into a
floating tensor) a zero gradient."""
from ..variable_type import derivative, node_name_of, not_differentiable
from ._common import _zero

not_differentiable("empty.memory_format", "empty_strided", "full", "arange.start_step",
                   "linspace", "eye.m", "scalar_tensor", "_tensor_from_data", "full_like")
not_differentiable("randperm", "multinomial")
not_differentiable("empty_like", "rand_like", "randn_like", "randint_like",
                   "randint_like.low_dtype", "new_empty", "new_zeros", "new_ones", "new_full")

# Sampling into a floating tensor is differentiable in PyTorch, with a zero gradient: the
# output requires grad when its input does (x.clone().uniform_() keeps a graph), and nothing
# flows back through the values drawn.
for _name, _node in (("bernoulli", "BernoulliBackward0"), ("bernoulli_.float", "BernoulliBackward2"),
                     ("uniform_", None), ("normal_", None), ("random_.from", "RandomBackward0"),
                     ("random_", "RandomBackward2"), ("exponential_", None), ("geometric_", None),
                     ("cauchy_", None), ("log_normal_", None)):
    derivative(_name, {"self": lambda grad: _zero(grad)},
               node_name=_node or node_name_of(_name.rstrip("_")))
# normal with a tensor mean and/or std: the draws do not depend on them (PyTorch's
# NormalBackward1/2/3 give zeros)
derivative("normal.Tensor_float", {"mean": lambda grad: _zero(grad)}, node_name="NormalBackward1")
derivative("normal.float_Tensor", {"std": lambda grad: _zero(grad)}, node_name="NormalBackward2")
derivative("normal.Tensor_Tensor", {"mean": lambda grad: _zero(grad), "std": lambda grad: _zero(grad)},
           node_name="NormalBackward3")
