"""functorch's make_fx (torch/_functorch/python_key.py): the one in ember.fx.experimental."""
from ..fx.experimental.proxy_tensor import make_fx

__all__ = ["make_fx"]
