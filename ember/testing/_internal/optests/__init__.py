"""torch.testing._internal.optests: the checks behind torch.library.opcheck, for tests.

`opcheck` and `OpCheckError` are torch.library's (ember/_library/opcheck.py);
`autograd_registration_check` asks where an op's autograd support is registered,
`aot_autograd_check` compares a function with a rerun of it, and `generate_opcheck_tests`
reads a test class's failures dict.
"""
from ...._library.opcheck import OpCheckError, opcheck  # noqa: F401
from .aot_autograd import aot_autograd_check  # noqa: F401
from .autograd_registration import autograd_registration_check  # noqa: F401
from .generate_tests import (  # noqa: F401
    dontGenerateOpCheckTests, generate_opcheck_tests, is_inside_opcheck_mode)
