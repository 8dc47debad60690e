"""Property templates: declarative TOML files that say which Wikidata facts a built catalogue asks.

One template is one (class of subjects, property) pair: which subjects (classes, a restricted
SPARQL pattern, listed items, a sitelinks floor, a limit), which property and how its validity
is read (start, end, point in time, ranks kept, whether one or several values may be current),
the value type (items, labelled in the languages asked for), three paraphrases of our own in the
audit's style, and the category the reports use. ``chronoprobe catalogue build`` turns templates
into a catalogue and a snapshot (:mod:`chronoprobe.knowledge.catalogue_build`); docs/knowledge.md
("Property templates") describes every field.

Every identifier is validated here, by the pydantic models, before any query text exists; a
pattern may hold only variables, ``wd:Q..`` items, ``wdt:``/``p:``/``ps:``/``pq:`` properties and
path punctuation, so nothing in a template can end the query's braces or call a service.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from chronoprobe.errors import ConfigError, DataError
from chronoprobe.io import not_utf8
from chronoprobe.knowledge.types import CATEGORY_RE, PID_RE, QID_RE, DyknowCategory

MAX_SUBJECTS = 20000
"""Most subjects one template may ask for (a selection larger than this is a dump, not a query)."""
DEFAULT_LIMIT = 1000
"""Subjects a template selects when it names no limit."""
MAX_PAGE_SIZE = 200
"""Most subjects per statement page: 200 subjects' statements answer in about a second on WDQS, far from its 60 s limit."""
PLACEHOLDER = "{subject}"
RESERVED_VARIABLES = frozenset(
    {
        "statement",
        "rank",
        "value",
        "label",
        "alias",
        "start",
        "startPrecision",
        "end",
        "endPrecision",
        "point",
        "pointPrecision",
        "subjectLabel",
        "subjectClass",
        "sitelinks",
        "anyStatement",
        "anyRank",
    }
)
"""Variables the built queries use themselves; a pattern may not bind them."""

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_LANGUAGE_RE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{1,8})*$")
_PATTERN_TOKEN = re.compile(
    r"\s+|(?P<variable>\?[A-Za-z_][A-Za-z0-9_]*)|(?P<item>wd:Q[0-9]+)|(?P<property>(?:wdt|p|ps|pq):P[0-9]+)|(?P<punct>[.;,/*+^|()])"
)


def _qid(value: str) -> str:
    if not QID_RE.fullmatch(value):
        raise ValueError(f"{value!r} is not a Wikidata item id (Q followed by digits)")
    return value


def _pid(value: str) -> str:
    if not PID_RE.fullmatch(value):
        raise ValueError(f"{value!r} is not a Wikidata property id (P followed by digits)")
    return value


ItemId = Annotated[str, AfterValidator(_qid)]
PropertyId = Annotated[str, AfterValidator(_pid)]


def check_pattern(text: str) -> str:
    """``text`` if it is a pattern of triples about ``?subject`` in the allowed tokens; ``ValueError`` if not."""
    position, depth = 0, 0
    for match in _PATTERN_TOKEN.finditer(text):
        if match.start() != position:
            break
        position = match.end()
        kind = match.lastgroup
        token = match.group()
        if kind == "item":
            _qid(token.split(":", 1)[1])
        elif kind == "property":
            _pid(token.split(":", 1)[1])
        elif kind == "variable" and token[1:] in RESERVED_VARIABLES:
            raise ValueError(f"?{token[1:]} is a variable of the built query; use another name")
        elif token in "()":
            depth += 1 if token == "(" else -1
            if depth < 0:
                raise ValueError("unbalanced parentheses")
    if position != len(text):
        raise ValueError(
            f"unexpected text {text[position : position + 20]!r}: a pattern holds only ?variables, wd:Q.. items, "
            "wdt:/p:/ps:/pq: properties and . ; , / * + ^ | ( )"
        )
    if depth:
        raise ValueError("unbalanced parentheses")
    if not re.search(r"\?subject(?![A-Za-z0-9_])", text):
        raise ValueError("must mention ?subject")
    return text


class SubjectSelection(BaseModel):
    """Which subjects a template asks about. Every constraint given applies (they are joined with AND)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    classes: tuple[ItemId, ...] = ()
    """Instance of (P31) any of these classes."""
    pattern: str | None = None
    """Triple patterns about ``?subject`` (e.g. ``?subject wdt:P17 wd:Q183 .``), in a restricted grammar."""
    items: tuple[ItemId, ...] = ()
    """Exactly these subjects."""
    min_sitelinks: int = Field(0, ge=0, le=1000)
    """Only subjects with at least this many Wikipedia (and sister project) sitelinks: the well-known ones."""
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_SUBJECTS)
    """The best-known subjects first (most sitelinks), at most this many."""
    include_dyknow: DyknowCategory | None = None
    """Also ask the shipped DyKnow facts of this category that have the template's property (they merge into one fact)."""

    @field_validator("pattern")
    @classmethod
    def _valid_pattern(cls, value: str | None) -> str | None:
        return None if value is None else check_pattern(value.strip())


