"""optests.generate_tests: opcheck wired into a TestCase.

`generate_opcheck_tests(testcase, namespaces, failures_dict_path)` adds, for each test of
`testcase` and each opcheck test util, a copy `{util}__{test}` that runs the test under an
OpCheckMode: every operator of `namespaces` the test calls directly (`torch.ops.ns.op(...)`)
is also checked by the util on copies of its arguments. A JSON "failures dict" lists the
(op, generated test) pairs expected to fail ("xfail") or not to check ("skip"); a check that
fails unexpectedly, or passes where a failure was expected, fails the generated test. It also
adds `test_pt2_compliant_tag_{op}` tests: an op tagged pt2_compliant_tag must not be listed as
failing.

PyTorch's mode is a TorchFunctionMode, which sees operator objects called from Python but not
the operators that torch.* functions and Tensor methods run. ember's bindings call operators
through `call_positional`, so the mode replaces the operator classes' `__call__` for its
duration: it sees the same calls, and the dispatcher's hot path is untouched outside it.
"""
import json
import re

import functools
import os
import sys
import unittest

from ...._library.opcheck import (  # noqa: F401
    _TESTS as _CHECKS, DEFAULT_TEST_UTILS as _DEFAULT, OpCheckError, _map, opcheck)
from ...._library.utils import flat_tensors

DEFAULT_TEST_UTILS = list(_DEFAULT)
DEPRECATED_DEFAULT_TEST_UTILS = DEFAULT_TEST_UTILS + ["test_aot_dispatch_static"]
TEST_OPTIONS = ("xfail", "skip", "xsuccess")


def dontGenerateOpCheckTests(reason):
    """Mark a test so generate_opcheck_tests makes no copies of it."""
    def inner(fun):
        fun._torch_dont_generate_opcheck_tests = True
        return fun
    return inner


class FailuresDict:
    """The failures dict: {qualified op name: {"Class.generated_test": {comment, status}}}."""

    def __init__(self, path, data):
        self.path = path
        self.data = data

    def get_status(self, qualname, test_name):
        """The failures dict's status of one generated test on one op ("xsuccess": none)."""
        entry = self.data.get(qualname, {}).get(test_name)
        return "xsuccess" if entry is None else entry["status"]

    @staticmethod
    def load(path, *, create_file=False):
        with open(path) as f:
            contents = json.load(f)
        return FailuresDict(path, contents["data"])


def validate_failures_dict_structure(failure_dict, test_utils, testcase):
    """Each entry must have a known status and name a generated test that could exist."""
    for tests in failure_dict.data.values():
        for test_name, test_dict in tests.items():
            if set(test_dict) != {"comment", "status"}:
                raise RuntimeError("in failures_dict, expected sub-dict to have keys 'comment' "
                                   "and 'status'")
            if test_dict["status"] not in TEST_OPTIONS:
                raise RuntimeError(f"In failures_dict, got status={test_dict['status']} but it "
                                   f"needs to be in {TEST_OPTIONS}")
            test_class, actual = test_name.split(".")
            if not any(actual.startswith(t) for t in test_utils):
                raise RuntimeError(f"In failures_dict, test name '{test_name}' should begin "
                                   f"with one of {test_utils}")
            for t in test_utils:
                if not actual.startswith(t) or testcase.__name__ != test_class:
                    continue
                base = re.sub(r"\[.*\]", "", actual[len(t) + 2:])
                if not hasattr(testcase, base):
                    raise RuntimeError(
                        f"In failures dict, got test name '{test_name}'. We parsed this as "
                        f"running test '{t}' on '{base}', but {base} does not exist on the "
                        f"TestCase '{testcase.__name__}]. Maybe you need to change the test "
                        f"name?")


def _safe(check):
    """A test util: `check` on copies of the arguments, skipped for meta tensors (which have
    no values to check)."""
    def util(op, args, kwargs):
        if any(t.is_meta for t in flat_tensors((args, kwargs))):
            return
        check(op, args, kwargs, None, None)
    return util


ALL_TEST_UTILS = {name: _safe(fn) for name, fn in _CHECKS.items()}
ALL_TEST_UTILS["test_aot_dispatch_static"] = ALL_TEST_UTILS["test_aot_dispatch_dynamic"]


