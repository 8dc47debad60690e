"""The command that resumes a run stopped part way: the same words, with the folder the run was writing."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from chronoprobe.errors import CacheUnavailable


def resume_command(argv: Sequence[str], option: str, folder: str) -> str:
    """``chronoprobe`` and ``argv`` with ``option`` set to ``folder`` (replaced where given, else added)."""
    words: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        if word == option:
            skip = True
            continue
        if not word.startswith(option + "="):
            words.append(word)
    return shlex.join(["chronoprobe", *words, option, folder])


def with_resume(error: CacheUnavailable, argv: Sequence[str]) -> str:
    """The error's line, ending in the command that resumes the run (when the run had a folder)."""
    line = str(error)
    if error.resume is None:
        return f"{line}; what finished is cached: rerun the same command to resume"
    option, folder = error.resume
    return f"{line}; what finished is kept: resume with {resume_command(argv, option, folder)}"
