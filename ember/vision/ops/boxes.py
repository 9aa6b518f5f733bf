"""Box utilities (torchvision.ops.boxes). Boxes are (N, 4) tensors in (x1, y1, x2, y2) format
with 0 <= x1 < x2 and 0 <= y1 < y2 unless a function says otherwise.

The IoU family is written with ember tensor ops, so it is differentiable (detection losses use
generalized/distance/complete IoU). Non-maximum suppression is a selection, not a function of
its inputs' values: it runs in NumPy and returns int64 indices.
"""
import math

import numpy as np

import ember

__all__ = ["nms", "batched_nms", "remove_small_boxes", "clip_boxes_to_image", "box_convert",
           "box_area", "box_iou", "generalized_box_iou", "complete_box_iou",
           "distance_box_iou"]


def _upcast(t):
    """Products of coordinates overflow in float16 and small ints: compute them in float32 /
    int32 or wider."""
    if t.is_floating_point():
        return t if t.dtype in (ember.float32, ember.float64) else t.float()
    return t if t.dtype in (ember.int32, ember.int64) else t.int()


def box_area(boxes):
    boxes = _upcast(boxes)
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def _box_inter_union(boxes1, boxes2):
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = ember.max(boxes1[:, None, :2], boxes2[:, :2])  # (N, M, 2)
    rb = ember.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = _upcast(rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter, area1[:, None] + area2 - inter


def box_iou(boxes1, boxes2):
    """(N, M) intersection over union of every pair."""
    inter, union = _box_inter_union(boxes1, boxes2)
    return inter / union


def _enclosing_wh(boxes1, boxes2):
    """Width and height of the smallest box enclosing each pair, (N, M, 2)."""
    lti = ember.min(boxes1[:, None, :2], boxes2[:, :2])
    rbi = ember.max(boxes1[:, None, 2:], boxes2[:, 2:])
    return _upcast(rbi - lti).clamp(min=0)


def generalized_box_iou(boxes1, boxes2):
    """IoU minus the share of the enclosing box that neither box covers (Rezatofighi et al.)."""
    inter, union = _box_inter_union(boxes1, boxes2)
    iou = inter / union
    whi = _enclosing_wh(boxes1, boxes2)
    areai = whi[:, :, 0] * whi[:, :, 1]
    return iou - (areai - union) / areai


def _box_diou_iou(boxes1, boxes2, eps=1e-7):
    iou = box_iou(boxes1, boxes2)
    whi = _enclosing_wh(boxes1, boxes2)
    diagonal_distance_squared = whi[:, :, 0] ** 2 + whi[:, :, 1] ** 2 + eps
    x_p = (boxes1[:, 0] + boxes1[:, 2]) / 2
    y_p = (boxes1[:, 1] + boxes1[:, 3]) / 2
    x_g = (boxes2[:, 0] + boxes2[:, 2]) / 2
    y_g = (boxes2[:, 1] + boxes2[:, 3]) / 2
    centers_distance_squared = (_upcast(x_p[:, None] - x_g[None, :]) ** 2
                                + _upcast(y_p[:, None] - y_g[None, :]) ** 2)
    return iou - centers_distance_squared / diagonal_distance_squared, iou


def distance_box_iou(boxes1, boxes2, eps=1e-7):
    """IoU minus the squared centre distance over the enclosing box's squared diagonal."""
    diou, _ = _box_diou_iou(_upcast(boxes1), _upcast(boxes2), eps)
    return diou


def complete_box_iou(boxes1, boxes2, eps=1e-7):
    """Distance IoU minus an aspect-ratio consistency term alpha * v (Zheng et al.); alpha is
    a weight, not differentiated through (as in the paper and torchvision)."""
    boxes1, boxes2 = _upcast(boxes1), _upcast(boxes2)
    diou, iou = _box_diou_iou(boxes1, boxes2, eps)
    w_pred = boxes1[:, None, 2] - boxes1[:, None, 0]
    h_pred = boxes1[:, None, 3] - boxes1[:, None, 1]
    w_gt = boxes2[:, 2] - boxes2[:, 0]
    h_gt = boxes2[:, 3] - boxes2[:, 1]
    v = (4 / (math.pi ** 2)) * (ember.atan(w_pred / h_pred) - ember.atan(w_gt / h_gt)) ** 2
    with ember.no_grad():
        alpha = v / (1 - iou + v + eps)
    return diou - alpha * v


_BOX_FORMATS = ("xyxy", "xywh", "cxcywh")


def _to_xyxy(boxes, fmt):
    a, b, c, d = boxes.unbind(-1)
    if fmt == "xywh":  # (x, y) corner, width, height
        return ember.stack([a, b, a + c, b + d], dim=-1)
    return ember.stack([a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d], dim=-1)  # cxcywh


def _from_xyxy(boxes, fmt):
    x1, y1, x2, y2 = boxes.unbind(-1)
    if fmt == "xywh":
        return ember.stack([x1, y1, x2 - x1, y2 - y1], dim=-1)
    return ember.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], dim=-1)  # cxcywh


