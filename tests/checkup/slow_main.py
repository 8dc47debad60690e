"""``python slow_main.py ARGS``: ``chronoprobe ARGS`` with ``mock:slow``, a model that knows every second
fact and takes ``SLOW_SECONDS`` (default 0.004 s) per answer, so that a test can kill it part way."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from world import World, knower  # after the path above

from chronoprobe.cli.main import main
from chronoprobe.testing import register_mock

if __name__ == "__main__":
    knows = knower(World(), every=2)
    pause = float(os.environ.get("SLOW_SECONDS", "0.004"))

    def slow(prompt, params):
        time.sleep(pause)
        return knows(prompt, params)

    register_mock("slow", slow)
    sys.argv = ["chronoprobe", *sys.argv[1:]]
    main()
