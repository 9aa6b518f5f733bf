"""Generated Python over NumPy for a recorded graph: elementwise fusion, a static memory plan,
and the source you can print (`CompiledGraph.code`).

Each call becomes one line. Ops with a NumPy lowering here (elementwise ops, views, linear,
mm/matmul of matrices, sums over dims) become the NumPy calls their CPU kernels make, on
arrays; every other op calls its CPU kernel (`op.redispatch("CPU", ...)`) on tensors, so the
generated code computes exactly what the kernels compute. Arrays and tensors are converted only
where one kind of line hands a value to the other, and wrapping an array as a tensor copies
nothing. A kernel with a faster lowering elsewhere in this package (the convolution input
gradient, conv_backward.py; the stride-1 convolution with kept columns, conv_forward.py; 2x2
max pooling over tiling windows, pool_tiles.py) is replaced by it only when the lowering
reproduced the kernel's results bit for bit on the capture run's tensors; the forward ones
hand inputs they do not take at run time (non-contiguous, NaN) back to the kernel.

Fusion: a chain of elementwise calls with the same result shape and dtype, each reading the one
before it and nothing else using the intermediate, becomes one kernel function writing every
step into the same buffer with `out=` -- one allocation for the chain instead of one per op.
When the chain's first call reads an array that dies there (made by this code or a private
kernel result, not leaving the graph, read by nothing later), the chain writes over it instead:
a linear layer's ReLU runs in place on the product.

Epilogues: a ReLU group that reads only a linear layer's or a lowered convolution's output
(which dies there) becomes part of that call -- `np.maximum(y, 0, out=y)` right after the bias
for the linear layer; for the convolution, on each part of its output right after the bias
(conv_forward.py) -- and the group's output is the product's array.

Memory plan: the buffer of a fused chain or a product whose Value never leaves the graph -- it
is not an output, not saved for backward, and no tensor sharing its memory is -- comes from a
pool allocated at the first run and kept across runs. Buffers are handed out in call order and
returned to the pool after the last call that reads the Value or anything sharing its memory,
so a later chain of the same shape and dtype reuses them. Values that leave the graph get new
caching-allocator blocks.
"""
import numpy as np

from .._core.tensor import _wrap_external
from .._core.caching_allocator import empty as _empty
from .._core import dtype as D
from .._dispatch.recorder import Value
from .passes import writes
from . import conv_backward, conv_forward, pool_tiles

_FLOATS = (D.float32, D.float64)

# op name -> (number of tensor operands read, NumPy statement template over {a}, {b}, ..., {out})
_ELEMENTWISE = {
    "add.Tensor": ("np.add({0}, {1}, out={out})", lambda args: args[2] == 1),
    "sub.Tensor": ("np.subtract({0}, {1}, out={out})", lambda args: args[2] == 1),
    "mul.Tensor": ("np.multiply({0}, {1}, out={out})", None),
    "div.Tensor_mode": ("np.divide({0}, {1}, out={out})", lambda args: args[2] is None),
    "neg": ("np.negative({0}, out={out})", None),
    "exp": ("np.exp({0}, out={out})", None),
    "tanh": ("np.tanh({0}, out={out})", None),
    "sqrt": ("np.sqrt({0}, out={out})", None),
    "relu": ("np.maximum({0}, 0, out={out})", None),
    "threshold_backward": ("_threshold_backward_into({0}, {1}, {2}, {out})", None),
}


def _threshold_backward_into(g, x, threshold, out):
    """The threshold_backward kernel's bit mask (ember/_aten/elementwise.py), into `out`."""
    bits = np.dtype(f"i{out.dtype.itemsize}")
    # 0 where x <= threshold, all ones elsewhere (NaN too): the comparison's bytes minus 1
    keep = np.subtract(np.less_equal(x, threshold).view(np.int8), 1, dtype=bits)
    np.bitwise_and(np.asarray(g).view(bits), keep, out=out.view(bits))


def _operand_ok(a, dt):
    if type(a) is Value:
        return a.dtype is dt
    return type(a) in (int, float) or a is None or isinstance(a, str)


def elementwise_template(call):
    """The NumPy statement of an elementwise call, or None when it has no exact lowering here
    (other dtypes, mixed dtypes, alpha != 1, rounding modes...)."""
    entry = _ELEMENTWISE.get(call.op.short_name)
    if entry is None or call.outs[0] is None or len(call.outs) != 1:
        return None
    template, ok = entry
    out = call.outs[0]
    if out.dtype not in _FLOATS or not all(_operand_ok(a, out.dtype) for a in call.args):
        return None
    if ok is not None and not ok(call.args):
        return None
    if type(call.args[0]) is not Value and type(call.args[1] if len(call.args) > 1 else None) \
            is not Value:
        return None
    return template


