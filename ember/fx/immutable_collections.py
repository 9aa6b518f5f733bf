"""torch.fx.immutable_collections: the list and dict types of a Node's `args` and `kwargs`.

A Node's arguments are read to keep the graph's use lists (`node.users`) right; changing them
in place would bypass that bookkeeping, so these raise TypeError on every mutation: build a new
container and assign `node.args` / `node.kwargs`. They are pytree nodes (flattened as list and
dict, rebuilt immutable) and hash by content, so they can be dict keys and cache entries.
"""
from ember.utils._pytree import (_dict_flatten, _dict_flatten_with_keys, _dict_unflatten,
                                 _list_flatten, _list_flatten_with_keys, _list_unflatten,
                                 register_pytree_node)

__all__ = ["immutable_list", "immutable_dict"]

_HELP_MUTATION = """If you are attempting to modify the kwargs or args of a torch.fx.Node object,
instead create a new copy of it and assign the copy to the node:

    new_args = ...  # copy and mutate args
    node.args = new_args"""


def _no_mutation(self, *args, **kwargs):
    raise TypeError(f"{type(self).__name__!r} object does not support mutation. {_HELP_MUTATION}")


class immutable_list(list):
    """A list that refuses to change."""
    __delitem__ = __iadd__ = __imul__ = __setitem__ = _no_mutation
    append = clear = extend = insert = pop = remove = reverse = sort = _no_mutation

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (type(self), (tuple(self),))


class immutable_dict(dict):
    """A dict that refuses to change."""
    __delitem__ = __ior__ = __setitem__ = _no_mutation
    clear = pop = popitem = setdefault = update = _no_mutation

    def __hash__(self):
        return hash(frozenset(self.items()))

    def __reduce__(self):
        return (type(self), (tuple(self.items()),))


register_pytree_node(
    immutable_list, _list_flatten,
    lambda values, context: immutable_list(_list_unflatten(values, context)),
    serialized_type_name="torch.fx.immutable_collections.immutable_list",
    flatten_with_keys_fn=_list_flatten_with_keys)
register_pytree_node(
    immutable_dict, _dict_flatten,
    lambda values, context: immutable_dict(_dict_unflatten(values, context)),
    serialized_type_name="torch.fx.immutable_collections.immutable_dict",
    flatten_with_keys_fn=_dict_flatten_with_keys)