def box_convert(boxes, in_fmt, out_fmt):
    """Convert between 'xyxy' (corners), 'xywh' (corner and size) and 'cxcywh' (centre and
    size), going through 'xyxy'."""
    if in_fmt not in _BOX_FORMATS or out_fmt not in _BOX_FORMATS:
        raise ValueError("Unsupported Bounding Box Conversions for given in_fmt and out_fmt")
    if in_fmt == out_fmt:
        return boxes.clone()
    if in_fmt != "xyxy":
        boxes = _to_xyxy(boxes, in_fmt)
    return boxes if out_fmt == "xyxy" else _from_xyxy(boxes, out_fmt)


def clip_boxes_to_image(boxes, size):
    """Clamp x to [0, width] and y to [0, height]; size is (height, width)."""
    dim = boxes.dim()
    boxes_x = boxes[..., 0::2]
    boxes_y = boxes[..., 1::2]
    height, width = size
    boxes_x = boxes_x.clamp(min=0, max=width)
    boxes_y = boxes_y.clamp(min=0, max=height)
    return ember.stack((boxes_x, boxes_y), dim=dim).reshape(boxes.shape)


def remove_small_boxes(boxes, min_size):
    """Indices of the boxes whose sides are both at least min_size."""
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = (ws >= min_size) & (hs >= min_size)
    return ember.where(keep)[0]


def _check_nms_inputs(boxes, scores):
    if boxes.dim() != 2:
        raise RuntimeError(f"boxes should be a 2d tensor, got {boxes.dim()}D")
    if boxes.size(1) != 4:
        raise RuntimeError(f"boxes should have 4 elements in dimension 1, got {boxes.size(1)}")
    if scores.dim() != 1:
        raise RuntimeError(f"scores should be a 1d tensor, got {scores.dim()}D")
    if boxes.size(0) != scores.size(0):
        raise RuntimeError("boxes and scores should have same number of elements in dimension "
                           f"0, got {boxes.size(0)} and {scores.size(0)}")


def nms(boxes, scores, iou_threshold):
    """Greedy non-maximum suppression: visit boxes by decreasing score, keep a box unless it
    overlaps an already kept one with IoU > iou_threshold. Returns the kept indices (int64)
    in decreasing score order."""
    _check_nms_inputs(boxes, scores)
    b = boxes.numpy(force=True)
    order = np.argsort(-scores.numpy(force=True), kind="stable")
    b = b[order]
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    suppressed = np.zeros(len(b), dtype=bool)
    keep = []
    # One row of IoUs per kept box: O(N * kept) work, never the full N x N matrix.
    for i in range(len(b)):
        if suppressed[i]:
            continue
        keep.append(i)
        rest = b[i + 1:]
        w = np.clip(np.minimum(b[i, 2], rest[:, 2]) - np.maximum(b[i, 0], rest[:, 0]), 0, None)
        h = np.clip(np.minimum(b[i, 3], rest[:, 3]) - np.maximum(b[i, 1], rest[:, 1]), 0, None)
        inter = w * h
        suppressed[i + 1:] |= inter / (area[i] + area[i + 1:] - inter) > iou_threshold
    return ember.from_numpy(order[np.asarray(keep, dtype=np.int64)].astype(np.int64))


def batched_nms(boxes, scores, idxs, iou_threshold):
    """NMS within each category `idxs`: boxes of different categories never suppress each
    other. Small inputs shift each category's boxes by a distinct offset so that one nms call
    does all categories; large ones (where that costs more) run nms per category."""
    if boxes.numel() > 4000:
        return _batched_nms_vanilla(boxes, scores, idxs, iou_threshold)
    return _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold)


def _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold):
    if boxes.numel() == 0:
        return ember.empty((0,), dtype=ember.int64, device=boxes.device)
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + ember.tensor(1).to(boxes))
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def _batched_nms_vanilla(boxes, scores, idxs, iou_threshold):
    keep_mask = ember.zeros_like(scores, dtype=ember.bool)
    for class_id in ember.unique(idxs):
        curr_indices = ember.where(idxs == class_id)[0]
        curr_keep = nms(boxes[curr_indices], scores[curr_indices], iou_threshold)
        keep_mask[curr_indices[curr_keep]] = True
    keep_indices = ember.where(keep_mask)[0]
    return keep_indices[scores[keep_indices].sort(descending=True)[1]]