def generate_opcheck_tests(testcase, namespaces, failures_dict_path=None,
                           additional_decorators=None, test_utils=DEFAULT_TEST_UTILS):
    additional_decorators = additional_decorators or {}
    failures_dict = FailuresDict.load(failures_dict_path) if failures_dict_path is not None \
        else FailuresDict("", {})
    validate_failures_dict_structure(failures_dict, test_utils, testcase)
    originals = [m for m in dir(testcase)
                 if m.startswith("test_") and callable(getattr(testcase, m))]
    for attr in originals:
        method = getattr(testcase, attr)
        if getattr(method, "_torch_dont_generate_opcheck_tests", False):
            continue
        for prefix in test_utils:
            name = f"{prefix}__{attr}"
            generated = _generated_test(method, namespaces, prefix, failures_dict,
                                        f"{testcase.__name__}.{name}", failures_dict_path)
            for decorator in additional_decorators.get(name, ()):
                generated = decorator(generated)
            if hasattr(testcase, name):
                raise RuntimeError(f"Tried to autogenerate {name} but {testcase} already has "
                                   f"method named {name}. Please rename the original method "
                                   f"on the TestCase.")
            setattr(testcase, name, generated)
    _generate_tag_tests(testcase, failures_dict, additional_decorators)


def _generated_test(method, namespaces, prefix, failures_dict, test_name, path):
    @functools.wraps(method)
    def test(*args, **kwargs):
        with OpCheckMode(namespaces, prefix, ALL_TEST_UTILS[prefix], failures_dict, test_name,
                         path):
            return method(*args, **kwargs)
    return test


def _generate_tag_tests(testcase, failures_dict, additional_decorators):
    for qualname, tests in failures_dict.data.items():
        xfailed = [t for t, status in tests.items()
                   if "test_aot_dispatch_static" not in t and status["status"] == "xfail"]

        def test(self, qualname=qualname, xfailed=xfailed):
            from ...._C._tags import Tag
            from ...._library.utils import lookup_op
            try:
                op = lookup_op(qualname)
            except RuntimeError as e:
                raise unittest.SkipTest(f"Can't import operator {qualname}") from e
            if Tag.pt2_compliant_tag in op.tags and xfailed:
                raise AssertionError(
                    f"op '{qualname}' was tagged with torch.Tag.pt2_compliant_tag but it failed "
                    f"some of the generated opcheck tests ({xfailed}). This may lead to silent "
                    f"correctness issues, please fix this.")
        name = "test_pt2_compliant_tag_" + qualname.replace("::", "_").replace(".", "_")
        for decorator in additional_decorators.get(name, ()):
            test = decorator(test)
        if hasattr(testcase, name):
            raise RuntimeError(f"Tried to generate a test named {name}, but it exists already.")
        setattr(testcase, name, test)


_opcheck_mode_depth = [0]
_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def is_inside_opcheck_mode():
    return _opcheck_mode_depth[0] > 0


