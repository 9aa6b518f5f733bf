"""ember.vision.ops against reference formulas written here (torchvision is not installed):
box ops per pair in torch scalars (values and gradients), nms by the textbook greedy loop,
roi_align / roi_pool / deform_conv2d by direct loops over outputs, deform_conv2d with zero
offsets against torch's conv2d, gradcheck in float64 for the ops with a backward."""
import math

import numpy as np
import pytest

import ember
import ember.vision.ops as ops

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


def random_boxes(n, scale=10.0, seed=0):
    r = np.random.default_rng(seed)
    xy = r.random((n, 2)) * scale
    wh = r.random((n, 2)) * scale / 2 + 0.5
    return np.concatenate([xy, xy + wh], axis=1)


# --- box ops ------------------------------------------------------------------------------------

def t_pair_metrics(a, b, eps=1e-7):
    """iou, giou, diou, ciou of two boxes (1-d torch tensors), written out from the papers."""
    area = lambda z: (z[2] - z[0]) * (z[3] - z[1])  # noqa: E731
    iw = (torch.min(a[2], b[2]) - torch.max(a[0], b[0])).clamp(min=0)
    ih = (torch.min(a[3], b[3]) - torch.max(a[1], b[1])).clamp(min=0)
    inter = iw * ih
    union = area(a) + area(b) - inter
    iou = inter / union
    cw = torch.max(a[2], b[2]) - torch.min(a[0], b[0])
    ch = torch.max(a[3], b[3]) - torch.min(a[1], b[1])
    giou = iou - (cw * ch - union) / (cw * ch)
    centre = ((a[0] + a[2] - b[0] - b[2]) / 2) ** 2 + ((a[1] + a[3] - b[1] - b[3]) / 2) ** 2
    diou = iou - centre / (cw ** 2 + ch ** 2 + eps)
    v = 4 / math.pi ** 2 * (torch.atan((a[2] - a[0]) / (a[3] - a[1]))
                            - torch.atan((b[2] - b[0]) / (b[3] - b[1]))) ** 2
    alpha = (v / (1 - iou + v + eps)).detach()
    return {"box_iou": iou, "generalized_box_iou": giou, "distance_box_iou": diou,
            "complete_box_iou": diou - alpha * v}


@pytest.mark.parametrize("name", ["box_iou", "generalized_box_iou", "distance_box_iou",
                                  "complete_box_iou"])
def test_pairwise_box_metrics(name):
    b1, b2 = random_boxes(4, seed=1), random_boxes(3, seed=2)
    b2[0] = b1[1]  # one identical pair
    t1 = torch.tensor(b1, requires_grad=True)
    t2 = torch.tensor(b2, requires_grad=True)
    ref = torch.stack([torch.stack([t_pair_metrics(t1[i], t2[j])[name] for j in range(3)])
                       for i in range(4)])
    e1 = ember.tensor(b1, requires_grad=True)
    e2 = ember.tensor(b2, requires_grad=True)
    out = getattr(ops, name)(e1, e2)
    assert out.shape == (4, 3) and out.dtype == ember.float64
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10)
    weights = rng.standard_normal((4, 3))
    (ref * torch.tensor(weights)).sum().backward()
    (out * ember.tensor(weights)).sum().backward()
    np.testing.assert_allclose(e1.grad.numpy(), t1.grad.numpy(), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(e2.grad.numpy(), t2.grad.numpy(), rtol=1e-8, atol=1e-12)


def test_box_iou_dtypes():
    b = random_boxes(3).astype(np.float32)
    assert ops.box_iou(ember.tensor(b), ember.tensor(b)).dtype == ember.float32
    ints = ember.tensor([[0, 0, 4, 4], [2, 2, 6, 6]], dtype=ember.int16)
    iou = ops.box_iou(ints, ints)  # areas upcast to int32, division gives float32
    assert iou.dtype == ember.float32
    np.testing.assert_allclose(iou.numpy(), [[1, 4 / 28], [4 / 28, 1]], rtol=1e-6)
    assert ops.box_area(ints).dtype == ember.int32
    assert ops.box_area(ember.tensor(b).half()).dtype == ember.float32


@pytest.mark.parametrize("fmt", ["xywh", "cxcywh"])
def test_box_convert(fmt):
    b = random_boxes(5)
    x1, y1, x2, y2 = b.T
    expected = {"xywh": np.stack([x1, y1, x2 - x1, y2 - y1], 1),
                "cxcywh": np.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], 1)}[fmt]
    e = ember.tensor(b)
    np.testing.assert_allclose(ops.box_convert(e, "xyxy", fmt).numpy(), expected)
    np.testing.assert_allclose(ops.box_convert(ember.tensor(expected), fmt, "xyxy").numpy(), b)
    other = "cxcywh" if fmt == "xywh" else "xywh"
    np.testing.assert_allclose(
        ops.box_convert(ops.box_convert(e, "xyxy", fmt), fmt, other).numpy(),
        ops.box_convert(e, "xyxy", other).numpy())
    same = ops.box_convert(e, fmt, fmt)
    assert same is not e and np.array_equal(same.numpy(), b)
    with pytest.raises(ValueError, match="Unsupported Bounding Box Conversions"):
        ops.box_convert(e, "xyxy", "yxyx")


