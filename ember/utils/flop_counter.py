"""torch.utils.flop_counter: FlopCounterMode counts the floating-point operations of the matrix
products and convolutions run inside it, per module (ModuleTracker), forward and backward.

PyTorch counts at the dispatcher, after its composite ops have decomposed: `F.linear` arrives as
`aten.addmm` (or `aten.mm`), `matmul` as `aten.mm` (folding the batch into the rows) or
`aten.bmm` (batched), `einsum` as `aten.bmm`, and a convolution's backward as one
`aten.convolution_backward`. ember keeps linear, matmul, einsum and the two halves of the
convolution backward as ops of their own, so the counter translates each into the ops PyTorch
would have run there -- with PyTorch's folding rules, which depend on the shapes, strides and
requires_grad of the operands -- and counts those with PyTorch's formulas (2 flops per
multiply-add; shared with the profiler's `with_flops`). Keys are the `ember.ops.aten` packets;
the table prints them as `aten.mm`.

On the CPU PyTorch runs scaled_dot_product_attention's fused flash kernel when it can, and has
no formula for it: it counts nothing there, forward or backward. ember's attention is always its
math composition; while a counter is active, F.scaled_dot_product_attention marks the calls
where PyTorch would have run the flash kernel (the choice nn.attention makes) and the counter
counts nothing inside them either; elsewhere (dropout, 3-d inputs, `sdpa_kernel(MATH)`) its
products count as `aten.bmm`, as PyTorch's math kernel's do.
"""
from ember._core._warnings import user_stacklevel as _user_stacklevel
import math
from collections import defaultdict

from .._core.tensor import Tensor
from .._dispatch import dispatcher as _dispatcher
from .._dispatch.ops import ops as _ops
from ..nn import attention as _attention
from ..autograd.profiler import conv_flop_count, product_flops
from .module_tracker import ModuleTracker

__all__ = ["FlopCounterMode", "register_flop_formula"]

_aten = _ops.aten


class _OpName:
    """A key for an op PyTorch has and ember does not (aten.convolution_backward)."""

    def __init__(self, name):
        self._namespace, self._name = name.split(".")

    def __repr__(self):  # as dispatcher.OpOverloadPacket's (a table prints its keys so)
        return f"<OpOverloadPacket(op='{self._namespace}.{self._name}')>"

    def __str__(self):
        return f"{self._namespace}.{self._name}"


_CONVOLUTION_BACKWARD = _OpName("aten.convolution_backward")


def get_shape(i):
    return i.shape if isinstance(i, Tensor) else i


def shape_wrapper(f):
    """A formula over shapes, called with tensors (and `out_val=` the result)."""
    def nf(*args, out_val=None, **kwargs):
        args = [get_shape(a) for a in args]
        kwargs = {k: get_shape(v) for k, v in kwargs.items()}
        out_shape = ([get_shape(o) for o in out_val] if isinstance(out_val, (tuple, list))
                     else get_shape(out_val))
        return f(*args, out_shape=out_shape, **kwargs)
    return nf


flop_registry = {}


def register_flop_formula(targets, get_raw=False):
    """Register `formula(*shapes, out_shape=...)` as the flop count of the op(s) `targets`
    (get_raw: the formula takes the tensors themselves)."""
    def register_fun(flop_formula):
        fn = flop_formula if get_raw else shape_wrapper(flop_formula)
        for target in (targets if isinstance(targets, (list, tuple)) else [targets]):
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = fn
        return flop_formula
    return register_fun


# ---- PyTorch's formulas ------------------------------------------------------------------------
@register_flop_formula(_aten.mm)
def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"matmul: inner dimensions must match (k == k2), got {k} and {k2}")
    return product_flops(1, m, k, n)


@register_flop_formula(_aten.addmm)
def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    return mm_flop(a_shape, b_shape)


@register_flop_formula(_aten.bmm)
def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs):
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2 or k != k2:
        raise AssertionError(f"bmm: shapes {list(a_shape)} and {list(b_shape)} do not match")
    return product_flops(b, m, k, n)


@register_flop_formula(_aten.baddbmm)
def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    return bmm_flop(a_shape, b_shape)


@register_flop_formula(_aten.convolution)
def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args,
              out_shape=None, **kwargs):
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


