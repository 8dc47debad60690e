"""``chronoprobe catalogue build``: property templates in, a catalogue and its pinned snapshot out.

For each template, in order: one selection query (its subjects), then its statement query in
pages of ``page_size`` subjects (:mod:`chronoprobe.knowledge.catalogue_query`), one request at a
time under the WDQS client's retry policy. Every answer is saved in ``DIR/pages/`` as it arrives,
so a build that is killed resumes where it stopped and gives the catalogue an uninterrupted one
would: the pages are fixed slices of a saved subject list, and the build date is the first run's.
Then the rules (:mod:`chronoprobe.knowledge.catalogue_rules`) keep or refuse each history, the
facts merge with the shipped DyKnow catalogue (the same subject and property is one fact: DyKnow's
id, category and prompts, the template's fresh answers), and three files are written atomically:

* ``DIR/catalogue.json``: today's catalogue format, each fact naming its template;
* ``DIR/snapshot.json``: the gold answers, a pinned snapshot (``outdated run --snapshot``);
* ``DIR/report.json``: per template, what was selected, kept, merged and refused, and why.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from rich.markup import escape

from chronoprobe.cache import stable_hash
from chronoprobe.errors import ConfigError, DataError, EndpointError
from chronoprobe.io import write_json_atomic
from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.catalogue_query import (
    RawSubject,
    parse_selection,
    parse_statements,
    selection_query,
    statement_query,
    statement_query_text,
)
from chronoprobe.knowledge.catalogue_rules import REASONS, judge_subject
from chronoprobe.knowledge.templates import MAX_SUBJECTS, PropertyTemplate
from chronoprobe.knowledge.types import Fact, FactAnswers, Snapshot
from chronoprobe.knowledge.wikidata import WDQS_ENDPOINT, WikidataClient
from chronoprobe.models.redact import strip_url_credentials
from chronoprobe.records.runlog import MARKER
from chronoprobe.retry import Retryable
from chronoprobe.tables import TableView

BUILD_KIND = "catalogue build"
FORMAT = 1
MANIFEST, PAGES = "build.json", "pages"
CATALOGUE_FILE, SNAPSHOT_FILE, REPORT_FILE = "catalogue.json", "snapshot.json", "report.json"
EXAMPLES = 5
"""Refused subjects named per reason in the report."""

T = TypeVar("T")
PageProgress = Callable[[str, int, int], None]
"""Called with (template name, pages done, pages in all) after each page, saved or reused."""


class BuildSettings(BaseModel):
    """What determines a build's result; a rerun resumes only with the same settings."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: int = FORMAT
    endpoint: str
    as_of: dt.date | None = None
    limit: int | None = Field(None, ge=1, le=MAX_SUBJECTS)
    templates: dict[str, str]
    """Template name -> content digest, in build order."""

    @field_validator("endpoint")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http(s) URL")
        return strip_url_credentials(value)


class Manifest(BaseModel):
    settings: BuildSettings
    retrieved: dt.date
    """The day the build started: the snapshot's retrieval date, the same after a resume."""


class TemplateReport(BaseModel):
    """What one template gave."""

    name: str
    category: str
    property: str
    description: str
    selected: int = 0
    """Subjects the selection query returned."""
    dyknow_asked: int = 0
    """Shipped DyKnow subjects added to the template's subjects (``include_dyknow``)."""
    subjects: int = 0
    pages: int = 0
    kept: int = 0
    """New facts."""
    merged_dyknow: int = 0
    """Shipped DyKnow facts this template answered (one fact each, DyKnow's)."""
    dropped: dict[str, int] = Field(default_factory=dict)
    examples: dict[str, list[str]] = Field(default_factory=dict)
    dyknow_kept_despite: dict[str, int] = Field(default_factory=dict)
    """DyKnow facts are kept as the paper has them even when a rule would refuse a new fact."""
    statements_dropped: dict[str, int] = Field(default_factory=dict)
    stand_in_facts: int | None = None


class BuildReport(BaseModel):
    retrieved: dt.date
    endpoint: str
    as_of: dt.date | None
    limit: int | None
    snapshot: str
    facts: int
    new_facts: int
    dyknow_facts: int
    dyknow_left_out: int
    """Shipped DyKnow facts no chosen template asks (their property is not built): not in the catalogue."""
    categories: dict[str, int]
    templates: list[TemplateReport]


