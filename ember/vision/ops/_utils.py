"""Helpers shared by the RoI ops: the two ways of passing boxes, and NumPy <-> ember at the
kernel boundary."""
import ember


def check_roi_boxes_shape(boxes):
    if isinstance(boxes, (list, tuple)):
        for t in boxes:
            assert t.size(1) == 4, \
                "The shape of the tensor in the boxes list is not correct as List[Tensor[L, 4]]"
    elif isinstance(boxes, ember.Tensor):
        assert boxes.size(1) == 5, "The boxes tensor shape is not correct as Tensor[K, 5]"
    else:
        raise AssertionError("boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, 4]]")


def convert_boxes_to_roi_format(boxes):
    """A list of per-image (L_i, 4) boxes -> one (K, 5) tensor whose first column is the
    image index."""
    concat_boxes = ember.cat(list(boxes), dim=0)
    ids = ember.cat([ember.full_like(b[:, :1], i) for i, b in enumerate(boxes)], dim=0)
    return ember.cat([ids, concat_boxes], dim=1)


def _rois(boxes):
    check_roi_boxes_shape(boxes)
    return boxes if isinstance(boxes, ember.Tensor) else convert_boxes_to_roi_format(boxes)


def _pair(x):
    return (x, x) if isinstance(x, int) else tuple(x)


def _np(t):
    """A kernel argument's data (kernels run below autograd, so no graph is lost)."""
    return t.detach().numpy()