@register_flop_formula(_CONVOLUTION_BACKWARD)
def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation,
                       transposed, _output_padding, _groups, output_mask, out_shape, **kwargs):
    """grad_input is a transposed convolution of grad_output with the weight; grad_weight a
    convolution of the input with grad_output, batch and channels swapped."""
    def t(shape):
        return [shape[1], shape[0]] + list(shape[2:])
    flop_count = 0
    if output_mask[0]:
        flop_count += conv_flop_count(grad_out_shape, w_shape, get_shape(out_shape[0]),
                                      not transposed)
    if output_mask[1]:
        grad_weight_shape = get_shape(out_shape[1])
        if transposed:
            flop_count += conv_flop_count(t(grad_out_shape), t(x_shape), t(grad_weight_shape))
        else:
            flop_count += conv_flop_count(t(x_shape), t(grad_out_shape), t(grad_weight_shape))
    return flop_count


def sdpa_flop_count(query_shape, key_shape, value_shape):
    """Attention's two batched products, q @ k^T and attn @ v (GQA: key/value heads shared)."""
    b, h_q, s_q, d_q = query_shape
    _b2, h_kv, s_k, _d2 = key_shape
    _b3, _h3, _s3, d_v = value_shape
    if not (b == _b2 == _b3 and h_kv == _h3 and d_q == _d2 and s_k == _s3):
        raise AssertionError(f"sdpa_flop_count: query/key/value shapes are incompatible: "
                             f"q={query_shape}, k={key_shape}, v={value_shape}")
    return (bmm_flop((b * h_q, s_q, d_q), (b * h_q, d_q, s_k))
            + bmm_flop((b * h_q, s_q, s_k), (b * h_q, s_k, d_v)))


# ---- the ops PyTorch would have run: ember op -> [(key, shape args, out_shape)] ----------------
class _Operand:
    """What the folding rules read of a matmul operand."""
    __slots__ = ("shape", "strides", "requires_grad")

    def __init__(self, shape, strides, requires_grad):
        self.shape, self.strides, self.requires_grad = tuple(shape), tuple(strides), \
            requires_grad

    @classmethod
    def of(cls, t):
        return cls(t.shape, t.stride(), t.requires_grad)

    def mT(self):
        s, st = self.shape, self.strides
        return _Operand(s[:-2] + (s[-1], s[-2]), st[:-2] + (st[-1], st[-2]),
                        self.requires_grad)

    def drop_first(self):
        return _Operand(self.shape[1:], self.strides[1:], self.requires_grad)


def _should_fold(a, b):
    """PyTorch's matmul folds a >= 3-d operand against a 1-d or 2-d one into mm/mv when that
    costs no copy, or when the smaller operand wants a gradient (its gradient is then one mm
    rather than a batch of them summed)."""
    a_larger = len(a.shape) >= len(b.shape)
    t1 = a if a_larger else b.mT()
    dim_t2 = len(b.shape) if a_larger else len(a.shape)
    if not (len(t1.shape) >= 3 and dim_t2 in (1, 2)):
        return False
    if (b if a_larger else a).requires_grad:
        return True
    if len(a.shape) == 2:
        return False
    if math.prod(t1.shape) == 0:
        return True
    return all(t1.strides[i] == t1.strides[i + 1] * t1.shape[i + 1]
               for i in range(len(t1.shape) - 2))


def _matmul_ops(a, b):
    """[(op, (shape, shape), (requires_grad, requires_grad))]: the products PyTorch's matmul
    runs for operands like `a` and `b`."""
    rg = (a.requires_grad, b.requires_grad)
    da, db = len(a.shape), len(b.shape)
    if db == 1 and da <= 2:
        return []  # dot, mv: no formula
    if da == 1 and db == 2:
        return [(_aten.mm, ((1, a.shape[0]), b.shape), rg)]
    if da == 2 and db == 2:
        return [(_aten.mm, (a.shape, b.shape), rg)]
    if da == 3 and db == 3 and a.shape[0] != b.shape[0] and 1 in (a.shape[0], b.shape[0]):
        # a batch of one against a batch: the single matrix is used as a 2-d operand
        return _matmul_ops(a.drop_first(), b) if a.shape[0] == 1 else \
            _matmul_ops(a, b.drop_first())
    if _should_fold(a, b):
        if da >= db:
            t1, t2 = a, b
        else:
            t1, t2 = b.mT(), (a.mT() if da == 2 else a)
        if len(t2.shape) == 1:
            return []  # mv
        rows = math.prod(t1.shape[:-1])
        return [(_aten.mm, ((rows, t1.shape[-1]), t2.shape),
                 (t1.requires_grad, t2.requires_grad))]
    n = a.shape[-2] if da > 1 else 1
    m1 = a.shape[-1]
    p = b.shape[-1] if db > 1 else 1
    batch = _broadcast(a.shape[:-2], b.shape[:-2] if db > 1 else ())
    return [(_aten.bmm, ((batch, n, m1), (batch, m1, p)), rg)]


