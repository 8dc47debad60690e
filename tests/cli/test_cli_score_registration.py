"""``outdated score`` is registered unconditionally: a broken import must fail loudly, not drop the command."""

from __future__ import annotations

import subprocess
import sys

# Make the score tool's module unimportable (a None entry in sys.modules makes
# `import` raise ImportError), then import the outdated CLI as the entry point does.
_PROBE = """
import sys
sys.modules["chronoprobe.integrations.harness_scoring"] = None
try:
    import chronoprobe.cli.outdated as outdated
except ImportError:
    print("import failed")
else:
    names = [c.name or c.callback.__name__ for c in outdated.app.registered_commands]
    print("registered:", ",".join(names))
"""


def test_a_broken_score_module_is_an_import_error_not_a_missing_command() -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "import failed"


def test_score_is_a_command_of_outdated() -> None:
    from chronoprobe.cli.outdated import app

    assert "score" in [c.name for c in app.registered_commands]
