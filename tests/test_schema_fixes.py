"""torch._C.parse_schema: ember's one schema parser (ember/_dispatch/schema.py) answers as PyTorch's."""
import subprocess
import sys

import pytest

import ember

torch = pytest.importorskip("torch")

CASES = [
    "any.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    "any.not_out(Tensor self, Tensor b) -> Tensor",
    "foo(Tensor self, int a = 2) -> Tensor(a!)",
    "foo(Tensor self, *, int a = 2) -> Tensor(a!)",
    "foo(Tensor(a!) self, int a = 2) -> Tensor(a!)",
    "foo(Tensor self, *, Tensor(a!)[] out) -> ()",
    "example::op(Tensor self) -> Tensor",
]


@pytest.mark.parametrize("text", CASES)
def test_parse_schema_fields(text):
    e, t = ember._C.parse_schema(text), torch._C.parse_schema(text)
    assert (e.name, e.overload_name, str(e)) == (t.name, t.overload_name, str(t))
    assert [a.name for a in e.arguments] == [a.name for a in t.arguments]
    assert [a.is_out for a in e.arguments] == [a.is_out for a in t.arguments]
    assert [a.kwarg_only for a in e.arguments] == [a.kwarg_only for a in t.arguments]
    assert [a.default_value for a in e.arguments] == [a.default_value for a in t.arguments]
    assert ([a.alias_info.is_write if a.alias_info else None for a in e.arguments] ==
            [a.alias_info.is_write if a.alias_info else None for a in t.arguments])


def test_parse_schema_equality_and_hash():
    for a in CASES:
        for b in CASES:
            te = torch._C.parse_schema(a) == torch._C.parse_schema(b)
            ee = ember._C.parse_schema(a) == ember._C.parse_schema(b)
            assert ee == te, (a, b)
            if te:
                assert hash(ember._C.parse_schema(a)) == hash(ember._C.parse_schema(b))


