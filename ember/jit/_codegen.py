"""The readable Python of a recorded graph (`ScriptModule.code`, PyTorch's `.code`): one line
per op call, tensors named as in the graph, ops spelled `ops.aten.<name>.<overload>`."""
from .._dispatch.recorder import Value


def _arg(a, names):
    if type(a) is Value:
        return names[a]
    if type(a) is list:
        return "[" + ", ".join(_arg(x, names) for x in a) + "]"
    if type(a) is tuple:
        return "(" + ", ".join(_arg(x, names) for x in a) + ("," if len(a) == 1 else "") + ")"
    return repr(a)


def op_spelling(op):
    name, _, overload = op.short_name.partition(".")
    return f"ops.{op.schema.namespace}.{name}.{overload or 'default'}"


def python_code(graph, n_args):
    names = {}
    params = []
    for i, v in enumerate(graph.inputs):
        if i < n_args:
            names[v] = v.name
            params.append(v.name)
        else:
            names[v] = _attribute_path(v.name)
    for v in graph.constants:
        names[v] = f"CONSTANTS.{v.name}"
    lines = [f"def forward(self, {', '.join(params)}):" if params else "def forward(self):"]
    for c in graph.calls:
        outs = []
        for v in c.outs:
            if v is None:
                outs.append("_")
            else:
                names.setdefault(v, v.name)
                outs.append(names[v])
        target = ", ".join(outs)
        args = ", ".join(_arg(a, names) for a in c.args)
        lines.append(f"    {target or '_'} = {op_spelling(c.op)}({args})")
    ret = [_arg(o, names) for o in graph.outputs]
    lines.append(f"    return {ret[0]}" if len(ret) == 1 else f"    return ({', '.join(ret)})")
    return "\n".join(lines) + "\n"


def _attribute_path(dotted):
    """`self.fc1.weight`; a module name that is not an identifier (Sequential's "0") through
    getattr."""
    expr = "self"
    for part in dotted.split("."):
        expr = f"{expr}.{part}" if part.isidentifier() else f'getattr({expr}, "{part}")'
    return expr
