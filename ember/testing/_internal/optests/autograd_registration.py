"""optests.autograd_registration_check: torch.library.opcheck's test_autograd_registration
(ember/_library/opcheck.py) on its own."""
from ...._library.opcheck import autograd_registration_check  # noqa: F401