def _broadcast(s1, s2):
    out = 1
    for i in range(1, max(len(s1), len(s2)) + 1):
        x = s1[-i] if i <= len(s1) else 1
        y = s2[-i] if i <= len(s2) else 1
        out *= max(x, y) if min(x, y) != 0 else 0
    return out


def _linear_ops(x, w, bias):
    """F.linear: addmm over the rows when there is a bias and the input folds without a copy,
    otherwise matmul(x, w.t())."""
    if bias is not None and (x.dim() == 2 or x.is_contiguous()):
        rows = x.numel() // x.shape[-1] if x.shape[-1] else math.prod(x.shape[:-1])
        return [(_aten.addmm, (tuple(bias.shape), (rows, x.shape[-1]),
                               (w.shape[1], w.shape[0])), (x.requires_grad, w.requires_grad))]
    return _matmul_ops(_Operand.of(x), _Operand.of(w).mT())


def _einsum_ops(equation, operands):
    """einsum contracts its operands left to right, each pair as one bmm over (indices kept
    on both sides) x (left only) x (contracted) x (right only), or a plain product when
    nothing is contracted; indices only one operand has and nothing later needs are summed
    away first."""
    inputs, _, output = equation.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if not output and "->" not in equation:
        counts = defaultdict(int)
        for term in terms:
            for c in term.replace("...", ""):
                counts[c] += 1
        output = ("..." if "..." in inputs else "") + "".join(
            sorted(c for c, n in counts.items() if n == 1))
    sizes = {}
    labelled = []
    ellipsis_rank = max((t.dim() - len(term.replace("...", ""))
                         for term, t in zip(terms, operands) if "..." in term), default=0)
    ell = [chr(0x100 + i) for i in range(ellipsis_rank)]  # stand-in labels for "..." dims
    for term, t in zip(terms, operands):
        if "..." in term:
            head, tail = term.split("...")
            k = t.dim() - len(head) - len(tail)
            term_labels = list(head) + ell[ellipsis_rank - k:] + list(tail)
        else:
            term_labels = list(term)
        for label, n in zip(term_labels, t.shape):
            sizes[label] = max(sizes.get(label, 1), n)
        labelled.append(term_labels)
    out_labels = set(output.replace("...", "")) | set(ell)
    result = []
    current = labelled[0]
    current_rg = operands[0].requires_grad
    for i in range(1, len(labelled)):
        right = labelled[i]
        later = out_labels.union(*[set(t) for t in labelled[i + 1:]])
        left_set, right_set = set(current), set(right)
        batch = [c for c in left_set & right_set if c in later]
        contracted = [c for c in left_set & right_set if c not in later]
        left_only = [c for c in left_set - right_set if c in later]
        right_only = [c for c in right_set - left_set if c in later]
        b = math.prod(sizes[c] for c in batch)
        k = math.prod(sizes[c] for c in contracted)
        m = math.prod(sizes[c] for c in left_only)
        n = math.prod(sizes[c] for c in right_only)
        if contracted:  # nothing to sum over: an elementwise product, no bmm
            result.append((_aten.bmm, ((b, m, k), (b, k, n)),
                           (current_rg, operands[i].requires_grad)))
        current = batch + left_only + right_only
        current_rg = current_rg or operands[i].requires_grad
    return result


def _conv_backward_input_ops(args, out):
    grad_out, weight, input_size, stride, padding, dilation, transposed, out_pad, groups = \
        args[:9]
    return [(_CONVOLUTION_BACKWARD,
             (grad_out.shape, tuple(input_size), weight.shape, None, stride, padding, dilation,
              transposed, out_pad, groups, [True, False, False]),
             [tuple(input_size), None, None])]