class OpCheckMode:
    """The mode generated tests run under (see the module docstring)."""

    def __init__(self, namespaces, test_util_name, test_util, failures_dict, test_name,
                 failures_dict_path):
        self.namespaces = namespaces
        self.test_util_name = test_util_name
        self.test_util = test_util
        self.failures_dict = failures_dict
        self.test_name = test_name
        self.failures_dict_path = failures_dict_path
        self.seen_ops_to_errors = {}

    def __enter__(self):
        from ...._dispatch.dispatcher import OpOverload, OpOverloadPacket
        from ...._functorch import config
        _opcheck_mode_depth[0] += 1
        self._saved = (OpOverload.__call__, OpOverloadPacket.__call__,
                       config.check_custom_op_aliasing)
        config.check_custom_op_aliasing = False
        mode, op_call, packet_call = self, OpOverload.__call__, OpOverloadPacket.__call__
        checking = [False]

        def call_op(op, *args, _depth=1, **kwargs):
            # only the test's own calls: not those ember's torch.* functions make inside
            if checking[0] or op.namespace not in mode.namespaces or \
                    sys._getframe(_depth).f_code.co_filename.startswith(_EMBER_DIR):
                return op_call(op, *args, **kwargs)
            copies = _copy_tensors((args, kwargs))
            result = op_call(op, *args, **kwargs)
            checking[0] = True
            try:
                mode.check(op, *copies)
            finally:
                checking[0] = False
            return result

        def call_packet(packet, *args, **kwargs):
            overloads = packet._overloads
            if len(overloads) == 1 and not checking[0]:
                return call_op(next(iter(overloads.values())), *args, _depth=2, **kwargs)
            return packet_call(packet, *args, **kwargs)
        OpOverload.__call__, OpOverloadPacket.__call__ = call_op, call_packet
        return self

    def check(self, op, args, kwargs):
        qualname = op.schema.qualname
        status = self.failures_dict.get_status(qualname, self.test_name)
        if status == "skip":
            return
        errors = self.seen_ops_to_errors.setdefault(qualname, [])
        try:
            self.test_util(op, args, kwargs)
        except Exception as e:  # noqa: BLE001 (collected, and reported on exit)
            errors.append((e, op))

    def __exit__(self, *exc):
        from ...._dispatch.dispatcher import OpOverload, OpOverloadPacket
        from ...._functorch import config
        OpOverload.__call__, OpOverloadPacket.__call__, config.check_custom_op_aliasing = \
            self._saved
        _opcheck_mode_depth[0] -= 1
        if exc[0] is None:
            self._raise_errors()
        return False

    def _raise_errors(self):
        for qualname, errors in self.seen_ops_to_errors.items():
            status = self.failures_dict.get_status(qualname, self.test_name)
            if not errors and status == "xfail":
                raise OpCheckError(
                    f"generate_opcheck_tests: Unexpected success for operator {qualname} on "
                    f"test {self.test_name}. This may mean that you have fixed this test "
                    f"failure. Please rerun the test with PYTORCH_OPCHECK_ACCEPT=1 to "
                    f"automatically update the test runner or manually remove the expected "
                    f"failure in the failure dict at {self.failures_dict_path}")
        failed = [q for q, errors in self.seen_ops_to_errors.items()
                  if errors and self.failures_dict.get_status(q, self.test_name) == "xsuccess"]
        if failed:
            error, op = self.seen_ops_to_errors[failed[0]][0]
            raise OpCheckError(
                f"Test generated by `generate_opcheck_tests`, {self.test_name}, failed on "
                f"operators {failed}. This usually means that the operators are not "
                f"implemented correctly and may lead to silently incorrect behavior. To "
                f"reproduce this problem locally, try to run the following:\n"
                f"{generate_repro(self.test_util_name, op, (), {}, save_data=False)}") from error


def _copy_tensors(value):
    """Detached copies of the tensors in `value` that keep requires_grad."""
    return _map(lambda t: t.detach().clone().requires_grad_(t.requires_grad), value)


def generate_repro(test, op, args, kwargs, *, save_data, dry_run=False):
    """The text of a script that reruns one opcheck test of `op`."""
    import datetime
    import os
    import tempfile
    if save_data:
        path = os.path.join(tempfile.gettempdir(), "pytorch_opcheck_safe_to_delete")
        stamp = datetime.datetime.timestamp(datetime.datetime.now()) * 100000
        filepath = os.path.join(path, f"repro_{stamp}.pt")
        if not dry_run:
            from .... import save
            os.makedirs(path, exist_ok=True)
            save((args, kwargs), filepath)
        args_kwargs = f'args, kwargs = torch.load("{filepath}")'
    else:
        args_kwargs = ("# If you rerun your test with PYTORCH_OPCHECK_PRINT_BETTER_REPRO=1\n"
                       "# we will fill them in same (args, kwargs) as in your test\n"
                       "args = ()  # args to the operator\n"
                       "kwargs = {}  # kwargs to the operator")
    line = "# =========================================================\n"
    return (f"{line}# BEGIN REPRO SCRIPT\n{line}import torch\n"
            f"from torch.testing._internal.optests import opcheck\n\n"
            f"# Make sure you have loaded the library that contains the op\n"
            f"# via an import or torch.ops.load_library(...)\n"
            f"op = torch.ops.{op.namespace}.{op._opname}.{op._overloadname}\n\n"
            f"{args_kwargs}\n"
            f'opcheck(op, args, kwargs, test_utils="{test}")\n'
            f"{line}# END REPRO SCRIPT\n{line}")