def test_import_under_alias():
    code = ("import torch\nfrom torch._C import parse_schema\n"
            "s = parse_schema('any.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)')\n"
            "assert s.arguments[-1].is_out and s.overload_name == 'out'\nprint('ok')")
    r = subprocess.run([sys.executable, "-m", "ember", "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.stdout.strip().endswith("ok"), r.stderr[-2000:]


# backward / forward compatibility cases of PyTorch's test_function_schema.py: (new, old)
BC = [
 ("any.over(Tensor self, *, Tensor b) -> Tensor", "any.over(Tensor self, *, Tensor b) -> Tensor"),
 ("any_.over(Tensor self, *, Tensor b) -> Tensor", "any.over(Tensor self, *, Tensor b) -> Tensor"),
 ("any.other(Tensor self, *, Tensor b) -> Tensor", "any.over(Tensor self, *, Tensor b) -> Tensor"),
 ("any.over(Tensor self, *, Tensor b, ...) -> Tensor", "any.over(Tensor self, *, Tensor b) -> Tensor"),
 ("any.over(Tensor self, *, Tensor b) -> (Tensor, Tensor)", "any.over(Tensor self, *, Tensor b) -> Tensor"),
 ("any.over(Tensor self, *, Tensor b) -> Tensor?", "any.over(Tensor self, *, Tensor b) -> Tensor"),
 ("any.over(Tensor self, *, Tensor b) -> Tensor", "any.over(Tensor self, *, Tensor b) -> Tensor?"),
 ("any.over(Tensor self, *, Tensor b) -> int", "any.over(Tensor self, *, Tensor b) -> Tensor"),
 ("any.over(Tensor self, *, Tensor b) -> Tensor out", "any.over(Tensor self, *, Tensor b) -> Tensor"),
]
old = "any(Tensor self, *, Tensor b, int c) -> Tensor"
for new in ["any(Tensor self, *, Tensor b) -> Tensor", "any(Tensor self, *, Tensor b, int c, int d) -> Tensor",
            "any(Tensor self, *, Tensor b, int c, int d=1) -> Tensor", "any(Tensor self, int d=1, *, Tensor b, int c) -> Tensor",
            "any(Tensor self, Tensor b, *, int c) -> Tensor", "any(Tensor self, Tensor b, int c) -> Tensor",
            "any(Tensor self, *, int c, Tensor b) -> Tensor", "any(Tensor self, *, Tensor b, int? c) -> Tensor",
            "any(Tensor self, *, Tensor b, int c=1) -> Tensor", "any(Tensor self, *, Tensor b, int renamed) -> Tensor",
            "any(Tensor self, *, Tensor b, int[] c) -> Tensor"]:
    BC += [(new, old), (old, new)]
o = "foo(Tensor self, *, int a, Tensor(a!) out) -> Tensor(a!)"
for new in ["foo(Tensor self, *, int a, int b=1, Tensor(a!) out) -> Tensor(a!)", "foo(Tensor self, *, int b=1, int a, Tensor(a!) out) -> Tensor(a!)",
            "foo(Tensor self, *, int a, int b=1, Tensor(a!) out, Tensor(b!) b) -> Tensor(a!)", "foo(Tensor self, *, int a, int b=1, Tensor(b!) b, Tensor(a!) out) -> Tensor(a!)"]:
    BC.append((new, o))
o = "foo(Tensor self, int a, int b=1) -> int"
for new in ["foo(Tensor self, int a, int b=1, int c=2) -> int", "foo(Tensor self, int a, int b=1, int c=2, int d=3) -> int", "foo(Tensor self, int a, int c=2, int b=1) -> int"]:
    BC.append((new, o))
FC = []
o = "any(Tensor self, int a, int b=1) -> Tensor"
for new in ["any(Tensor self, int a) -> Tensor", "any(Tensor self, int a, int b=1, int c=1) -> Tensor", "any(Tensor self, int a, int b=1, int[2] c=1) -> Tensor",
            "any(Tensor self, int a, int b=4) -> Tensor", "any(Tensor self, int a, int c=1) -> Tensor", "any(Tensor self, int a, int c=1, int b=1) -> Tensor",
            "any(Tensor self, int a, int b) -> Tensor", "any(Tensor self, int a=1, int b=1) -> Tensor"]:
    FC.append((new, o))
FC.append(("slice(Tensor(a) self, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor(a)", "slice(Tensor(a) self, int dim=0, int start=0, int end=0, int step=1) -> Tensor(a)"))
o = "any(Tensor self, *, int a, int b=1, Tensor(a!) out) -> Tensor(a!)"
for new in ["any(Tensor self, *, int a, Tensor(a!) out) -> Tensor(a!)", "any(Tensor self, *, int a, int b=1, int c=1, Tensor(a!) out) -> Tensor(a!)",
            "any(Tensor self, *, int a, Tensor(d!) d, int b=1, Tensor(a!) out) -> Tensor(a!)"]:
    FC.append((new, o))


def test_backward_and_forward_compatibility_as_torch():
    ep, tp = ember._C.parse_schema, torch._C.parse_schema
    for new, old in BC:
        assert ep(new).is_backward_compatible_with(ep(old)) == \
            tp(new).is_backward_compatible_with(tp(old)), (new, old)
    for new, old in FC:
        assert tuple(ep(new).check_forward_compatible_with(ep(old))) == \
            tuple(tp(new).check_forward_compatible_with(tp(old))), (new, old)


def test_vararg_schema_prints_and_compares():
    text = "any.over(Tensor self, *, Tensor b, ...) -> Tensor"
    assert str(ember._C.parse_schema(text)) == str(torch._C.parse_schema(text))
    assert not ember._C.parse_schema(text).is_backward_compatible_with(
        ember._C.parse_schema("any.over(Tensor self, *, Tensor b) -> Tensor"))
