"""Reading the `cosmo` post conventions: action lines in the post text and dice labels, in the text's own form.

    Tizio attacca [Sblocco Potenziale Fisico] [Forza 230]          (the rule text's examples, verbatim)
    Attacco [Sblocco Potenziale Fisico] [Forza 230] (Tizio vs Caio)
    Attacco [Fulmine di Pegaso] {Special 1} [Forza 260] [Pool 340] [Cosmo 120] (Tizio vs Caio)
    Caio difende (o schiva) [Resistenza 250]
    Incasso [Resistenza 500 => Difesa Naturale: 500/2 = 250] (Caio vs Tizio)
    [dice=1d100]Contrattacco [Sblocco Potenziale Fisico] [Forza 250] [Reattività 235] (Caio vs Tizio)[/dice]
    [dice=1d20]Danno Moderato [Senza Armatura] (Caio)[/dice]
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...history import Post
from .tables import STAT_CANON, fold

_W = "A-Za-zÀ-ÖØ-öø-ÿ'’"
_NAME = rf"[A-ZÀ-Ý][{_W}]*(?:\s+[A-ZÀ-Ý][{_W}]*){{0,2}}"
_VERBS = (
    ("contrattacco", r"contrattacc\w*"),
    ("attacco", r"attacc\w*"),
    ("difesa", r"difend\w*|difes[ao]|schiv\w*|parat[ao]|para"),
    ("incasso", r"incass\w*"),
    ("liberazione", r"liberazione|mi\s+libero|brucio"),
    ("rilascio", r"rilasci\w*"),
    ("annullo", r"annull\w*"),
    ("danno", r"dann[oi]"),
    ("sconfitto", r"(?:mi\s+dichiaro\s+)?sconfitt[oa]|resa|mi\s+arrendo"),
    ("svenuto", r"svenut[oa]|svengo"),
)
ACTION_VERBS = tuple(k for k, _ in _VERBS)  # the actions' names, as a label starts with them
_VERB_RE = "|".join(f"(?P<{k}>{v})" for k, v in _VERBS)
_LINE = re.compile(rf"^\s*(?:(?P<who>{_NAME})\s+)?(?i:{_VERB_RE})(?![{_W}])\s*(?i:\(o\s+[{_W}]+\)\s*)?(?P<rest>.*)$")
_BRACKET = re.compile(r"\[([^\[\]]*)\]")
_CURLY = re.compile(r"\{([^{}]*)\}")
_PARTIES = re.compile(r"\(\s*([^()]*?)\s*(?:\bvs\.?|\bcontro)\s+([^()]*?)\s*\)", re.IGNORECASE)
_SOLO = re.compile(rf"\(\s*({_NAME})\s*\)")
_STAT_VALUE = re.compile(rf"^\s*([{_W}]+)\s*[:=]?\s*(\d+)\b(.*)$")
_NUMBERED = {"cosmo": "cosmo", "pool": "pool", "turni": "turni", "turno": "turni", "livello": "livello"}
_SPECIAL = re.compile(r"(?i)^\s*special\s*(?:di\s+)?(?:livello\s*)?(\d)\s*(?:°\s*)?(?:livello)?\s*$")
_LEVEL_WORDS = re.compile(r"(?i)^\s*special\s+di\s+(primo|secondo)\s+livello\s*$")
_DN = re.compile(r"(?i)difesa\s+naturale.*?(\d+)\s*$")
_PERCENT = re.compile(r"(\d+)\s*%\s*\)?\s*$")
_NO_ACTION_KINDS = ("sconfitto", "svenuto", "annullo")  # may stand alone without brackets
_STANDALONE = ("[", "(", "{", ":", "!", ".")


@dataclass(frozen=True)
class Action:
    """One action written in a post (a line of text or a dice label)."""

    kind: str  # attacco, difesa, incasso, contrattacco, liberazione, rilascio, annullo, danno, sconfitto, svenuto
    raw: str
    actor: str | None = None
    targets: tuple[str, ...] = ()
    names: tuple[str, ...] = ()  # bracketed words: technique / skill, "Con Armatura", a band name, a fighter
    stats: dict[str, int] = field(default_factory=dict)  # as written: {"Forza": 230}
    numbers: dict[str, int] = field(default_factory=dict)  # cosmo, pool, turni, livello, difesa_naturale, soglia
    tags: tuple[str, ...] = ()  # folded {…} tags: "bloccante", "ghermente", "riflessa", "libera", "artefatto"
    word: str = ""  # the words between the verb and the first bracket ("Moderato" in "Danno Moderato")
    roll: int | None = None  # index of the dice roll whose label this is

    @property
    def level(self) -> int | None:
        return self.numbers.get("livello")


def parse_line(line: str, roll: int | None = None) -> Action | None:
    """One line → Action, None when it is not an action line (prose, schema, a roll's rendering)."""
    text = (line or "").strip()
    if not text or len(text) > 400:
        return None
    text = re.sub(r"^(?:lancio\s*(?:dadi)?\s*:?)\s*", "", text, flags=re.I)
    m = _LINE.match(text)
    if not m:
        return None
    kind = next(k for k, _ in _VERBS if m.group(k))
    rest = m.group("rest") or ""
    if kind not in _NO_ACTION_KINDS and "[" not in rest and roll is None:
        return None  # prose such as "Caio para il colpo": an action line always has a [bracket]
    if kind in _NO_ACTION_KINDS and roll is None and rest.strip() and not rest.lstrip().startswith(_STANDALONE):
        return None
    actor = m.group("who")
    targets: tuple[str, ...] = ()
    parties = _PARTIES.search(rest)
    if parties:
        actor = parties.group(1).strip() or actor
        targets = tuple(t.strip() for t in re.split(r",|\s+e\s+", parties.group(2)) if t.strip())
    else:
        solo = _SOLO.search(_BRACKET.sub("", rest))
        if solo and solo.group(1).strip().lower() not in ("o",):
            actor = actor or solo.group(1).strip()
    names: list[str] = []
    stats: dict[str, int] = {}
    numbers: dict[str, int] = {}
    tags: list[str] = []
    for b in _BRACKET.findall(rest):
        _bracket(b, names, stats, numbers)
    for c in _CURLY.findall(rest):
        sm = _SPECIAL.match(c) or _LEVEL_WORDS.match(c)
        if sm:
            numbers["livello"] = _level(sm.group(1))
        elif fold(c) == "base":
            numbers["livello"] = 0
        elif c.strip():
            tags.append(fold(c))
    first = re.search(r"[\[\({]", rest)
    word = (rest[: first.start()] if first else rest).strip(" :-–")
    return Action(kind=kind, raw=line.strip(), actor=actor.strip() if actor else None, targets=targets,
                  names=tuple(names), stats=stats, numbers=numbers, tags=tuple(tags), word=word, roll=roll)


def _level(word: str) -> int:
    return {"primo": 1, "secondo": 2}.get(word.lower(), None) or int(word)


def _bracket(b: str, names: list[str], stats: dict[str, int], numbers: dict[str, int]) -> None:
    inner = b.strip()
    if not inner:
        return
    sm = _SPECIAL.match(inner) or _LEVEL_WORDS.match(inner)
    if sm:
        numbers["livello"] = _level(sm.group(1))
        return
    if fold(inner) == "base":
        numbers["livello"] = 0
        return
    m = _STAT_VALUE.match(inner)
    if m:
        key = fold(m.group(1))
        value = int(m.group(2))
        tail = m.group(3)
        if key in _NUMBERED:
            numbers[_NUMBERED[key]] = value
            return
        if key in STAT_CANON:
            stats[STAT_CANON[key]] = value
            dn = _DN.search(tail)
            if dn:
                numbers["difesa_naturale"] = int(dn.group(1))
            pc = _PERCENT.search(tail)
            if pc and STAT_CANON[key] == "Reattività":
                numbers["soglia"] = int(pc.group(1))
            return
    names.append(inner)


def _squash(text: str) -> str:
    """Letters and digits only, folded: a label compared with its rendering (entities, spacing may differ)."""
    return re.sub(r"[^a-z0-9]", "", fold(text))


def post_actions(post: Post) -> list[Action]:
    """Every action of a post: its text lines first (skipping the rendered roll labels), then its dice labels."""
    labels = [r.label.strip() for r in post.rolls if r.label and len(r.label.strip()) >= 5]
    folded = [_squash(lb) for lb in labels]
    out: list[Action] = []
    for line in (post.body or "").splitlines():
        s = line.strip()
        # the page shows each roll's label in the text too: that line is the roll's, not a second action
        if not s or any(lb in s for lb in labels) or any(fl and fl in _squash(s) for fl in folded):
            continue
        a = parse_line(s)
        if a is not None:
            out.append(a)
    for i, r in enumerate(post.rolls):
        a = parse_line(r.label or "", roll=i)
        if a is None:
            a = Action(kind="altro", raw=r.label or "", roll=i)
        out.append(a)
    return out


# --- master posts ------------------------------------------------------------------------------------

_MASTER_STATUS = re.compile(
    r"(?im)^\s*(sconfitt[oa]|svenut[oa]|affaticat[oa]|non\s+pi[uù]\s+affaticat[oa]|liberat[oa]|"
    r"ingresso\s+con\s+attacco|attacco\s+in\s+ingresso)\s*[:\-]\s*(.+?)\s*$")
_MASTER_ROUND = re.compile(r"(?im)^\s*round\s+(\d+)\b")
_MASTER_TURNS = re.compile(r"(?im)^\s*turni\s+di\s+blocco\s*[:\-]\s*(.+?)\s+(\d+)\s*$")


def master_lines(body: str) -> list[tuple[str, str]]:
    """(status word folded, fighter name) for each `Sconfitto: Caio`-style line of a master's post."""
    out = []
    for m in _MASTER_STATUS.finditer(body or ""):
        word = fold(m.group(1))
        for name in re.split(r",|\s+e\s+", m.group(2)):
            if name.strip():
                out.append((word, name.strip(" .")))
    return out


def master_round(body: str) -> int | None:
    m = _MASTER_ROUND.search(body or "")
    return int(m.group(1)) if m else None


def master_turns(body: str) -> list[tuple[str, int]]:
    return [(m.group(1).strip(), int(m.group(2))) for m in _MASTER_TURNS.finditer(body or "")]