def test_clip_and_remove_small_boxes():
    b = np.array([[-1., 2., 5., 12.], [3., -4., 20., 6.], [1., 1., 1.5, 9.]])
    clipped = ops.clip_boxes_to_image(ember.tensor(b), (10, 8))
    ref = torch.tensor(b)
    ref[:, 0::2] = ref[:, 0::2].clamp(0, 8)
    ref[:, 1::2] = ref[:, 1::2].clamp(0, 10)
    np.testing.assert_array_equal(clipped.numpy(), ref.numpy())
    keep = ops.remove_small_boxes(ember.tensor(b), 1.0)
    assert keep.dtype == ember.int64 and keep.tolist() == [0, 1]


# --- nms ----------------------------------------------------------------------------------------

def reference_nms(boxes, scores, threshold):
    """The textbook loop: take the best remaining box, drop everything overlapping it."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    keep = []
    while order:
        i = order.pop(0)
        keep.append(i)
        order = [j for j in order if t_pair_metrics(torch.tensor(boxes[i]),
                                                    torch.tensor(boxes[j]))["box_iou"]
                 <= threshold]
    return keep


@pytest.mark.parametrize("threshold", [0.1, 0.5, 0.8])
def test_nms_matches_greedy_reference(threshold):
    boxes = random_boxes(40, seed=3).astype(np.float32)
    scores = np.random.default_rng(4).random(40).astype(np.float32)
    keep = ops.nms(ember.tensor(boxes), ember.tensor(scores), threshold)
    assert keep.dtype == ember.int64
    assert keep.tolist() == reference_nms(boxes, scores, threshold)


def test_nms_edge_cases():
    empty = ops.nms(ember.zeros(0, 4), ember.zeros(0), 0.5)
    assert empty.shape == (0,) and empty.dtype == ember.int64
    with pytest.raises(RuntimeError, match="boxes should have 4 elements in dimension 1"):
        ops.nms(ember.zeros(3, 5), ember.zeros(3), 0.5)
    with pytest.raises(RuntimeError, match="same number of elements in dimension 0"):
        ops.nms(ember.zeros(3, 4), ember.zeros(2), 0.5)
    with pytest.raises(RuntimeError, match="boxes should be a 2d tensor"):
        ops.nms(ember.zeros(4), ember.zeros(1), 0.5)


@pytest.mark.parametrize("n", [30, 1200])  # the coordinate-offset path and the per-class loop
def test_batched_nms(n):
    boxes = random_boxes(n, seed=5).astype(np.float32)
    scores = np.random.default_rng(6).permutation(n).astype(np.float32)
    idxs = np.random.default_rng(7).integers(0, 3, n)
    keep = ops.batched_nms(ember.tensor(boxes), ember.tensor(scores), ember.tensor(idxs), 0.4)
    expected = []
    for c in range(3):
        sel = np.nonzero(idxs == c)[0]
        expected += sel[ops.nms(ember.tensor(boxes[sel]), ember.tensor(scores[sel]),
                                0.4).numpy()].tolist()
    expected.sort(key=lambda i: -scores[i])
    assert keep.tolist() == expected


# --- roi_align / roi_pool -----------------------------------------------------------------------

def reference_roi_align(x, rois, out_size, scale, sampling_ratio, aligned):
    """torchvision's CPU kernel, one sample at a time."""
    n, c, h, w = x.shape
    ph_n, pw_n = out_size
    out = np.zeros((len(rois), c, ph_n, pw_n))

    def bilinear(img, y, xx):
        if y < -1.0 or y > h or xx < -1.0 or xx > w:
            return 0 * img[:, 0, 0]
        y, xx = max(y, 0.0), max(xx, 0.0)
        y0, x0 = int(y), int(xx)
        if y0 >= h - 1:
            y0 = y1 = h - 1
            y = float(y0)
        else:
            y1 = y0 + 1
        if x0 >= w - 1:
            x0 = x1 = w - 1
            xx = float(x0)
        else:
            x1 = x0 + 1
        ly, lx = y - y0, xx - x0
        return ((1 - ly) * (1 - lx) * img[:, y0, x0] + (1 - ly) * lx * img[:, y0, x1]
                + ly * (1 - lx) * img[:, y1, x0] + ly * lx * img[:, y1, x1])

    off = 0.5 if aligned else 0.0
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        sx, sy = x1 * scale - off, y1 * scale - off
        rw, rh = x2 * scale - off - sx, y2 * scale - off - sy
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph_n, rw / pw_n
        gh = sampling_ratio if sampling_ratio > 0 else math.ceil(rh / ph_n)
        gw = sampling_ratio if sampling_ratio > 0 else math.ceil(rw / pw_n)
        for p in range(ph_n):
            for q in range(pw_n):
                acc = 0
                for iy in range(gh):
                    for ix in range(gw):
                        acc = acc + bilinear(x[int(b)], sy + p * bh + (iy + .5) * bh / gh,
                                             sx + q * bw + (ix + .5) * bw / gw)
                out[k, :, p, q] = acc / max(gh * gw, 1)
    return out