class Validity(BaseModel):
    """How a statement's validity is read, and which statements count."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    start: PropertyId = "P580"
    end: PropertyId = "P582"
    point_in_time: PropertyId = "P585"
    ranks: tuple[Literal["preferred", "normal", "deprecated"], ...] = ("preferred", "normal")
    """Statement ranks kept; deprecated statements (claims marked wrong) are dropped unless listed."""
    current: Literal["one", "any"] = "one"
    """``one``: two values current at once contradict each other (a head coach); ``any``: they may (a club and a national team)."""

    @field_validator("ranks")
    @classmethod
    def _some_ranks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("keep at least one rank")
        return tuple(dict.fromkeys(value))


class ValueSpec(BaseModel):
    """What a value is: an item, with its label and aliases in these languages (the first that has one wins)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["item"] = "item"
    languages: tuple[str, ...] = ("en",)

    @field_validator("languages")
    @classmethod
    def _valid_languages(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("name at least one language")
        for language in value:
            if not _LANGUAGE_RE.fullmatch(language):
                raise ValueError(f"{language!r} is not a language code (e.g. en, de, pt-br)")
        return value


class PropertyTemplate(BaseModel):
    """One template file, validated."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    category: str
    description: str = Field(min_length=1)
    """What it selects, in a sentence."""
    property: PropertyId
    paraphrases: tuple[str, str, str]
    """Three completion prefixes of our own wording, each with ``{subject}`` once."""
    stand_in_facts: int | None = Field(None, ge=0)
    """How many new facts it gave on the offline stand-in (``python -m chronoprobe.testing.wdqs``), for the reader."""
    page_size: int = Field(50, ge=1, le=MAX_PAGE_SIZE)
    subjects: SubjectSelection = SubjectSelection()
    validity: Validity = Validity()
    values: ValueSpec = ValueSpec()

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not _NAME_RE.fullmatch(value):
            raise ValueError(f"{value!r}: lower-case letters, digits and _, starting with a letter")
        return value

    @field_validator("category")
    @classmethod
    def _valid_category(cls, value: str) -> str:
        if not CATEGORY_RE.fullmatch(value):
            raise ValueError(f"{value!r}: letters, digits and _, starting with a letter")
        return value

    @field_validator("paraphrases")
    @classmethod
    def _valid_paraphrases(cls, value: tuple[str, str, str]) -> tuple[str, str, str]:
        for text in value:
            if (
                text.count(PLACEHOLDER) != 1
                or text.replace(PLACEHOLDER, "").count("{")
                or "}" in text.replace(PLACEHOLDER, "")
            ):
                raise ValueError(f"{text!r} must hold {PLACEHOLDER} exactly once and no other braces")
            if not text.replace(PLACEHOLDER, "").strip():
                raise ValueError(f"{text!r} says nothing besides the subject")
        if len({text.strip().casefold() for text in value}) != len(value):
            raise ValueError("the three paraphrases must differ")
        return value

    @model_validator(mode="after")
    def _distinct_validity(self) -> PropertyTemplate:
        qualifiers = (self.validity.start, self.validity.end, self.validity.point_in_time)
        if len(set(qualifiers)) != 3:
            raise ValueError("validity.start, end and point_in_time must be three different properties")
        if self.property in qualifiers:
            raise ValueError(f"property {self.property} cannot also be a validity qualifier")
        return self

    def prompts(self, subject: str) -> tuple[str, ...]:
        """The fact's templates: each paraphrase with the subject's label in place."""
        return tuple(text.replace(PLACEHOLDER, subject) for text in self.paraphrases)

    def digest(self) -> str:
        """Identifies the template's content (a build resumes only with the same templates)."""
        return hashlib.sha256(self.model_dump_json().encode("utf-8")).hexdigest()[:16]


def shipped_dir() -> Path:
    return Path(str(files("chronoprobe") / "data" / "templates"))


def shipped_templates() -> list[PropertyTemplate]:
    """The default set, in file-name order."""
    return [load_template(path) for path in sorted(shipped_dir().glob("*.toml"))]


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{field}: {message}" if field else message


def parse_template(data: Any, where: str) -> PropertyTemplate:
    if not isinstance(data, dict):
        raise DataError(where, "a template must be a TOML table")
    try:
        return PropertyTemplate.model_validate(data)
    except ValidationError as exc:
        raise DataError(where, _first_error(exc)) from None


def load_template(path: Path) -> PropertyTemplate:
    """Read and validate one template file (TOML); a one-line ``DataError`` naming the file otherwise."""
    where = f"template {path}"
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8(where, exc) from None
    except OSError as exc:
        raise DataError(where, f"cannot read it ({exc.strerror or exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DataError(where, f"not valid TOML ({exc})") from None
    return parse_template(data, where)


def resolve_templates(given: Sequence[str]) -> list[PropertyTemplate]:
    """Template names (shipped) or ``.toml`` paths, validated; none given = the shipped default set.

    Two templates of the same name are refused: a fact names its template, so names must be unique.
    """
    if not given:
        return shipped_templates()
    shipped = {path.stem: path for path in shipped_dir().glob("*.toml")}
    templates: list[PropertyTemplate] = []
    for entry in given:
        path = Path(entry).expanduser()
        if path.suffix == ".toml" or "/" in entry or "\\" in entry:
            if not path.is_file():
                raise ConfigError(f"template {entry}", "file not found")
            templates.append(load_template(path))
        elif entry in shipped:
            templates.append(load_template(shipped[entry]))
        else:
            known = ", ".join(sorted(shipped)) or "none"
            raise ConfigError(f"template {entry!r}", f"not a shipped template or a .toml file (shipped: {known})")
    seen: set[str] = set()
    for template in templates:
        if template.name in seen:
            raise ConfigError(f"template {template.name!r}", "given twice (template names must be unique)")
        seen.add(template.name)
    return templates