def _conv_backward_weight_ops(args, out):
    grad_out, x, weight_size, stride, padding, dilation, transposed, out_pad, groups = args[:9]
    return [(_CONVOLUTION_BACKWARD,
             (grad_out.shape, x.shape, tuple(weight_size), None, stride, padding, dilation,
              transposed, out_pad, groups, [False, True, False]),
             [None, tuple(weight_size), None])]


def _shapes(args):
    return tuple(get_shape(a) for a in args)


def _products_backward(key, shapes, requires_grad):
    """The products PyTorch's backward of one mm/addmm/bmm/baddbmm runs: grad @ b^T for a,
    a^T @ grad for b, each only for an operand that requires grad."""
    a, b = shapes[-2], shapes[-1]
    out = []
    if key in (_aten.mm, _aten.addmm):
        (m, k), (_, n) = a, b
        if requires_grad[0]:
            out.append((_aten.mm, ((m, n), (n, k))))
        if requires_grad[1]:
            out.append((_aten.mm, ((k, m), (m, n))))
    else:
        (bt, m, k), (_, _, n) = a, b
        if requires_grad[0]:
            out.append((_aten.bmm, ((bt, m, n), (bt, n, k))))
        if requires_grad[1]:
            out.append((_aten.bmm, ((bt, k, m), (bt, m, n))))
    return out


_TORCH_OPS = {
    "mm": lambda a, out: [(_aten.mm, _shapes(a[:2]), out.shape)],
    "bmm": lambda a, out: [(_aten.bmm, _shapes(a[:2]), out.shape)],
    "addmm": lambda a, out: [(_aten.addmm, _shapes(a[:3]), out.shape)],
    "baddbmm": lambda a, out: [(_aten.baddbmm, _shapes(a[:3]), out.shape)],
    "convolution": lambda a, out: [(_aten.convolution, _shapes(a), out.shape)],
    "_convolution_with_columns": lambda a, out: [
        (_aten.convolution, _shapes(a[:6]) + (False, [0] * (a[1].dim() - 2), a[6]),
         out[0].shape)],
    "_convolution_backward_input": _conv_backward_input_ops,
    "_convolution_backward_weight": _conv_backward_weight_ops,
}

# ember ops that PyTorch decomposes into products: their forward counts those products, and
# their backward node counts the products of the products' backward (and nothing else runs
# inside it is counted: ember's derivative need not take PyTorch's route).
_DECOMPOSED = {
    "matmul": lambda a: _matmul_ops(_Operand.of(a[0]), _Operand.of(a[1])),
    "linear": lambda a: _linear_ops(*a[:3]),
    "einsum": lambda a: _einsum_ops(a[0], a[1]),
}


# ---- the table ---------------------------------------------------------------------------------
suffixes = ["", "K", "M", "B", "T"]


def get_suffix_str(number):
    return suffixes[max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))]


def convert_num_with_suffix(number, suffix):
    index = suffixes.index(suffix)
    return f"{number / 1000 ** index:.3f}" + suffixes[index]


def convert_to_percent_str(num, denom):
    if denom == 0:
        return "0%"
    return f"{num / denom:.2%}"


def _op_name(key):
    return f"{key._namespace}.{key._name}"


def _table(rows, header):
    """The layout `tabulate(rows, headers, colalign=("left", "right", "right"))` prints
    (PyTorch's get_table uses tabulate; ember lays it out itself): a column of numbers is
    shown in `g` format, columns two spaces apart, headers padded by two."""
    columns = [list(col) for col in zip(*rows)]
    for j, col in enumerate(columns):
        try:
            columns[j] = [format(float(c), "g") for c in col]
        except ValueError:
            pass
    widths = [max([len(h) + 2] + [len(c) for c in col]) for h, col in zip(header, columns)]

    def line(cells):
        return "  ".join(c.ljust(w) if j == 0 else c.rjust(w)
                         for j, (c, w) in enumerate(zip(cells, widths)))
    out = [line(header), "  ".join("-" * w for w in widths)]
    out.extend(line(cells) for cells in zip(*columns))
    return "\n".join(out)