ROIS = np.array([[0, 1.0, 1.5, 6.2, 7.0], [1, 0.5, 2.0, 11.0, 9.5], [0, -2.0, -1.0, 3.0, 3.0],
                 [1, 3.0, 3.0, 3.2, 3.1], [0, 8.0, 6.0, 30.0, 20.0]])


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio, scale, size", [(-1, 1.0, (3, 4)), (2, 0.5, (2, 2)),
                                                         (0, 1.25, (5, 3))])
def test_roi_align_matches_loop_reference(aligned, sampling_ratio, scale, size):
    x = rng.standard_normal((2, 3, 10, 12)).astype(np.float32)
    out = ops.roi_align(ember.tensor(x), ember.tensor(ROIS.astype(np.float32)), size, scale,
                        sampling_ratio, aligned)
    assert out.dtype == ember.float32 and out.shape == (5, 3, *size)
    ref = reference_roi_align(x.astype(np.float64), ROIS, size, scale, sampling_ratio, aligned)
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-5, rtol=1e-5)


def test_roi_align_list_of_boxes_and_module():
    x = ember.tensor(rng.standard_normal((2, 3, 10, 12)))
    boxes = [ember.tensor(ROIS[ROIS[:, 0] == i, 1:]) for i in range(2)]
    rois = ember.tensor(np.concatenate([ROIS[ROIS[:, 0] == 0], ROIS[ROIS[:, 0] == 1]]))
    layer = ops.RoIAlign((2, 3), 0.5, 2, aligned=True)
    assert repr(layer) == "RoIAlign(output_size=(2, 3), spatial_scale=0.5, sampling_ratio=2, " \
                          "aligned=True)"
    np.testing.assert_array_equal(layer(x, boxes).numpy(), layer(x, rois).numpy())
    with pytest.raises(AssertionError, match=r"Tensor\[K, 5\]"):
        ops.roi_align(x, ember.zeros(3, 4), 2)
    with pytest.raises(AssertionError, match=r"List\[Tensor\[L, 4\]\]"):
        ops.roi_align(x, [ember.zeros(3, 5)], 2)


