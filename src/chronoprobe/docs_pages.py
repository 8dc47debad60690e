"""The documentation pages shipped in the package: ``chronoprobe docs TOPIC`` prints one.

The pages are the checkout's ``docs/*.md``: ``src/chronoprobe/docs`` links there, and a wheel or an sdist
carries them as package data, so a user who installed chronoprobe with pip reads the same pages as one
in the checkout. Help texts and errors name a page as ``chronoprobe docs TOPIC`` (:func:`docs_ref`).
"""

from __future__ import annotations

from pathlib import Path

from chronoprobe.errors import ConfigError

__all__ = ["docs_folder", "docs_ref", "page_text", "page_title", "topics"]


def docs_folder() -> Path:
    """Where the shipped pages are."""
    return Path(__file__).resolve().parent / "docs"


def topics() -> list[str]:
    """Every page's topic (its file name without ``.md``), in name order."""
    folder = docs_folder()
    return sorted(path.stem for path in folder.glob("*.md")) if folder.is_dir() else []


def docs_ref(topic: str, section: str = "") -> str:
    """How a help text or an error names a page: ``chronoprobe docs check`` (with its section, if given)."""
    return f"`chronoprobe docs {topic}`" + (f", {section}" if section else "")


def page_text(topic: str) -> str:
    """The page of ``topic`` (``check`` or ``check.md``); a ConfigError naming the topics otherwise."""
    name = topic.removesuffix(".md").removeprefix("docs/")
    known = topics()
    if name not in known:
        shown = ", ".join(known) if known else "none (the package was built without its docs)"
        raise ConfigError(f"docs topic {topic!r}", f"no such page; topics: {shown}")
    return (docs_folder() / f"{name}.md").read_text(encoding="utf-8")


def page_title(topic: str) -> str:
    """The page's first heading, without its ``#``."""
    for line in page_text(topic).splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return topic