def build_settings(
    templates: Sequence[PropertyTemplate], endpoint: str, as_of: dt.date | None, limit: int | None
) -> BuildSettings:
    try:
        return BuildSettings(
            endpoint=endpoint, as_of=as_of, limit=limit, templates={t.name: t.digest() for t in templates}
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        raise ConfigError(f"--{field.replace('_', '-')}", str(error["msg"]).removeprefix("Value error, ")) from None


# --- the build folder --------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(str(path), f"cannot read it ({exc})") from None


def is_build_folder(path: Path) -> bool:
    """A folder a catalogue build wrote (its marker says so)."""
    try:
        marker = json.loads((path / MARKER).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(marker, dict) and marker.get("kind") == BUILD_KIND


def check_out(out: Path, settings: BuildSettings) -> Manifest | None:
    """Read-only, before any request: ``out`` is new, empty, or a build of the same settings (returned)."""
    where = f"--out {out}"
    if os.path.lexists(out) and not out.is_dir():
        raise ConfigError(where, "is a file, not a folder")
    if not out.is_dir() or not any(out.iterdir()):
        return None
    if not is_build_folder(out):
        raise ConfigError(where, "exists and is not a catalogue build folder; refusing to write into it")
    if not (out / MANIFEST).exists() and not (out / PAGES).exists():
        return None  # killed while it started: nothing fetched yet
    try:
        manifest = Manifest.model_validate(_read_json(out / MANIFEST))
    except ValidationError:
        raise DataError(str(out / MANIFEST), "is not a build manifest") from None
    if manifest.settings != settings:
        old, new = manifest.settings.model_dump(), settings.model_dump()
        differ = ", ".join(key for key in new if old.get(key) != new[key])
        raise ConfigError(
            where, f"holds a build with other settings ({differ} differ); give another --out to build anew"
        )
    return manifest


def _start(out: Path, settings: BuildSettings, today: dt.date) -> Manifest:
    out.mkdir(parents=True, exist_ok=True)
    record = {
        "kind": BUILD_KIND,
        "written": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": strip_url_credentials(" ".join(sys.argv)),
    }
    write_json_atomic(out / MARKER, record)  # first: from here on the folder is ours
    manifest = Manifest(settings=settings, retrieved=today)
    write_json_atomic(out / MANIFEST, manifest.model_dump(mode="json"))
    return manifest


@contextmanager
def _locked(out: Path) -> Iterator[None]:
    with open(out / ".build.lock", "w", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(f"--out {out}", "another build is writing this folder right now") from None
        yield


# --- retrieval -----------------------------------------------------------------------------------


def _dyknow_subjects(template: PropertyTemplate, dyknow: Sequence[Fact]) -> list[str]:
    wanted = template.subjects.include_dyknow
    if wanted is None:
        return []
    found = [f.subject_qid for f in dyknow if f.category == wanted and f.property == template.property]
    return list(dict.fromkeys(q for q in found if q))


def _not_empty(chunk: Sequence[str]) -> Callable[[dict[str, Any]], None]:
    """An answer with no rows is a fault: every subject of a page was selected for having the property
    (or is a DyKnow fact, which has statements), so a whole page without one cannot be right."""

    def check(data: dict[str, Any]) -> None:
        if chunk and not data.get("results", {}).get("bindings"):
            raise Retryable(f"empty page ({len(chunk)} subjects, no statements)")

    return check


class _Retriever:
    """Runs one template's queries, or reads the pages a killed run saved."""

    def __init__(self, client: WikidataClient, out: Path, settings: BuildSettings, dyknow: Sequence[Fact]) -> None:
        self.client, self.out, self.settings, self.dyknow = client, out, settings, dyknow

    def _saved(
        self,
        path: Path,
        query: str,
        parse: Callable[[Any, str], T],
        what: str,
        check: Callable[[dict[str, Any]], None] | None = None,
    ) -> T:
        """The answer saved at ``path``, or fetched, parsed and only then saved (a malformed answer is never kept)."""
        if path.is_file():
            try:
                return parse(_read_json(path), str(path))
            except EndpointError as exc:
                raise DataError(
                    str(path), f"{exc.problem} (a damaged saved answer: delete it to fetch it again)"
                ) from None
        try:
            data = self.client.query(query, check)
            parsed = parse(data, f"{self.client.endpoint} ({what})")
        except EndpointError as exc:
            where = exc.where if exc.where.endswith(f"({what})") else f"{exc.where} ({what})"
            if not any((self.out / PAGES).glob("*/*.json")):
                raise EndpointError(where, exc.problem) from None
            raise EndpointError(
                where, f"{exc.problem}; the pages already fetched are kept in {self.out}: rerun to resume"
            ) from None
        write_json_atomic(path, data)
        return parsed

    def subjects(self, template: PropertyTemplate, report: TemplateReport) -> list[str]:
        limit = min(template.subjects.limit, self.settings.limit or MAX_SUBJECTS)
        folder = self.out / PAGES / template.name
        query = selection_query(template, limit)
        found = self._saved(folder / "subjects.json", query, parse_selection, f"{template.name} subjects")
        selected = [qid for qid, _ in found]
        asked = _dyknow_subjects(template, self.dyknow)
        subjects = list(dict.fromkeys([*asked, *selected]))
        if self.settings.limit is not None:
            subjects = subjects[: self.settings.limit]
        report.selected, report.dyknow_asked, report.subjects = len(selected), len(asked), len(subjects)
        return subjects

    def statements(
        self, template: PropertyTemplate, subjects: list[str], progress: PageProgress | None
    ) -> dict[str, RawSubject]:
        folder = self.out / PAGES / template.name
        chunks = [subjects[i : i + template.page_size] for i in range(0, len(subjects), template.page_size)]
        found: dict[str, RawSubject] = {}
        for number, chunk in enumerate(chunks):
            path, query = folder / f"page-{number:05d}.json", statement_query(template, chunk)
            what = f"{template.name} page {number}"
            found.update(self._saved(path, query, parse_statements, what, _not_empty(chunk)))
            if progress is not None:
                progress(template.name, number + 1, len(chunks))
        return found


# --- facts -------------------------------------------------------------------------------------------


class _Merge:
    """The facts so far: DyKnow's (by subject and property) first, then the new ones in template order."""

    def __init__(self, dyknow: Sequence[Fact], retrieved: dt.date) -> None:
        self.retrieved = retrieved
        """The day the answers describe: a value whose end comes later is current."""
        self.dyknow = {(f.subject_qid, f.property): f for f in dyknow if f.subject_qid}
        self.merged: dict[str, tuple[Fact, FactAnswers]] = {}
        self.new: list[tuple[Fact, FactAnswers]] = []
        self.taken: set[tuple[str, str]] = set()
        self.ids: set[str] = {f.fact_id for f in dyknow}

    def add(self, template: PropertyTemplate, raw: RawSubject, as_of: dt.date | None, report: TemplateReport) -> None:
        judged = judge_subject(raw, template, as_of, self.retrieved)
        for why, count in judged.dropped.items():
            if count:
                report.statements_dropped[why] = report.statements_dropped.get(why, 0) + count
        key = (raw.qid, template.property)
        if key in self.taken:
            self._refuse(report, "duplicate", judged.label or raw.qid, "asked by an earlier template")
            return
        self.taken.add(key)
        shipped = self.dyknow.get(key)
        if shipped is not None:
            fact = shipped.model_copy(update={"template": template.name})
            self.merged[fact.fact_id] = (fact, FactAnswers(fact_id=fact.fact_id, statements=judged.statements))
            report.merged_dyknow += 1
            if judged.reason is not None:
                report.dyknow_kept_despite[judged.reason] = report.dyknow_kept_despite.get(judged.reason, 0) + 1
            return
        if judged.reason is not None:
            self._refuse(report, judged.reason, judged.label or raw.qid, judged.detail)
            return
        assert judged.label is not None
        fact_id = f"{template.category}/{judged.label}"
        if fact_id in self.ids:
            self._refuse(report, "colliding_subject", judged.label, f"another subject is also called {fact_id!r}")
            return
        self.ids.add(fact_id)
        fact = Fact(
            fact_id=fact_id,
            category=template.category,
            subject=judged.label,
            subject_qid=raw.qid,
            property=template.property,
            templates=template.prompts(judged.label),
            template=template.name,
        )
        self.new.append((fact, FactAnswers(fact_id=fact_id, statements=judged.statements)))
        report.kept += 1

    @staticmethod
    def _refuse(report: TemplateReport, reason: str, name: str, detail: str) -> None:
        report.dropped[reason] = report.dropped.get(reason, 0) + 1
        examples = report.examples.setdefault(reason, [])
        if len(examples) < EXAMPLES:
            examples.append(f"{name}: {detail}")

    def facts(self, dyknow: Sequence[Fact]) -> list[tuple[Fact, FactAnswers]]:
        return [self.merged[f.fact_id] for f in dyknow if f.fact_id in self.merged] + self.new


def query_hash(templates: Sequence[PropertyTemplate]) -> str:
    """Identifies the query texts a built snapshot was retrieved with."""
    return stable_hash(
        {t.name: {"subjects": selection_query(t, 0), "statements": statement_query_text(t)} for t in templates}
    )


# --- the build -------------------------------------------------------------------------------------


def build_catalogue(
    templates: Sequence[PropertyTemplate],
    out: Path,
    *,
    endpoint: str = WDQS_ENDPOINT,
    as_of: dt.date | None = None,
    limit: int | None = None,
    client: WikidataClient | None = None,
    timeout_s: float = 60.0,
    progress: PageProgress | None = None,
    notice: Callable[[str], None] | None = None,
    today: dt.date | None = None,
) -> BuildReport:
    """Build (or resume) a catalogue in ``out``; every query text is built, so every id checked, first."""
    out = Path(out)
    if not templates:
        raise ConfigError("templates", "no template to build")
    settings = build_settings(templates, endpoint, as_of, limit)
    for template in templates:  # validates every identifier before the first request
        selection_query(template, 1)
        statement_query_text(template)
    manifest = check_out(out, settings)
    dyknow = load_catalogue()
    created = not out.exists()
    manifest = manifest or _start(out, settings, today or dt.date.today())
    own = client is None
    client = client or WikidataClient(endpoint=endpoint, timeout_s=timeout_s, notice=notice)
    try:
        with _locked(out):
            for stale in (out / PAGES).glob("*/.*.tmp"):  # a page a killed run was writing
                stale.unlink()
            retriever = _Retriever(client, out, settings, dyknow)
            merge = _Merge(dyknow, as_of or manifest.retrieved)
            reports = []
            for template in templates:
                report = TemplateReport(
                    name=template.name,
                    category=template.category,
                    property=template.property,
                    description=template.description,
                    stand_in_facts=template.stand_in_facts,
                )
                subjects = retriever.subjects(template, report)
                found = retriever.statements(template, subjects, progress)
                report.pages = -(-len(subjects) // template.page_size)
                for qid in subjects:
                    merge.add(template, found.get(qid, RawSubject(qid)), as_of, report)
                report.dropped = {r: report.dropped[r] for r in REASONS if r in report.dropped}
                reports.append(report)
            return _write(out, manifest, templates, merge.facts(dyknow), reports, dyknow)
    except BaseException:
        if created and not any((out / PAGES).glob("*/*.json")):
            _remove_own(out)  # nothing fetched: leave no stray folder
        raise
    finally:
        if own:
            client.close()


def _remove_own(out: Path) -> None:
    for name in (MANIFEST, MARKER, ".build.lock"):
        (out / name).unlink(missing_ok=True)
    for folder in [*sorted((out / PAGES).glob("*"), reverse=True), out / PAGES, out]:
        with suppress(OSError):
            folder.rmdir()


def _write(
    out: Path,
    manifest: Manifest,
    templates: Sequence[PropertyTemplate],
    facts: list[tuple[Fact, FactAnswers]],
    reports: list[TemplateReport],
    dyknow: Sequence[Fact],
) -> BuildReport:
    settings = manifest.settings
    if not facts:
        refused = Counter[str]()
        for entry in reports:
            refused.update(entry.dropped)
        why = ", ".join(f"{reason} {n}" for reason, n in refused.most_common()) or "no subject was selected"
        raise DataError(f"--out {out}", f"the templates gave no fact ({why}); nothing written but the fetched pages")
    as_of = f", as of {settings.as_of}" if settings.as_of else ""
    name = f"catalogue-{manifest.retrieved}" + (f"-as-of-{settings.as_of}" if settings.as_of else "")
    source = (
        f"Wikidata via {settings.endpoint}, retrieved {manifest.retrieved}{as_of} by chronoprobe catalogue build "
        f"(templates: {', '.join(settings.templates)})"
    )
    snapshot = Snapshot(
        name=name,
        retrieved=settings.as_of or manifest.retrieved,  # the day the answers describe (the knowledge date's horizon)
        endpoint=settings.endpoint,
        query_hash=query_hash(templates),
        source=source,
        answers={fact.fact_id: answers for fact, answers in facts},
        warnings={
            fact.fact_id: "no dated statement came back for this DyKnow fact; the audit leaves it out"
            for fact, answers in facts
            if not answers.statements
        },
    )
    catalogue = {
        "name": out.name or "catalogue",
        "description": f"{len(facts)} time-sensitive facts built from {len(templates)} property templates{as_of}",
        "source": source,
        "built": {"retrieved": manifest.retrieved.isoformat(), **settings.model_dump(mode="json")},
        "facts": [fact.model_dump(mode="json", exclude_none=True) | {"attribute": fact.attribute} for fact, _ in facts],
    }
    categories = Counter(fact.category for fact, _ in facts)
    shipped_ids = {f.fact_id for f in dyknow}
    dyknow_in = sum(1 for fact, _ in facts if fact.fact_id in shipped_ids)
    report = BuildReport(
        retrieved=manifest.retrieved,
        endpoint=settings.endpoint,
        as_of=settings.as_of,
        limit=settings.limit,
        snapshot=name,
        facts=len(facts),
        new_facts=len(facts) - dyknow_in,
        dyknow_facts=dyknow_in,
        dyknow_left_out=len(dyknow) - dyknow_in,
        categories=dict(sorted(categories.items())),
        templates=reports,
    )
    write_json_atomic(out / SNAPSHOT_FILE, snapshot.model_dump(mode="json", exclude_none=True))
    write_json_atomic(out / CATALOGUE_FILE, catalogue)
    write_json_atomic(out / REPORT_FILE, report.model_dump(mode="json"))
    return report


def read_report(folder: Path) -> BuildReport:
    """The report of a finished build in ``folder``."""
    path = Path(folder) / REPORT_FILE
    if not path.is_file():
        what = "an unfinished build (rerun it to finish)" if is_build_folder(Path(folder)) else "not a catalogue build"
        raise DataError(str(folder), f"has no {REPORT_FILE}: {what}")
    try:
        return BuildReport.model_validate(_read_json(path))
    except ValidationError as exc:
        raise DataError(str(path), f"not a build report ({exc.errors()[0]['msg']})") from None


def build_lines(report: BuildReport, out: Path, templates: int) -> list[str]:
    """What ``catalogue build`` says once done (rich markup): the facts from ``templates`` templates, where the
    catalogue and snapshot are, and the command that audits a model on them."""
    return [
        f"{report.facts} facts in {len(report.categories)} categories ({report.new_facts} new, "
        f"{report.dyknow_facts} DyKnow) from {templates} templates",
        f"catalogue: {out / CATALOGUE_FILE}\nsnapshot:  {out / SNAPSHOT_FILE}",
        f"run it: chronoprobe outdated run --facts {out / CATALOGUE_FILE} --snapshot {out / SNAPSHOT_FILE}",
    ]


def report_view(folder: Path) -> TableView:
    """The report of the build in ``folder`` as ``catalogue report`` shows it: per template the subjects asked,
    facts kept, DyKnow facts merged and refused, then why (rich markup in :attr:`~TableView.after`)."""

    report = read_report(folder)
    rows = [
        tuple(str(cell) for cell in (t.name, t.property, t.subjects, t.kept, t.merged_dyknow, sum(t.dropped.values())))
        for t in report.templates
    ]
    after: list[str] = []
    for entry in report.templates:
        if entry.dropped:
            after.append(
                escape(f"{entry.name} refused: " + ", ".join(f"{why} {n}" for why, n in entry.dropped.items()))
            )
        after.extend(escape(f"  {why}: {example}") for why, examples in entry.examples.items() for example in examples)
        if entry.dyknow_kept_despite:
            kept = ", ".join(f"{why} {n}" for why, n in entry.dyknow_kept_despite.items())
            after.append(escape(f"{entry.name} kept DyKnow facts as shipped despite: {kept}"))
    as_of = f", as of {report.as_of}" if report.as_of else ""
    after.append(
        f"{report.new_facts} new facts, {report.dyknow_facts} DyKnow facts ({report.dyknow_left_out} left out: "
        f"no chosen template asks their property){as_of}; categories: "
        + ", ".join(f"{c} {n}" for c, n in report.categories.items())
    )
    title = f"{folder}: {report.facts} facts, retrieved {report.retrieved} from {report.endpoint}"
    columns = ("template", "property", "subjects", "kept", "DyKnow merged", "refused")
    return TableView(title, columns, rows, after=tuple(after), fold=False)
