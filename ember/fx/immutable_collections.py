"""torch.fx.immutable_collections: the list and dict types of a Node's arguments (defined beside
Node, whose bookkeeping they protect)."""
from .node import immutable_dict, immutable_list

__all__ = ["immutable_list", "immutable_dict"]