def _view_lowering(call):
    name = call.op.short_name
    out = call.outs[0] if len(call.outs) == 1 else None
    if out is None or type(call.args[0]) is not Value:
        return None
    if name in ("view", "_unsafe_view", "reshape"):
        return "{0}.reshape(%r)" % (out.shape,)
    if name == "t":
        return "{0}.T"
    if name == "transpose.int":
        return "np.swapaxes({0}, %d, %d)" % (call.args[1], call.args[2])
    if name == "permute":
        return "{0}.transpose(%r)" % (tuple(call.args[1]),)
    if name == "expand":
        return "np.broadcast_to({0}, %r)" % (out.shape,)
    return None


def _linear_lowering(call):
    if call.op.short_name != "linear" or call.outs[0].dtype not in _FLOATS:
        return None
    x, w, b = call.args
    if not all(type(v) is Value and v.dtype is call.outs[0].dtype for v in (x, w)):
        return None
    if b is not None and (type(b) is not Value or b.dtype is not x.dtype):
        return None
    return True


def _product_lowering(call):
    """mm, and matmul of two matrices, as one np.matmul (BLAS reads a transposed operand in
    place: no copy for `a.T @ b`)."""
    if call.op.short_name not in ("mm", "matmul") or len(call.outs) != 1:
        return False
    out = call.outs[0]
    a, b = call.args
    return (out is not None and out.dtype in _FLOATS and type(a) is Value and type(b) is Value
            and a.dtype is out.dtype and b.dtype is out.dtype and len(a.shape) == 2
            and len(b.shape) == 2)


def _sum_lowering(call):
    """sum over dims of a float tensor, with a non-0-d result, as np.sum (the kernel's call)."""
    if call.op.short_name != "sum.dim_IntList" or len(call.outs) != 1:
        return None
    out = call.outs[0]
    x, dim, keepdim, dtype = call.args
    if out is None or type(x) is not Value or x.dtype not in _FLOATS or dtype is not None \
            or not out.shape or not dim or type(dim) is not list:
        return None
    n = len(x.shape)
    dims = tuple(sorted(set(d % n for d in dim)))
    return "np.sum({0}, axis=%r, keepdims=%r, dtype=np.%s)" % (dims, bool(keepdim),
                                                                 _np_name(out))


class FusionGroup:
    """An elementwise chain compiled into one kernel function."""

    def __init__(self, calls):
        self.calls = calls

    @property
    def out(self):
        return self.calls[-1].outs[0]

    def __repr__(self):
        return " -> ".join(c.op.short_name for c in self.calls) + \
            f"  [{str(self.out.dtype).removeprefix('torch.')}{list(self.out.shape)}]"


def fusion_groups(graph, escaping):
    """Split the calls into FusionGroups (elementwise chains) and single calls, in order."""
    uses = {}
    for c in graph.calls:
        for v in c.values_read():
            uses[v] = uses.get(v, 0) + 1
    items, group = [], None
    for c in graph.calls:
        if elementwise_template(c) is not None:
            out = c.outs[0]
            if group is not None:
                last = group.out
                if (last.shape == out.shape and last.dtype is out.dtype and uses.get(last) == 1
                        and last not in escaping and last in set(c.values_read())):
                    group.calls.append(c)
                    continue
            group = FusionGroup([c])
            items.append(group)
            continue
        group = None
        items.append(c)
    return items


def _checked_kernel(call, tensors):
    """A faster NumPy lowering of a kernel call, as (function, its name in the code), when
    one applies and reproduces the kernel's result bit for bit on the capture run's tensors;
    else None."""
    if call.op.short_name != "_convolution_backward_input" or len(call.outs) != 1:
        return None
    args = [tensors.get(a) if type(a) is Value else a for a in call.args]
    result = tensors.get(call.outs[0])
    if result is None or any(a is None for a in args[:2]) or args[0]._np is None:
        return None
    g, w = args[0]._np, args[1]._np
    if not conv_backward.applies(g, w, *args[2:]):
        return None
    mine = conv_backward.conv_input_grad(g, w, tuple(args[2]), args[3], args[4], args[5])
    if mine.dtype != result._np.dtype or not np.array_equal(mine, result._np):
        return None
    return conv_backward.conv_input_grad, "_conv_input_grad"


