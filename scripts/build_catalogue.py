"""Build src/chronoprobe/data/catalogue/dyknow_facts.json from DyKnow's fact list.

Usage: python scripts/build_catalogue.py [path/to/grc_generated.json]

Takes the 130 (subject, attribute) pairs and the ``generic`` question from
DyKnow's ``grc_generated.json`` (MIT, sislab-unitn/DyKnow@1182dd8), adds the
subject's Wikidata QID (written from memory, not looked up: entries we are not
sure about are marked ``"qid_confidence": "low"``) and three paraphrase
templates in chronoprobe's own wording. The original paraphrases are not
copied; ``load_grc`` reads them from the original file when wanted.
"""

from __future__ import annotations

import sys
from pathlib import Path

from chronoprobe.io import write_json_atomic
from chronoprobe.knowledge.grc import load_grc

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_GRC = ROOT / ".." / "shared" / "data" / "dyknow" / "grc_generated.json"
OUT = ROOT / "src" / "chronoprobe" / "data" / "catalogue" / "dyknow_facts.json"

# subject -> (QID, confident?)
QIDS: dict[str, tuple[str, bool]] = {
    # countries
    "Italy": ("Q38", True),
    "United States of America": ("Q30", True),
    "China": ("Q148", True),
    "Germany": ("Q183", True),
    "Japan": ("Q17", True),
    "India": ("Q668", True),
    "United Kingdom": ("Q145", True),
    "France": ("Q142", True),
    "Brazil": ("Q155", True),
    "Canada": ("Q16", True),
    "Russia": ("Q159", True),
    "Mexico": ("Q96", True),
    "South Korea": ("Q884", True),
    "Australia": ("Q408", True),
    "Spain": ("Q29", True),
    "Indonesia": ("Q252", True),
    "Turkey": ("Q43", True),
    "Netherlands": ("Q55", True),
    "Saudi Arabia": ("Q851", True),
    "Poland": ("Q36", True),
    "Belgium": ("Q31", True),
    "Argentina": ("Q414", True),
    "Sweden": ("Q34", True),
    "Ireland": ("Q27", True),
    "Norway": ("Q20", True),
    "Austria": ("Q40", True),
    "Israel": ("Q801", True),
    "Thailand": ("Q869", True),
    "United Arab Emirates": ("Q878", True),
    "Singapore": ("Q334", True),
    "Bangladesh": ("Q902", True),
    "Philippines": ("Q928", True),
    "Vietnam": ("Q881", True),
    "Malaysia": ("Q833", True),
    "Denmark": ("Q35", True),
    "Egypt": ("Q79", True),
    "Nigeria": ("Q1033", True),
    "South Africa": ("Q258", True),
    "Iran": ("Q794", True),
    "Colombia": ("Q739", True),
    "Romania": ("Q218", True),
    "Chile": ("Q298", True),
    "Pakistan": ("Q843", True),
    "Czech Republic": ("Q213", True),
    "Finland": ("Q33", True),
    "Iraq": ("Q796", True),
    "Portugal": ("Q45", True),
    # athletes
    "Cristiano Ronaldo": ("Q11571", True),
    "Lionel Messi": ("Q615", True),
    "Neymar Jr.": ("Q142794", True),
    "Kylian Mbappé": ("Q21621995", True),
    "Karim Benzema": ("Q160140", False),
    "Erling Haaland": ("Q28967995", True),
    "Mohamed Salah": ("Q1354960", True),
    "Sadio Mané": ("Q3472060", False),
    "Kevin De Bruyne": ("Q1127097", False),
    "Harry Kane": ("Q1745193", False),
    "Stephen Curry": ("Q352159", True),
    "Kevin Durant": ("Q29545", True),
    "LeBron James": ("Q36159", True),
    "Nikola Jokic": ("Q3340060", False),
    "Bradley Beal": ("Q4954897", False),
    "Giannis Antetokounmpo": ("Q3308529", False),
    "Damian Lillard": ("Q1158329", False),
    "Kawhi Leonard": ("Q1741389", False),
    "Paul George": ("Q313925", False),
    "Max Verstappen": ("Q2239218", True),
    "Lewis Hamilton": ("Q9673", True),
    "Fernando Alonso": ("Q10514", True),
    "Sergio Pérez": ("Q172039", False),
    "Charles Leclerc": ("Q17541912", True),
    "Lando Norris": ("Q19873735", False),
    "Carlos Sainz Jr.": ("Q13038424", False),
    "George Russell": ("Q18342236", False),
    "Pierre Gasly": ("Q15994599", False),
    # companies
    "Walmart": ("Q483551", True),
    "Saudi Aramco": ("Q1122817", False),
    "Amazon": ("Q3884", True),
    "ExxonMobil": ("Q156238", True),
    "Apple": ("Q312", True),
    "Shell": ("Q154950", True),
    "CVS Health": ("Q624375", True),
    "Volkswagen Group": ("Q156578", True),
    "Alphabet Inc.": ("Q20800404", True),
    "Toyota": ("Q53268", True),
    "TotalEnergies": ("Q154037", True),
    "Glencore": ("Q182817", False),
    "BP": ("Q152057", True),
    "Cencora, Inc.": ("Q470156", False),
    "Microsoft": ("Q2283", True),
    "Gazprom": ("Q102673", True),
    "Mitsubishi": ("Q1188988", False),
    "Ford Motor Company": ("Q44294", True),
    # organizations
    "United Nations": ("Q1065", True),
    "World Bank": ("Q7164", True),
    "International Atomic Energy Agency": ("Q25427", False),
    "North Atlantic Treaty Organization": ("Q7184", True),
    "International Olympic Committee": ("Q40970", True),
}