@pytest.mark.parametrize("aligned", [False, True])
def test_roi_align_gradcheck(aligned):
    x = ember.tensor(rng.standard_normal((2, 2, 6, 7)), requires_grad=True)
    rois = ember.tensor([[0, 0.3, 0.7, 4.2, 5.1], [1, 1.1, 0.2, 6.4, 3.3], [1, 2.0, 2.0, 2.5, 9.]])
    assert ember.autograd.gradcheck(
        lambda t: ops.roi_align(t, rois, (3, 2), 1.0, -1, aligned), (x,))


def reference_roi_pool(x, rois, out_size, scale):
    n, c, h, w = x.shape
    ph_n, pw_n = out_size
    out = np.zeros((len(rois), c, ph_n, pw_n), dtype=x.dtype)

    def cround(v):  # C's round() of the float32 product, as torchvision's float kernel
        v = float(np.float32(v) * np.float32(scale))
        return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        sx, sy, ex, ey = cround(x1), cround(y1), cround(x2), cround(y2)
        rh, rw = max(ey - sy + 1, 1), max(ex - sx + 1, 1)
        for p in range(ph_n):
            for q in range(pw_n):
                hs = min(max(math.floor(p * rh / ph_n) + sy, 0), h)
                he = min(max(math.ceil((p + 1) * rh / ph_n) + sy, 0), h)
                ws = min(max(math.floor(q * rw / pw_n) + sx, 0), w)
                we = min(max(math.ceil((q + 1) * rw / pw_n) + sx, 0), w)
                if he > hs and we > ws:
                    out[k, :, p, q] = x[int(b), :, hs:he, ws:we].max(axis=(1, 2))
    return out


@pytest.mark.parametrize("scale, size", [(1.0, (3, 4)), (0.5, (2, 2)), (1.3, (4, 3))])
def test_roi_pool_matches_loop_reference(scale, size):
    x = rng.standard_normal((2, 3, 10, 12)).astype(np.float32)
    out = ops.roi_pool(ember.tensor(x), ember.tensor(ROIS.astype(np.float32)), size, scale)
    assert out.dtype == ember.float32
    np.testing.assert_array_equal(out.numpy(), reference_roi_pool(x, ROIS, size, scale))
    assert repr(ops.RoIPool(size, scale)) == f"RoIPool(output_size={size}, spatial_scale={scale})"


def test_roi_pool_gradients():
    x = ember.tensor(rng.standard_normal((2, 2, 6, 7)), requires_grad=True)
    rois = ember.tensor([[0, 0.3, 0.7, 4.2, 5.1], [1, 1.1, 0.2, 6.4, 3.3], [1, 9, 9, 12, 12.]])
    assert ember.autograd.gradcheck(lambda t: ops.roi_pool(t, rois, (3, 2)), (x,))
    out = ops.roi_pool(x, rois, (2, 2))
    out.sum().backward()  # each non-empty bin sends its gradient to one pixel
    assert x.grad.sum().item() == pytest.approx(float((out.detach().numpy() != 0).sum()))


# --- deform_conv2d ------------------------------------------------------------------------------

