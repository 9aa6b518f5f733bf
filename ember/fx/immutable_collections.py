"""torch.fx.immutable_collections: the list and dict types of a Node's arguments (defined beside
Node, whose bookkeeping they protect), registered as pytree nodes that unflatten to their own
type."""
from ..utils import _pytree
from .node import immutable_dict, immutable_list

__all__ = ["immutable_list", "immutable_dict"]


def _immutable_list_unflatten(values, context):
    return immutable_list(_pytree._list_unflatten(values, context))


def _immutable_dict_unflatten(values, context):
    return immutable_dict(_pytree._dict_unflatten(values, context))


_pytree.register_pytree_node(
    immutable_list, _pytree._list_flatten, _immutable_list_unflatten,
    serialized_type_name="torch.fx.immutable_collections.immutable_list",
    flatten_with_keys_fn=_pytree._list_flatten_with_keys)
_pytree.register_pytree_node(
    immutable_dict, _pytree._dict_flatten, _immutable_dict_unflatten,
    serialized_type_name="torch.fx.immutable_collections.immutable_dict",
    flatten_with_keys_fn=_pytree._dict_flatten_with_keys)
