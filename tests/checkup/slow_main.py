"""``python slow_main.py ARGS``: ``chronoprobe ARGS`` with ``mock:slow``, a model that knows every second
fact and takes ``SLOW_SECONDS`` (default 0.004 s) per answer, so that a test can kill it part way.

``PAUSE_BEFORE=NAME[:N]`` holds the process still just before the N-th (default first) rename of a file
named NAME into place (its temporary file written), after touching ``PAUSE_FLAG``: a test kills it there,
half-way through an atomic write of ``check.md``, ``card.html`` or ``check.json``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from world import World, knower  # after the path above

from chronoprobe.cli.main import main
from chronoprobe.testing import register_mock


def pause_before_rename(target: str, flag: Path) -> None:
    """Hold still before the chosen rename (``os.replace``) of ``target`` (``NAME`` or ``NAME:N``)."""
    name, _, nth = target.partition(":")
    seen = [0]
    replace = os.replace

    def held(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(dst).name == name:
            seen[0] += 1
            if seen[0] == int(nth or 1):
                flag.touch()
                time.sleep(600)
        replace(src, dst)

    os.replace = held  # type: ignore[assignment]  # io.py's atomic writes call os.replace


if __name__ == "__main__":
    knows = knower(World(), every=2)
    pause = float(os.environ.get("SLOW_SECONDS", "0.004"))

    def slow(prompt, params):
        time.sleep(pause)
        return knows(prompt, params)

    register_mock("slow", slow)
    if os.environ.get("PAUSE_BEFORE"):
        pause_before_rename(os.environ["PAUSE_BEFORE"], Path(os.environ["PAUSE_FLAG"]))
    sys.argv = ["chronoprobe", *sys.argv[1:]]
    main()