def reference_deform_conv2d(x, offset, weight, bias, stride, padding, dilation, mask):
    """The definition, one output pixel and one tap at a time."""
    b_n, c, h, w = x.shape
    o, cw, kh, kw = weight.shape
    groups, oh, ow = c // cw, offset.shape[2], offset.shape[3]
    g_off = offset.shape[1] // (2 * kh * kw)
    cols = np.zeros((b_n, c, kh, kw, oh, ow))

    def read(img, y, xx):
        return img[y, xx] if 0 <= y < h and 0 <= xx < w else 0.0

    for b in range(b_n):
        for ch in range(c):
            g = ch // (c // g_off)
            for i in range(kh):
                for j in range(kw):
                    ch_y = 2 * (g * kh * kw + i * kw + j)  # offset channel of this tap's y shift
                    for p in range(oh):
                        for q in range(ow):
                            y = p * stride[0] - padding[0] + i * dilation[0] + offset[b, ch_y, p, q]
                            xx = q * stride[1] - padding[1] + j * dilation[1] \
                                + offset[b, ch_y + 1, p, q]
                            if y <= -1 or y >= h or xx <= -1 or xx >= w:
                                continue
                            y0, x0 = math.floor(y), math.floor(xx)
                            ly, lx = y - y0, xx - x0
                            v = ((1 - ly) * (1 - lx) * read(x[b, ch], y0, x0)
                                 + (1 - ly) * lx * read(x[b, ch], y0, x0 + 1)
                                 + ly * (1 - lx) * read(x[b, ch], y0 + 1, x0)
                                 + ly * lx * read(x[b, ch], y0 + 1, x0 + 1))
                            m = 1.0 if mask is None else mask[b, ch_y // 2, p, q]
                            cols[b, ch, i, j, p, q] = m * v
    out = np.zeros((b_n, o, oh, ow))
    for g in range(groups):
        og, cg = slice(g * (o // groups), (g + 1) * (o // groups)), slice(g * cw, (g + 1) * cw)
        out[:, og] = np.einsum("ocij,bcijpq->bopq", weight[og], cols[:, cg])
    return out + bias[None, :, None, None]


DEFORM_CASES = [  # (in, out, kernel, stride, padding, dilation, groups, offset_groups, mask)
    (2, 3, (3, 3), (1, 1), (1, 1), (1, 1), 1, 1, True),
    (4, 6, (3, 2), (2, 1), (0, 1), (1, 2), 2, 2, False),
    (4, 2, (2, 2), (1, 2), (2, 0), (2, 1), 1, 4, True),
]


@pytest.mark.parametrize("case", DEFORM_CASES)
def test_deform_conv2d_zero_offset_is_conv2d(case):
    c_in, c_out, k, stride, padding, dilation, groups, g_off, use_mask = case
    x = rng.standard_normal((2, c_in, 7, 8)).astype(np.float32)
    w = rng.standard_normal((c_out, c_in // groups, *k)).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32)
    t_out = torch.nn.functional.conv2d(torch.tensor(x, requires_grad=True),
                                       torch.tensor(w), torch.tensor(b), stride, padding,
                                       dilation, groups)
    oh, ow = t_out.shape[2:]
    offset = ember.zeros(2, 2 * g_off * k[0] * k[1], oh, ow, requires_grad=True)
    mask = ember.ones(2, g_off * k[0] * k[1], oh, ow) if use_mask else None
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ex, ew, eb = (ember.tensor(a, requires_grad=True) for a in (x, w, b))
    out = ops.deform_conv2d(ex, offset, ew, eb, stride, padding, dilation, mask)
    ref = torch.nn.functional.conv2d(tx, tw, tb, stride, padding, dilation, groups)
    assert out.dtype == ember.float32 and out.shape == tuple(ref.shape)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-4)
    g = rng.standard_normal(tuple(ref.shape)).astype(np.float32)
    out.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    for e, t in ((ex, tx), (ew, tw), (eb, tb)):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=1e-3, rtol=1e-4)


@pytest.mark.parametrize("case", DEFORM_CASES)
def test_deform_conv2d_random_offsets_match_reference(case):
    c_in, c_out, k, stride, padding, dilation, groups, g_off, use_mask = case
    x = rng.standard_normal((2, c_in, 6, 7))
    w = rng.standard_normal((c_out, c_in // groups, *k))
    b = rng.standard_normal(c_out)
    oh = (6 + 2 * padding[0] - dilation[0] * (k[0] - 1) - 1) // stride[0] + 1
    ow = (7 + 2 * padding[1] - dilation[1] * (k[1] - 1) - 1) // stride[1] + 1
    offset = rng.standard_normal((2, 2 * g_off * k[0] * k[1], oh, ow)) * 2
    mask = rng.random((2, g_off * k[0] * k[1], oh, ow)) if use_mask else None
    out = ops.deform_conv2d(ember.tensor(x), ember.tensor(offset), ember.tensor(w),
                            ember.tensor(b), stride, padding, dilation,
                            None if mask is None else ember.tensor(mask))
    ref = reference_deform_conv2d(x, offset, w, b, stride, padding, dilation, mask)
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-10)


@pytest.mark.parametrize("case", DEFORM_CASES[:2])
def test_deform_conv2d_gradcheck(case):
    c_in, c_out, k, stride, padding, dilation, groups, g_off, use_mask = case
    r = np.random.default_rng(8)
    x = ember.tensor(r.standard_normal((1, c_in, 4, 5)), requires_grad=True)
    w = ember.tensor(r.standard_normal((c_out, c_in // groups, *k)), requires_grad=True)
    b = ember.tensor(r.standard_normal(c_out), requires_grad=True)
    oh = (4 + 2 * padding[0] - dilation[0] * (k[0] - 1) - 1) // stride[0] + 1
    ow = (5 + 2 * padding[1] - dilation[1] * (k[1] - 1) - 1) // stride[1] + 1
    # offsets away from integers: bilinear sampling has kinks at whole pixels
    off_shape = (1, 2 * g_off * k[0] * k[1], oh, ow)
    off = r.integers(-2, 2, off_shape) + r.uniform(0.2, 0.8, off_shape)
    offset = ember.tensor(off, requires_grad=True)
    inputs = [x, offset, w, b]
    if use_mask:
        inputs.append(ember.tensor(r.random((1, g_off * k[0] * k[1], oh, ow)), requires_grad=True))

    def f(x, offset, w, b, mask=None):
        return ops.deform_conv2d(x, offset, w, b, stride, padding, dilation, mask)
    assert ember.autograd.gradcheck(f, tuple(inputs))


def test_deform_conv2d_op_registration_and_meta():
    assert "GeneratedBackwardFor_vision_deform_conv2d" in type(ops.deform_conv2d(
        ember.randn(1, 2, 5, 5, requires_grad=True), ember.zeros(1, 18, 3, 3),
        ember.randn(3, 2, 3, 3)).grad_fn).__name__
    meta = ops.deform_conv2d(ember.empty(2, 4, 9, 9, device="meta"),
                             ember.empty(2, 36, 5, 5, device="meta"),
                             ember.empty(6, 2, 3, 3, device="meta"), stride=2, padding=1,
                             mask=ember.empty(2, 18, 5, 5, device="meta"))
    assert meta.device.type == "meta" and meta.shape == (2, 6, 5, 5)
    assert ember.ops.vision.deform_conv2d.default is not None


def test_deform_conv2d_errors():
    x, w = ember.randn(1, 4, 5, 5), ember.randn(3, 4, 3, 3)
    with pytest.raises(RuntimeError, match="should be a multiple of 2 \\* weight.size"):
        ops.deform_conv2d(x, ember.zeros(1, 4, 3, 3), w)
    with pytest.raises(RuntimeError, match=r"offset output dims: \(4, 4\) - computed output "
                                           r"dims: \(3, 3\)"):
        ops.deform_conv2d(x, ember.zeros(1, 18, 4, 4), w)
    with pytest.raises(RuntimeError, match="mask.shape\\[1\\] is not valid: got: 3 expected: 9"):
        ops.deform_conv2d(x, ember.zeros(1, 18, 3, 3), w, mask=ember.ones(1, 3, 3, 3))
    with pytest.raises(RuntimeError, match="Calculated output size too small"):
        ops.deform_conv2d(ember.randn(1, 4, 2, 2), ember.zeros(1, 18, 1, 1), w)


def test_deform_conv2d_module():
    ember.manual_seed(0)
    layer = ops.DeformConv2d(4, 6, 3, padding=1, groups=2, bias=False)
    assert repr(layer) == "DeformConv2d(4, 6, kernel_size=(3, 3), stride=(1, 1), " \
                          "padding=(1, 1), groups=2, bias=False)"
    assert repr(ops.DeformConv2d(2, 2, (1, 3), dilation=2)) == \
        "DeformConv2d(2, 2, kernel_size=(1, 3), stride=(1, 1), dilation=(2, 2))"
    # the same init as torch's Conv2d: kaiming_uniform_(a=sqrt(5)) -> U(-1/sqrt(fan_in), ...)
    bound = 1 / math.sqrt(2 * 9)
    assert layer.weight.shape == (6, 2, 3, 3) and layer.weight.abs().max().item() <= bound
    x = ember.randn(2, 4, 5, 5)
    out = layer(x, ember.zeros(2, 18, 5, 5))
    conv = torch.nn.functional.conv2d(torch.tensor(x.numpy()),
                                      torch.tensor(layer.weight.detach().numpy()), padding=1,
                                      groups=2)
    np.testing.assert_allclose(out.detach().numpy(), conv.numpy(), atol=1e-5)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        ops.DeformConv2d(3, 6, 3, groups=2)
