"""The ONNX graph a symbolic function writes into: PyTorch's GraphContext `g`. `g.op("Name",
*inputs, outputs=1, attr_f=...)` adds one ONNX node and returns its output Value(s); an attribute's
type is its name's suffix (_i int, _f float, _s string, _t tensor, _is/_fs/_ss lists) or else
inferred; "domain::Name" puts the node in a custom domain.

A Value knows its name, and where the trace recorded it, its shape and dtype. A Value also
carries its array when it is known at export time (a parameter, a constant): with constant
folding on, a node whose inputs are all known and whose op is a plain data rearrangement or
arithmetic is evaluated at once (by onnx's reference evaluator) instead of being emitted, as
PyTorch's exporter folds the weight reorderings of an LSTM. Known arrays enter the graph only
when a node uses them: parameters and large arrays as initializers, small ones as Constant nodes.
"""
import numpy as np

from .._core.math_bits import resolved_values

# ops folded when every input is known; their meaning is the same in every opset from 17 on
_FOLDABLE = {"Transpose", "Concat", "Slice", "Unsqueeze", "Squeeze", "Reshape", "Cast", "Gather",
             "Add", "Sub", "Mul", "Div", "Sqrt", "Reciprocal", "Neg", "Identity", "Expand"}
_SMALL = 64  # known arrays with more elements become initializers, not Constant nodes


class Value:
    """One value of the ONNX graph (PyTorch's torch._C.Value as symbolic functions see it)."""
    __slots__ = ("name", "shape", "dtype", "const", "is_param")

    def __init__(self, name, shape=None, dtype=None, const=None, is_param=False):
        self.name, self.shape, self.dtype, self.const = name, shape, dtype, const
        self.is_param = is_param

    def debugName(self):
        return self.name

    def type(self):
        return _ValueType(self)

    def __repr__(self):
        return f"<onnx Value {self.name} {self.shape}>"


class _ValueType:
    def __init__(self, value):
        self._value = value

    def sizes(self):
        return None if self._value.shape is None else list(self._value.shape)

    def dim(self):
        return None if self._value.shape is None else len(self._value.shape)


class GraphContext:
    """The graph being built, for one opset; symbolic functions receive it as `g`."""

    def __init__(self, opset, constant_folding=True):
        self.opset = opset
        self.constant_folding = constant_folding
        self.nodes = []           # onnx NodeProtos in order
        self.initializers = {}    # name -> array
        self.custom_domains = {}  # domain -> version
        self._defined = set()     # known-array names already in the graph
        self._count = 0

    def op(self, opname, *inputs, outputs=1, **attributes):
        domain, _, op_type = opname.rpartition("::")
        ins = [self._as_value(x) for x in inputs]
        if domain and domain != "onnx":
            self.custom_domains.setdefault(domain, 1)
        else:
            domain = ""
        known = [v for v in ins if v is not None]
        if (self.constant_folding and not domain and op_type in _FOLDABLE and known
                and all(v.const is not None for v in known)):
            return self._fold(op_type, ins, outputs, attributes)
        for v in known:
            self._define(v)
        names = [self._fresh(op_type) for _ in range(outputs)]
        self.nodes.append(_make_node(op_type, [v.name if v is not None else "" for v in ins],
                                     names, domain, attributes))
        values = tuple(Value(n) for n in names)
        return values[0] if outputs == 1 else values

    def constant(self, array, dtype=None):
        """A Value holding a known array (Python numbers become int64 or float32 tensors)."""
        if not isinstance(array, np.ndarray):
            array = np.asarray(array, dtype=dtype if dtype is not None else _python_dtype(array))
        elif dtype is not None:
            array = array.astype(dtype)
        self._count += 1
        return Value(f"onnx::Constant_{self._count}", array.shape, array.dtype, array)

    def _as_value(self, x):
        if x is None or isinstance(x, Value):
            return x
        if hasattr(x, "detach"):  # an ember Tensor passed by a custom symbolic
            x = resolved_values(x.detach())._np  # (bfloat16 too: numpy() refuses it)
        return self.constant(x)

    def _fresh(self, op_type):
        self._count += 1
        return f"/{op_type}_{self._count}_output_0"

    def _define(self, v):
        """Put a known array into the graph the first time a node uses it."""
        if v.const is None or v.name in self._defined:
            return
        self._defined.add(v.name)
        if v.is_param or v.const.size > _SMALL:
            self.initializers[v.name] = v.const
        else:
            from onnx import numpy_helper
            self.nodes.append(_make_node("Constant", [], [v.name], "",
                                         {"value": numpy_helper.from_array(v.const)}))

    def _fold(self, op_type, ins, outputs, attributes):
        from onnx.reference import ReferenceEvaluator
        names = [f"in{i}" if v is not None else "" for i, v in enumerate(ins)]
        out_names = [f"out{i}" for i in range(outputs)]
        node = _make_node(op_type, names, out_names, "", attributes)
        feeds = {n: v.const for n, v in zip(names, ins) if v is not None}
        results = ReferenceEvaluator(node, opsets={"": self.opset}).run(None, feeds)
        param = any(v is not None and v.is_param for v in ins)
        values = []
        for r in results:
            v = self.constant(np.asarray(r))
            v.is_param = param and v.const.size > _SMALL
            if v.is_param:
                v.name = f"onnx::{op_type}_{self._count}"
            values.append(v)
        return values[0] if outputs == 1 else tuple(values)


def _python_dtype(x):
    flat = np.asarray(x)
    if flat.dtype.kind == "f":
        return np.float32
    if flat.dtype.kind in "iu":
        return np.int64
    return flat.dtype


_SUFFIX_TYPES = {"i": "INT", "f": "FLOAT", "s": "STRING", "t": "TENSOR", "is": "INTS",
                 "fs": "FLOATS", "ss": "STRINGS", "g": "GRAPH"}


def _make_node(op_type, inputs, outputs, domain, attributes):
    from onnx import AttributeProto, helper, numpy_helper
    node = helper.make_node(op_type, inputs, outputs, domain=domain or None)
    for key, value in attributes.items():
        name, _, suffix = key.rpartition("_")
        attr_type = _SUFFIX_TYPES.get(suffix) if name else None
        if attr_type is None:
            name, attr_type = key, None
        if value is None:
            continue
        if attr_type == "TENSOR" or hasattr(value, "detach") or isinstance(value, np.ndarray):
            if hasattr(value, "detach"):
                value = resolved_values(value.detach())._np
            if not isinstance(value, np.ndarray):
                value = np.asarray(value)
            value = numpy_helper.from_array(value)
            attr_type = "TENSOR"
        elif attr_type in ("INTS", "FLOATS", "STRINGS"):
            value = list(value)
        node.attribute.append(helper.make_attribute(
            name, value, attr_type=getattr(AttributeProto, attr_type) if attr_type else None))
    return node