def _same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and \
        np.array_equal(a.view(np.uint8), b.view(np.uint8))


def _checked_pool(call, tensors):
    """Whether max_pool2d_with_indices goes through pool_tiles.max_pool_tiles: it applies
    and reproduced the kernel's values and indices bit for bit on the capture run's tensors."""
    if call.op.short_name != "max_pool2d_with_indices" or len(call.outs) != 2 or \
            None in call.outs or len(call.args) != 6 or type(call.args[0]) is not Value:
        return False
    x = tensors.get(call.args[0])
    values, indices = (tensors.get(v) for v in call.outs)
    if x is None or values is None or indices is None or x._np is None or \
            not pool_tiles.applies(x._np, *call.args[1:]):
        return False
    mine = pool_tiles.max_pool_tiles(x._np, lambda: None)
    return mine is not None and _same_bits(mine[0], values._np) and \
        _same_bits(mine[1], indices._np)


def _checked_pool_backward(call, tensors):
    """Whether max_pool2d_with_indices_backward goes through
    pool_tiles.max_pool_tiles_backward: 2x2 tiling windows (which never overlap), and it
    reproduced the kernel's result bit for bit on the capture run's tensors."""
    if call.op.short_name != "max_pool2d_with_indices_backward" or len(call.outs) != 1 or \
            call.outs[0] is None or len(call.args) != 8 or \
            any(type(call.args[k]) is not Value for k in (0, 1, 7)):
        return False
    g, x, idx = (tensors.get(call.args[k]) for k in (0, 1, 7))
    r = tensors.get(call.outs[0])
    if g is None or x is None or idx is None or r is None or x._np is None or \
            g._np is None or idx._np is None or g._np.dtype != x._np.dtype or \
            not pool_tiles.applies(x._np, *call.args[2:7]):
        return False
    mine = pool_tiles.max_pool_tiles_backward(g._np, idx._np, tuple(x.shape))
    return _same_bits(mine, r._np)


def _checked_conv_forward(call, tensors):
    """Whether `_convolution_with_columns` goes through conv_forward.conv_with_columns: it
    applies and reproduced the kernel's output and columns bit for bit on the capture run's
    tensors."""
    if call.op.short_name != "_convolution_with_columns" or None in call.outs or \
            len(call.args) != 7 or len(call.outs) != 2 or \
            any(type(a) is not Value for a in call.args[:2]) or \
            (call.args[2] is not None and type(call.args[2]) is not Value):
        return False
    x, w, b = (None if a is None else tensors.get(a) for a in call.args[:3])
    y, cols = (tensors.get(v) for v in call.outs)
    if x is None or w is None or y is None or cols is None or \
            (call.args[2] is not None and b is None) or x._np is None or w._np is None:
        return False
    stride, padding, dilation, groups = call.args[3:]
    b = None if b is None else b._np
    if not conv_forward.applies(x._np, w._np, b, stride, padding, dilation, groups):
        return False
    y2, cols2 = conv_forward.conv_with_columns(x._np, w._np, b, padding)
    return _same_bits(y2, y._np) and _same_bits(cols2, cols._np)


def _fallback(op, arrays, args):
    """The kernel's results as arrays, for inputs a lowering does not take."""
    return tuple(r._np for r in op.redispatch(
        "CPU", tuple(None if a is None else _wrap_external(a) for a in arrays) + args))


class CompiledGraph:
    """A graph turned into a Python function `fn(inputs) -> results` over NumPy."""

    def __init__(self, graph, inputs, results, constants, aliases, escaping, name="forward",
                 tensors=None):
        self.graph = graph
        self.name = name
        self.items = fusion_groups(graph, escaping)
        self.fusion = [g for g in self.items if isinstance(g, FusionGroup) and len(g.calls) > 1]
        self.code, env, self.n_buffers = _generate(self.items, inputs, results, constants,
                                                   aliases, escaping, name, tensors or {})
        namespace = dict(env)
        exec(compile(self.code, f"<ember.compile {name}>", "exec"), namespace)
        self.fn = namespace[name]
        self.buffers = [None] * self.n_buffers

    def __call__(self, inputs):
        return self.fn(inputs, self.buffers)


