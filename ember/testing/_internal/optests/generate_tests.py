"""optests.generate_tests: opcheck wired into a TestCase.

PyTorch's `generate_opcheck_tests(testcase, namespaces, failures_dict_path)` adds, for each test
of `testcase`, copies that run it under an OpCheckMode which opchecks every call of an operator
in `namespaces`; a JSON "failures dict" lists the (op, generated test) pairs expected to fail.
ember reads and validates the failures dict as PyTorch does, but adds no generated tests (its
opcheck cannot yet run inside another test's operator calls).
"""
import json
import re

from ...._library.opcheck import DEFAULT_TEST_UTILS as _DEFAULT, OpCheckError, opcheck  # noqa: F401

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


def generate_opcheck_tests(testcase, namespaces, failures_dict_path=None,
                           additional_decorators=None, test_utils=DEFAULT_TEST_UTILS):
    if failures_dict_path is not None:
        validate_failures_dict_structure(FailuresDict.load(failures_dict_path), test_utils,
                                         testcase)


_opcheck_mode_depth = [0]


def is_inside_opcheck_mode():
    return _opcheck_mode_depth[0] > 0


class OpCheckMode:
    """The mode generated tests run under (see the module docstring); entering it marks that
    an opcheck run is under way."""

    def __init__(self, namespaces, test_util_name, test_util, failures_dict, test_name,
                 failures_dict_path):
        self.namespaces = namespaces
        self.test_util_name = test_util_name
        self.test_util = test_util
        self.failures_dict = failures_dict
        self.test_name = test_name
        self.failures_dict_path = failures_dict_path

    def __enter__(self):
        _opcheck_mode_depth[0] += 1
        return self

    def __exit__(self, *exc):
        _opcheck_mode_depth[0] -= 1
        return False


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
