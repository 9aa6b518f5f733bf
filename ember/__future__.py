"""torch.__future__: opt-in switches for behaviour PyTorch plans to make the default.

`set_overwrite_module_params_on_conversion(True)`: Module.to()/.float()/... give each parameter
a new Parameter object instead of changing `.data` of the existing one.
`set_swap_module_params_on_conversion(True)`: those conversions, and load_state_dict, keep the
parameter objects but swap their contents (`ember.utils.swap_tensors`); load_state_dict maps
each checkpoint value through `param.module_load(value, assign)` first."""
_overwrite_module_params_on_conversion = False
_swap_module_params_on_conversion = False


def set_overwrite_module_params_on_conversion(value):
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion():
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value):
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion():
    return _swap_module_params_on_conversion