def _generate(items, inputs, results, constants, aliases, escaping, name, tensors):
    env = {"np": np, "_wrap": _wrap_external, "_empty": _empty,
           "_threshold_backward_into": _threshold_backward_into,
           "_max_pool_tiles": pool_tiles.max_pool_tiles, "_fallback": _fallback,
           "_max_pool_tiles_backward": pool_tiles.max_pool_tiles_backward}
    arr, ten = {}, {}  # Value -> the name of its array / tensor in the generated code
    lines = []
    for i, v in enumerate(inputs):
        ten[v] = f"t{v.index}"
        lines.append(f"    t{v.index} = inputs[{i}]  # {v.name}")
    for v, t in constants.items():
        env[f"c{v.index}"] = t
        ten[v] = f"c{v.index}"

    def as_array(v):
        if v not in arr:
            arr[v] = f"a{v.index}"
            lines.append(f"    a{v.index} = {ten[v]}._np")
        return arr[v]

    def as_tensor(v):
        if v not in ten:
            ten[v] = f"t{v.index}"
            lines.append(f"    t{v.index} = _wrap({arr[v]})")
        return ten[v]

    def expr(a, conv):
        if type(a) is Value:
            return conv(a)
        if type(a) is list:
            return "[" + ", ".join(expr(x, conv) for x in a) + "]"
        if type(a) is float and not np.isfinite(a):
            return f"float({repr(a)!r})"
        if hasattr(a, "__module__") and type(a).__module__.startswith("ember"):
            key = f"k{len(env)}"
            env[key] = a
            return key
        return repr(a)

    # the memory plan: last reader of every Value (through its aliases)
    last = {}
    for k, item in enumerate(items):
        for c in (item.calls if isinstance(item, FusionGroup) else [item]):
            for v in c.values_read():
                for w in aliases.get(v, (v,)):
                    last[w] = k
    # a value a fused chain will overwrite in place, when the chain's result leaves the graph,
    # gets a new block rather than a pool slot (the slot would leave with it)
    allocated = {item.out if isinstance(item, FusionGroup) else item.outs[0]
                 for item in items if isinstance(item, FusionGroup) or _linear_lowering(item)
                 or _product_lowering(item)}
    unpooled = set()
    for k, item in enumerate(items):
        if isinstance(item, FusionGroup) and (item.out in escaping or last.get(item.out, -1) <= k):
            for x in item.calls[0].values_read():
                if x in allocated and _donor(x, item, k, last, escaping):
                    unpooled.add(x)
                    break
    free, n_buffers, owner, release = {}, 0, {}, {}
    fresh = set()  # Values whose array the generated code allocated (a pool slot or a new block)

    def buffer(v, k):
        """Where the array of v, made by item k, goes: a pool slot when v dies inside the
        graph, else a new caching-allocator block."""
        nonlocal n_buffers
        fresh.add(v)
        if v in escaping or v in unpooled or last.get(v, -1) <= k:
            return f"_empty({v.shape!r}, np.{_np_name(v)})"
        key = (v.shape, v.dtype)
        pool = free.get(key)
        slot = pool.pop() if pool else None
        if slot is None:
            slot = n_buffers
            n_buffers += 1
        owner[v] = (slot, key)
        release.setdefault(last[v], []).append(v)
        return f"_buffer({slot}, {v.shape!r}, np.{_np_name(v)})"

    def reusable(x, out, k, item):
        """Whether `out` (made by item k) may be written over x's array: x is an array this
        code allocated, of out's shape and dtype, not leaving the graph, read (itself or
        through a view) by nothing after item k (nor by the group after its first call), and a pool slot never
        ends up escaping."""
        if x not in fresh or not _donor(x, item, k, last, escaping):
            return False
        return not (x in owner and (out in escaping or last.get(out, -1) <= k))

    def reuse(x, out):
        """out takes over x's array (and its pool slot, released after out's last reader)."""
        fresh.add(out)
        if x in owner:
            slot = owner.pop(x)
            release[last[x]].remove(x)
            owner[out] = slot
            release.setdefault(last[out], []).append(out)
        return arr[x]

    def lowered(c, call_src):
        """A checked lowering's line: its results are new arrays of this code's own."""
        lines.append("    " + ", ".join(f"a{r.index}" for r in c.outs) + f" = {call_src}  "
                     f"# {c.op.short_name} (checked against the kernel)")
        for r in c.outs:
            arr[r] = f"a{r.index}"
            ten.pop(r, None)
            fresh.add(r)

    # convolutions with a checked lowering, and the ReLU groups their epilogue takes over
    # (and the linear layers) whose epilogue runs the ReLU group that follows them
    conv_checked, relu_into = set(), {}
    for k, item in enumerate(items):
        if isinstance(item, FusionGroup):
            continue
        conv = _checked_conv_forward(item, tensors)
        if conv:
            conv_checked.add(k)
        if (conv or _linear_lowering(item)) and _relu_epilogue(
                item, items[k + 1] if k + 1 < len(items) else None, k, last, escaping, aliases):
            relu_into[k] = items[k + 1]
    fused_relu = {}  # relu group -> the convolution output it takes over

    fused_count = 0
    for k, item in enumerate(items):
        if isinstance(item, FusionGroup) and item in fused_relu:
            v = fused_relu.pop(item)
            lines.append(f"    a{item.out.index} = {reuse(v, item.out)}  # relu (in the "
                         "epilogue above)")
            arr[item.out] = f"a{item.out.index}"
            ten.pop(item.out, None)
        elif isinstance(item, FusionGroup):
            out = item.out
            operands, body, names = [], [], {}
            for c in item.calls:
                template = elementwise_template(c)
                args = []
                for a in c.args:
                    if type(a) is Value:
                        if a in names:
                            args.append(names[a])
                        else:
                            names[a] = f"x{len(operands)}"
                            operands.append(a)
                            args.append(names[a])
                    else:
                        args.append(repr(a))
                body.append("    " + template.format(*args, out="out"))
                names[c.outs[0]] = "out"
            fname = f"fused_{fused_count}"
            fused_count += 1
            params = ", ".join(names[v] for v in operands)
            src = f"def {fname}({params}, out):\n" + "\n".join(body) + "\n    return out\n"
            env["_src_" + fname] = src
            exec(compile(src, f"<ember.compile {fname}>", "exec"), env)
            args = [as_array(v) for v in operands]
            donor = next((v for v in operands
                          if reusable(v, out, k, item)), None)
            buf = reuse(donor, out) if donor is not None else buffer(out, k)
            lines.append(f"    # {item!r}" + (f"  (in place over a{donor.index})"
                                               if donor is not None else ""))
            lines.append(f"    a{out.index} = {fname}({', '.join(args)}, {buf})")
            arr[out] = f"a{out.index}"
            ten.pop(out, None)
        else:
            c = item
            view = _view_lowering(c)
            total = _sum_lowering(c)
            if view is not None:
                v = c.outs[0]
                lines.append(f"    a{v.index} = " + view.format(as_array(c.args[0])))
                arr[v] = f"a{v.index}"
            elif total is not None:
                v = c.outs[0]
                lines.append(f"    a{v.index} = " + total.format(as_array(c.args[0])) +
                             f"  # {c.op.short_name}")
                arr[v] = f"a{v.index}"
            elif _linear_lowering(c):
                x, w, b = c.args
                v = c.outs[0]
                lines.append(f"    a{v.index} = np.matmul({as_array(x)}, {as_array(w)}.T, "
                             f"out={buffer(v, k)})  # linear")
                if b is not None:
                    lines.append(f"    a{v.index} += {as_array(b)}")
                if k in relu_into:
                    lines.append(f"    np.maximum(a{v.index}, 0, out=a{v.index})")
                    fused_relu[relu_into[k]] = v
                arr[v] = f"a{v.index}"
            elif (checked := _checked_kernel(c, tensors)) is not None:
                fn, fname = checked
                env[fname] = fn
                key = f"op{len(env)}"
                env[key] = c.op
                g, w, size, stride, padding, dilation = c.args[:6]
                gw = f"{as_array(g)}, {as_array(w)}"
                rest = ", ".join(expr(a, as_tensor) for a in c.args[2:])
                lowered(c, f"{fname}({gw}, {tuple(size)!r}, {stride!r}, {padding!r}, "
                           f"{dilation!r}, lambda: _fallback({key}, ({gw}), ({rest},))[0])")
            elif k in conv_checked:
                env["_conv_with_columns"] = conv_forward.conv_with_columns
                key = f"op{len(env)}"
                env[key] = c.op
                x, w, b = c.args[:3]
                xwb = f"{as_array(x)}, {as_array(w)}, " + ("None" if b is None else as_array(b))
                rest = ", ".join(expr(a, as_tensor) for a in c.args[3:])
                relu = ", relu=True" if k in relu_into else ""
                lowered(c, f"_conv_with_columns({xwb}, {list(c.args[4])!r}, "
                           f"lambda: _fallback({key}, ({xwb}), ({rest},)){relu})")
                if relu:
                    fused_relu[relu_into[k]] = c.outs[0]
            elif _checked_pool(c, tensors):
                key = f"op{len(env)}"
                env[key] = c.op
                x = c.args[0]
                rest = ", ".join(expr(a, as_tensor) for a in c.args[1:])
                lowered(c, f"_max_pool_tiles({as_array(x)}, "
                           f"lambda: _fallback({key}, ({as_array(x)},), ({rest},)))")
            elif _checked_pool_backward(c, tensors):
                g, x, idx = c.args[0], c.args[1], c.args[7]
                lowered(c, f"_max_pool_tiles_backward({as_array(g)}, {as_array(idx)}, "
                           f"{x.shape!r})")
            elif _product_lowering(c):
                a, b = c.args
                v = c.outs[0]
                lines.append(f"    a{v.index} = np.matmul({as_array(a)}, {as_array(b)}, "
                             f"out={buffer(v, k)})  # {c.op.short_name}")
                arr[v] = f"a{v.index}"
            else:
                key = f"op{len(env)}"
                env[key] = c.op
                args = ", ".join(expr(a, as_tensor) for a in c.args)
                outs = [f"t{v.index}" if v is not None else "_" for v in c.outs]
                returns = c.op.schema.returns
                returns_list = len(returns) == 1 and returns[0].endswith("[]")
                target = ", ".join(outs) + ("," if len(outs) == 1 and returns_list else "")
                target = target or "_"
                lines.append(f"    {target} = {key}.redispatch('CPU', ({args},))  "
                             f"# {c.op.short_name}")
                for v in c.outs:
                    if v is not None:
                        ten[v] = f"t{v.index}"
                        arr.pop(v, None)
                        if v not in inputs and v not in constants and \
                                _private_result(c, v, aliases, tensors):
                            fresh.add(v)  # a fused chain may write over it
                if writes(c.op):  # a kernel may have replaced the written tensor's array
                    for a, v in zip(c.op.schema.arguments, c.args):
                        if a.mutable and type(v) is Value:
                            arr.pop(v, None)
        for v in release.pop(k, ()):
            slot, key = owner[v]
            free.setdefault(key, []).append(slot)
    outs = []
    for r in results:
        if type(r) is Value:
            outs.append(ten[r] if r in ten else arr[r])
        else:
            outs.append(repr(r))
    lines.append(f"    return [{', '.join(outs)}]")
    head = [f"def {name}(inputs, buffers):",
            "    _buffer = _buffers(buffers)"] if n_buffers else [f"def {name}(inputs, buffers):"]
    env["_buffers"] = _buffer_getter
    fused_src = "".join(env[k] + "\n" for k in sorted(env) if k.startswith("_src_"))
    code = "\n".join(head + lines) + "\n"
    return fused_src + code, env, n_buffers


