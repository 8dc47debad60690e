"""``outdated score`` is registered unconditionally: a broken import must fail loudly, not drop the command."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Make the score tool's module unimportable (a None entry in sys.modules makes
# `import` raise ImportError), then register the commands as the entry point does.
_PROBE = """
import sys
sys.modules["chronoprobe.integrations.harness_scoring"] = None
from chronoprobe.cli.main import _register, app
try:
    _register()
except ImportError:
    print("import failed")
else:
    print("registered:", ",".join(g.name or "" for g in app.registered_groups))
"""


@pytest.mark.e2e
def test_a_broken_score_module_is_an_import_error_not_a_missing_command() -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "import failed"


def test_score_is_a_command_of_outdated() -> None:
    from chronoprobe.cli.tool_command import lens_group
    from chronoprobe.lenses.outdated.lens import OutdatedLens

    app = lens_group(OutdatedLens)
    assert "score" in [c.name for c in app.registered_commands]
