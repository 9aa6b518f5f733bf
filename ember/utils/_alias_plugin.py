"""A pytest plugin that installs the torch -> ember alias: `python -m ember -m pytest -n N` names
it in PYTEST_PLUGINS, so each pytest-xdist worker (a new interpreter that does not read the
PYTHONPATH the alias hands down) installs the alias before it collects a test file."""
from ._torch_alias import install

install()