def _relu_epilogue(product, group, k, last, escaping, aliases):
    """Whether a convolution or linear layer (item k) can run the ReLU that follows it in its
    epilogue: the next item is a fused group of that one relu, reading the product's output,
    which nothing else reads (itself or through a view) and which does not leave the graph."""
    if not isinstance(group, FusionGroup) or len(group.calls) != 1:
        return False
    relu, y = group.calls[0], product.outs[0]
    return (relu.op.short_name == "relu" and relu.args[0] is y and y not in escaping
            and y not in aliases and last.get(y) == k + 1 and y.shape == group.out.shape
            and y.dtype is group.out.dtype)


def _private_result(call, v, aliases, tensors):
    """Whether a kernel's result owns its memory: the op returns no view and writes nothing,
    the result is none of its arguments, the capture run's result shared memory with no other
    tensor of the graph, and its array was writeable."""
    if writes(call.op) or call.op._is_view or v in aliases or v in set(call.values_read()):
        return False
    t = tensors.get(v)
    return t is not None and t._np is not None and t._np.flags.writeable


def _donor(x, group, k, last, escaping):
    """Whether fused group k may write its result over x's array (as far as x's use goes):
    x has the result's shape and dtype, does not leave the graph, is read (itself or through
    a view) by nothing after the group, and within the group only by its first call."""
    out = group.out
    if x in escaping or last.get(x, -1) != k or x.shape != out.shape or x.dtype is not out.dtype:
        return False
    return x in set(group.calls[0].values_read()) and \
        not any(x in set(c.values_read()) for c in group.calls[1:])


def _np_name(v):
    return np.dtype(v.dtype._np).name


def _buffer_getter(buffers):
    def get(slot, shape, dtype):
        b = buffers[slot]
        if b is None:
            b = buffers[slot] = np.empty(shape, dtype)
        return b
    return get