class FlopCounterMode:
    """`with FlopCounterMode() as fc:` counts flops; `fc.get_total_flops()`,
    `fc.get_flop_counts()` ({module name: {op: flops}}, 'Global' for all) and
    `fc.get_table(depth)`, which is printed on exit when `display`."""

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        import warnings
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it",
                          stacklevel=_user_stacklevel())
        self.flop_registry = {**flop_registry, **{
            k: v if getattr(v, "_get_raw", False) else shape_wrapper(v)
            for k, v in (custom_mapping or {}).items()}}
        self.mod_tracker = ModuleTracker()
        self._active = False
        self._in_decomposed_backward = 0
        self._node_hooks = []

    def get_total_flops(self):
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        if depth is None:
            depth = self.depth
        if depth is None:
            depth = 999999
        global_flops = self.get_total_flops()
        global_suffix = get_suffix_str(global_flops)
        subsumed = False

        def process_mod(mod_name, mod_depth):
            nonlocal subsumed
            total = sum(self.flop_counts[mod_name].values())
            subsumed |= total >= global_flops
            pad = " " * mod_depth
            rows = [[pad + mod_name, convert_num_with_suffix(total, global_suffix),
                     convert_to_percent_str(total, global_flops)]]
            for k, v in self.flop_counts[mod_name].items():
                rows.append([pad + " - " + _op_name(k), convert_num_with_suffix(v, global_suffix),
                             convert_to_percent_str(v, global_flops)])
            return rows

        values = []
        for mod in sorted(self.flop_counts):
            if mod == "Global":
                continue
            mod_depth = mod.count(".") + 1
            if mod_depth > depth:
                continue
            values.extend(process_mod(mod, mod_depth - 1))
        if "Global" in self.flop_counts and not subsumed:
            for v in values:
                v[0] = " " + v[0]
            values = process_mod("Global", 0) + values
        if not values:
            values = [["Global", "0", "0%"]]
        return _table(values, ["Module", "FLOP", "% Total"])

    def __enter__(self):
        self.flop_counts.clear()
        self._in_decomposed_backward = 0
        self.mod_tracker.__enter__()
        _dispatcher._modes.append(self._on_op)
        _attention._flash_watchers[0] += 1
        self._active = True
        return self

    def __exit__(self, *args):
        if not self._active:
            raise AssertionError("Internal error: FlopCounter.__exit__ called but mode is None")
        _attention._flash_watchers[0] -= 1
        _dispatcher._modes.remove(self._on_op)
        self._active = False
        for h in self._node_hooks:
            h.remove()
        self._node_hooks.clear()
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return False

    def _count_flops(self, func_packet, out, args, kwargs):
        fn = self.flop_registry.get(func_packet)
        if fn is not None:
            flops = fn(*args, **kwargs, out_val=out)
            for par in set(self.mod_tracker.parents):
                self.flop_counts[par][func_packet] += flops
        return out

    def _on_op(self, op, args, level):
        out = _dispatcher.call_in_modes(op, args, level - 1)
        if self._in_decomposed_backward:
            return out
        if _attention._flash_depth[0]:  # PyTorch's flash kernel: nothing counted, backward too
            node = out.grad_fn if isinstance(out, Tensor) else None
            if node is not None:
                self._count_backward_at(node, [])
            return out
        schema = op.schema
        name = schema.name if schema.namespace == "aten" else None
        if name in _DECOMPOSED:
            products = _DECOMPOSED[name](args)
            for key, shapes, _ in products:
                self._count_flops(key, None, shapes, {})
            node = out.grad_fn if isinstance(out, Tensor) else None
            if node is not None:
                self._count_backward_at(node, products)
            return out
        translate = _TORCH_OPS.get(name)
        if translate is None:  # an op counted as itself (custom_mapping, register_flop_formula)
            packet = _dispatcher._packets.get((schema.namespace, schema.name))
            return self._count_flops(packet, out, args, {})
        for key, shape_args, out_shape in translate(args, out):
            self._count_flops(key, out_shape, shape_args, {})
        return out

    def _count_backward_at(self, node, products):
        def enter(grad_outputs):
            self._in_decomposed_backward += 1
            for key, shapes, requires_grad in products:
                for bw_key, bw_shapes in _products_backward(key, shapes, requires_grad):
                    self._count_flops(bw_key, None, bw_shapes, {})

        def leave(grad_inputs, grad_outputs):
            self._in_decomposed_backward -= 1
        self._node_hooks.append(node.register_prehook(enter))
        self._node_hooks.append(node.register_hook(leave))