# Names that read better with an article inside a sentence.
WITH_THE = {
    "United States of America",
    "United Kingdom",
    "Netherlands",
    "United Arab Emirates",
    "Philippines",
    "Czech Republic",
    "United Nations",
    "World Bank",
    "International Atomic Energy Agency",
    "North Atlantic Treaty Organization",
    "International Olympic Committee",
}
FOOTBALL = {
    "Cristiano Ronaldo",
    "Lionel Messi",
    "Neymar Jr.",
    "Kylian Mbappé",
    "Karim Benzema",
    "Erling Haaland",
    "Mohamed Salah",
    "Sadio Mané",
    "Kevin De Bruyne",
    "Harry Kane",
}
FORMULA_ONE = {
    "Max Verstappen",
    "Lewis Hamilton",
    "Fernando Alonso",
    "Sergio Pérez",
    "Charles Leclerc",
    "Lando Norris",
    "Carlos Sainz Jr.",
    "George Russell",
    "Pierre Gasly",
}


def _name(subject: str) -> str:
    return f"the {subject}" if subject in WITH_THE else subject


def templates(category: str, subject: str, attribute: str | None, prop: str) -> list[str]:
    name = _name(subject)
    if category == "countries_byGDP":
        role = "head of state" if prop == "P35" else "head of government"
        return [
            f"As of today, the person serving as {attribute} is",
            f"Right now, the office of {attribute} is held by",
            f"At present, the {role} of {name} is",
        ]
    if category == "athletes_byPayment":
        if subject in FORMULA_ONE:
            return [
                f"As of today, {subject} drives for",
                f"The Formula One team that {subject} currently races for is",
                f"At present, {subject} is a driver for",
            ]
        team = "club" if subject in FOOTBALL else "NBA team"
        return [
            f"As of today, {subject} plays for",
            f"The {team} that {subject} currently represents is",
            f"At present, {subject} is a player for",
        ]
    if category == "companies_byRevenue":
        return [
            f"As of today, the chief executive officer of {subject} is",
            f"The person currently serving as CEO of {subject} is",
            f"At present, {subject} is run by its CEO,",
        ]
    if attribute == "general secretary":
        return [
            f"As of today, the Secretary-General of {name} is",
            f"The person currently serving as Secretary-General of {name} is",
            f"At present, the post of Secretary-General of {name} is held by",
        ]
    if attribute == "chairperson":
        return [
            f"As of today, the president of {name} is",
            f"The person currently presiding over {name} is",
            f"At present, {name} is led by its president,",
        ]
    if attribute == "director / manager":
        return [
            f"As of today, the Director General of {name} is",
            f"The person currently heading {name} is",
            f"At present, {name} is run by its Director General,",
        ]
    if attribute == "headquarters location":
        return [
            f"As of today, {name} has its headquarters in",
            f"The place where {name} is currently headquartered is",
            f"At present, the main offices of {name} are located in",
        ]
    raise ValueError(f"no templates for {category}/{subject}/{attribute}")


def main(grc_path: Path) -> None:
    facts, _ = load_grc(grc_path)
    rows = []
    for fact in facts:
        qid, confident = QIDS[fact.subject]
        row: dict[str, object] = {
            "fact_id": fact.fact_id,
            "category": fact.category,
            "subject": fact.subject,
            "subject_qid": qid,
            "attribute": fact.attribute,
            "property": fact.property,
            "generic": fact.generic,
            "templates": templates(fact.category, fact.subject, fact.attribute, fact.property),
        }
        if not confident:
            row["qid_confidence"] = "low"
        rows.append(row)
    write_json_atomic(
        OUT,
        {
            "name": "dyknow",
            "description": "The 130 time-sensitive facts of DyKnow (Mousavi et al., 2024); templates in chronoprobe's wording.",
            "source": "https://github.com/sislab-unitn/DyKnow (grc_generated.json @ 1182dd8, MIT): subjects, attributes, generic question",
            "facts": rows,
        },
    )
    print(f"wrote {len(rows)} facts to {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_GRC)
