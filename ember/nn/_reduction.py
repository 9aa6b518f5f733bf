"""torch.nn._reduction: a loss's `reduction` string as ATen's Reduction enum (none 0, mean 1,
sum 2), and the deprecated `size_average`/`reduce` booleans mapped onto that string."""
import warnings

_ENUM = {"none": 0, "mean": 1, "sum": 2}


def get_enum(reduction):
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=2)
        reduction = "mean"
    if reduction not in _ENUM:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _ENUM[reduction]


def legacy_get_string(size_average, reduce, emit_warning=True):
    """None counts as True for both; (True, True) -> 'mean', (False, True) -> 'sum',
    reduce False -> 'none'."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    name = "mean" if size_average and reduce else "sum" if reduce else "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{name}' instead.", stacklevel=2)
    return name


def legacy_get_enum(size_average, reduce, emit_warning=True):
    return get_enum(legacy_get_string(size_average, reduce, emit_warning))
