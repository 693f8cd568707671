"""The combat history: plain data the scraper produces and the engine replays (format arbitro.history/1)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any, Callable, Literal, get_args, get_origin, get_type_hints
import types
import typing
import unicodedata

HISTORY_FORMAT = "arbitro.history/1"

RollSource = Literal["forum_roller", "forumotion_gm", "phpbb_dice", "typed_text"]
Role = Literal["player", "master", "gm_bot"]


class HistoryFormatError(ValueError):
    """A document is not a valid arbitro.history/1 document."""


@dataclass(frozen=True)
class Modifier:
    """One signed, labelled term of a dice tag: `+2 [Raggio Corto]`."""

    amount: int
    label: str


@dataclass(frozen=True)
class DiceLabel:
    """A dice label parsed per the `guida` tag form.

    `Azione [Tecnica, Tecnica] (Attore vs Bersaglio): (+2 [Raggio Corto] +6 [Destrezza])`.
    Fields the label does not give are None / empty; `error` names why the parse was partial.
    """

    raw: str
    action: str | None = None
    techniques: tuple[str, ...] = ()
    actor: str | None = None
    targets: tuple[str, ...] = ()
    modifiers: tuple[Modifier, ...] = ()
    error: str | None = None


# What each `Roll.problems` code says to a reader (verdicts show these, never the codes).
ROLL_PROBLEMS: dict[str, str] = {
    "typed_by_hand": "scritto a mano, non dal tiradadi del forum",
    "unknown_source": "di provenienza sconosciuta",
    "unparsable_expression": "espressione del dado non leggibile",
    "faces_out_of_range": "un dado mostra una faccia oltre i suoi lati",
    "face_count_mismatch": "il numero di dadi mostrati non è quello dell'espressione",
    "total_mismatch": "il totale non è la somma dei dadi e del modificatore",
    "total_out_of_range": "il totale non può venire da quell'espressione",
    "unreadable_faces": "facce dei dadi non leggibili (immagini senza numero: nessun valore indovinato)",
    "unreadable_total": "totale non leggibile",
    "fiddled": "segnato «invalid» dal tiradadi: il tiro è stato alterato",
}


def describe_problems(problems: tuple[str, ...]) -> str:
    """The Italian text of roll problem codes, joined (an unknown code as it is)."""
    return ", ".join(ROLL_PROBLEMS.get(c, c) for c in problems)


@dataclass(frozen=True)
class Roll:
    """One dice roll as the forum rendered it."""

    expression: str  # normalised, e.g. "1d12+6"
    count: int
    sides: int
    constant: int
    faces: tuple[int, ...] | None  # as rendered; None when the page does not show them
    total: int | None  # as rendered; None when the page does not show it
    label: str  # raw label, always kept
    tag: DiceLabel | None  # parsed label
    source: RollSource
    authentic: bool
    problems: tuple[str, ...] = ()  # codes of ROLL_PROBLEMS: "typed_by_hand", "total_mismatch", …


@dataclass(frozen=True)
class Stat:
    base: int
    bonus: int = 0

    @property
    def total(self) -> int:
        return self.base + self.bonus


@dataclass(frozen=True)
class Resource:
    """A pool written in the schema: `PV 44/52` → current 44, max 52."""

    current: int
    max: int | None = None


@dataclass(frozen=True)
class RegistroEntry:
    """A signed change in the Registro: `-8 PV [Artigli Affilati di Hollow]`."""

    amount: int
    resource: str  # canonical name: PV, PE, PF, PD, PS, PR, Cosmo, …
    label: str
    raw: str


@dataclass(frozen=True)
class PostSchema:
    """The post schema of "Schema Post": sheet link, pools, stats, Registro."""

    sheet_url: str | None = None
    resources: dict[str, Resource] = field(default_factory=dict)  # keys are canonical: PV, PE, …
    stats: dict[str, Stat] = field(default_factory=dict)
    registro: tuple[RegistroEntry, ...] | None = None  # None = no Registro section; () = empty one
    missing: tuple[str, ...] = ()  # of "sheet_url", "PV", "PE", "stats", "registro"
    character: str | None = None  # name written in the schema, if any


@dataclass(frozen=True)
class DamageTerm:
    """One term of a written damage calculation: `- Resistenza 6`, `x 2`, `/ 2`."""

    op: Literal["+", "-", "*", "/"]
    name: str  # "Potenza", "Resistenza", "Armatura", "" for a bare multiplier
    value: float


@dataclass(frozen=True)
class DamageCalc:
    """A "Calcolo dei Danni" written in a post."""

    raw: str
    technique: str | None
    actor: str | None
    target: str | None
    kind: str  # "normale", "puro", "semi-puro", "aggiuntivo", "ambientale", "cura", …
    terms: tuple[DamageTerm, ...]
    result: int | float | None  # the stated result (the number after the last "=")
    resource: str = "PV"
    # the written calculation's own arithmetic (brackets first, left to right, multipliers on what precedes them),
    # unrounded; None when its terms make none (or a history written before this field)
    value: int | float | None = None


@dataclass(frozen=True)
class Quote:
    """A quote block inside a post: its text never counts as the quoting post's own."""

    author: str | None
    text: str
    inner: tuple[str | None, ...] = ()  # authors of the quotes nested in this one (their text is part of `text`)


@dataclass(frozen=True)
class Post:
    id: str
    page: int
    url: str
    author: str
    author_id: str | None
    timestamp: str | None  # ISO 8601 with offset
    role: Role = "player"
    edited_by: str | None = None
    edited_at: str | None = None
    body: str = ""  # clean text of the post's own content (quotes removed)
    quotes: tuple[Quote, ...] = ()
    schema: PostSchema | None = None
    rolls: tuple[Roll, ...] = ()
    damage: tuple[DamageCalc, ...] = ()
    character: str | None = None  # the character this post plays (schema/sheet/registry), else None
    answers: str | None = None  # for a Game-Master dice post: id of the player post it answers
    digest: str | None = None  # content hash of the post's source markup (lets replays skip unchanged posts)


@dataclass(frozen=True)
class Thread:
    url: str
    platform: str  # "forumfree", "forumotion", "phpbb", "generic"
    host: str
    thread_id: str | None
    title: str | None
    pages: int
    fetched_at: str | None  # ISO 8601 UTC
    skin: str | None = None  # e.g. "ff-current", "ff-classic", "phpbb2", "phpbb3", "invision", "prosilver"
    pages_read: tuple[int, ...] = ()  # 1-based pages actually read; () = not recorded (older histories)
    problems: tuple[str, ...] = ()  # doubts of the pages' reading ("pagina 2: …"): a reader should check them


@dataclass(frozen=True)
class Technique:
    """A technique, weapon or armour from a sheet or a registry file."""

    name: str
    kind: str = "tecnica"  # "tecnica", "arma", "armatura", "potere", …
    type: str | None = None  # e.g. "offensiva", "difensiva", "potenziamento", damage type, power type
    category: str | None = None  # D/C/B/A/S
    potenziale: int | None = None
    raggio_ottimale: str | None = None
    cost: dict[str, int] = field(default_factory=dict)  # {"PE": 5}
    owner: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # ruleset-specific numbers


@dataclass(frozen=True)
class Character:
    name: str
    sheet_url: str | None = None
    player: str | None = None  # forum user who plays it
    stats: dict[str, Stat] = field(default_factory=dict)
    resources: dict[str, Resource] = field(default_factory=dict)  # max values: {"PV": Resource(52, 52)}
    techniques: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)  # ruleset-specific: CAE, CAC, BAB, …


def fold_name(text: str | None) -> str:
    """Lower-case, accents removed, spaces collapsed: how registry names compare (file vs sheet, lookups)."""
    nfkd = unicodedata.normalize("NFKD", text or "")
    return " ".join("".join(c for c in nfkd if not unicodedata.combining(c)).lower().split())


def qualified_key(name: str, owner: str | None) -> str:
    """The key of a technique whose name another owner's technique already holds: `Katana [Quincy]`."""
    return f"{name} [{owner}]" if owner else name


@dataclass(frozen=True)
class Registry:
    """Characters by name; techniques by name — a technique whose name (folded) another owner's technique already
    holds is stored under `qualified_key` (`"Katana [Quincy]"`), so two characters' "Katana" both stay.
    Look techniques up with `technique(name, owner)`."""

    characters: dict[str, Character] = field(default_factory=dict)
    techniques: dict[str, Technique] = field(default_factory=dict)
    sources: tuple[str, ...] = ()  # where entries came from: sheet URLs, file paths

    def technique(self, name: str | None, owner: str | None = None,
                  key: Callable[[str], str] | None = None) -> Technique | None:
        """The technique called `name` (exact key, else `key`-folded key or name; default: case, accents and
        spaces ignored), preferring `owner`'s; without one of `owner`: an ownerless one, else the plain-keyed one."""
        if not name:
            return None
        techs = self.techniques
        t = techs.get(name)
        if t is not None and (owner is None or t.owner == owner):
            return t  # the common case: no fold
        fk = key or fold_name
        cands = self._index(fk).get(fk(name))
        if not cands:
            return None
        if len(cands) == 1:
            return cands[0][1]
        who = fk(owner) if owner else None
        best, rank = None, 9
        for k, x in cands:
            r = (0 if who is not None and x.owner and fk(x.owner) == who else 1 if k == name
                 else 2 if x.owner is None else 3 if fk(k) == fk(x.name) else 4)
            if r < rank:
                best, rank = x, r
        return best

    def _index(self, fk: Callable[[str], str]) -> dict[str, list[tuple[str, Technique]]]:
        # folded name → entries, built once per registry and fold (kept out of the fields: not data)
        cache = self.__dict__.get("_tech_index")
        if cache is None or cache[0] is not self.techniques or cache[1] != len(self.techniques):
            cache = (self.techniques, len(self.techniques), {})
            object.__setattr__(self, "_tech_index", cache)
        index = cache[2].get(fk)
        if index is None:
            index = {}
            for k, x in self.techniques.items():
                for n in {fk(k), fk(x.name)}:
                    index.setdefault(n, []).append((k, x))
            cache[2][fk] = index
        return index

    def merged(self, winner: Registry) -> Registry:
        """This registry overlaid by `winner` (a hand-written file wins over scraped sheets), field by field: what
        the winner gives wins, what it leaves out stays. Characters match by name, techniques by name and owner
        (an ownerless one matches the same name's), names folded (case, accents, spaces)."""
        given = winner.__dict__.get("_given", {})  # the keys a registry file wrote, per entry
        chars = dict(self.characters)
        by_fold = {fold_name(k): k for k in chars}
        for wk, w in winner.characters.items():
            lk = by_fold.get(fold_name(wk)) or by_fold.get(fold_name(w.name))
            if lk is None:
                chars[wk] = w
                by_fold[fold_name(wk)] = wk
                continue
            keys = given.get(("c", wk))
            c = _merge_character(chars[lk], w, keys)
            if c.name != lk:  # the file's own `name` wins: re-keyed in place
                chars = {(c.name if k == lk else k): v for k, v in chars.items()}
                by_fold[fold_name(c.name)] = c.name
            chars[c.name] = c
        techs = dict(self.techniques)
        for wk, w in winner.techniques.items():
            lk = _technique_match(techs, w)
            if lk is None:
                k = w.name
                if any(fold_name(k) == fold_name(x.name) or fold_name(k) == fold_name(o) for o, x in techs.items()):
                    k = qualified_key(w.name, w.owner)
                n = 1
                while k in techs:  # same name, another ownerless entry: still kept
                    n += 1
                    k = f"{qualified_key(w.name, w.owner)} ({n})"
                techs[k] = w
            else:
                techs[lk] = _merge_technique(techs[lk], w, given.get(("t", wk)))
        return Registry(characters=chars, techniques=techs, sources=self.sources + winner.sources)


def _overlay(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """`base` with `top`'s entries winning; a key folded-equal to one of `base` keeps `base`'s spelling and place
    (a file's `forza` is the sheet's `Forza`)."""
    out = dict(base)
    spelt = {fold_name(k): k for k in base}
    for k, v in top.items():
        out[spelt.get(fold_name(k), k)] = v
    return out


def _merge_character(low: Character, top: Character, keys: frozenset[str] | None) -> Character:
    # without `keys` (a registry not read from a file) an empty or None field is one the winner does not give
    listed = {fold_name(t) for t in top.techniques}
    return Character(
        name=top.name if keys is not None and "name" in keys else low.name,
        sheet_url=top.sheet_url if top.sheet_url is not None else low.sheet_url,
        player=top.player if top.player is not None else low.player,
        stats=_overlay(low.stats, top.stats),
        resources=_overlay(low.resources, top.resources),
        techniques=top.techniques + tuple(t for t in low.techniques if fold_name(t) not in listed),
        extra=_overlay(low.extra, top.extra),
    )


def _merge_technique(low: Technique, top: Technique, keys: frozenset[str] | None) -> Technique:
    def gave(key: str, value: Any, default: Any) -> bool:
        return key in keys if keys is not None else value != default
    return Technique(
        name=top.name if keys is not None and "name" in keys else low.name,
        kind=top.kind if gave("kind", top.kind, "tecnica") else low.kind,
        type=top.type if top.type is not None else low.type,
        category=top.category if top.category is not None else low.category,
        potenziale=top.potenziale if top.potenziale is not None else low.potenziale,
        raggio_ottimale=top.raggio_ottimale if top.raggio_ottimale is not None else low.raggio_ottimale,
        cost=dict(top.cost) if gave("cost", top.cost, {}) else low.cost,
        owner=low.owner if low.owner is not None else top.owner,  # matched: the same owner, as the sheet spells it
        extra=_overlay(low.extra, top.extra),
    )


def _technique_match(techs: dict[str, Technique], w: Technique) -> str | None:
    """The key of the entry `w` overlays: same folded name and owner; an ownerless side matches any owner (the
    ownerless entry first, then the plain-keyed one)."""
    name = fold_name(w.name)
    who = fold_name(w.owner) if w.owner else None
    best, rank = None, 9
    for k, x in techs.items():
        if fold_name(x.name) != name and fold_name(k) != name:
            continue
        xo = fold_name(x.owner) if x.owner else None
        if who is not None and xo is not None:
            r = 0 if xo == who else 9
        else:
            r = 1 if xo is None else 2 if fold_name(k) == name else 3
        if r < rank:
            best, rank = k, r
    return best


@dataclass(frozen=True)
class CombatHistory:
    thread: Thread
    posts: tuple[Post, ...]
    registry: Registry = field(default_factory=Registry)
    format: str = HISTORY_FORMAT

    def to_dict(self) -> dict[str, Any]:
        return _to_jsonable(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CombatHistory:
        if not isinstance(data, dict) or data.get("format") != HISTORY_FORMAT:
            raise HistoryFormatError(f"non è un documento {HISTORY_FORMAT}")
        try:
            return _from_jsonable(cls, data)
        except (TypeError, ValueError, KeyError) as exc:
            raise HistoryFormatError(f"documento {HISTORY_FORMAT} non valido: {exc}") from exc


def registry_from_dict(data: dict[str, Any]) -> Registry:
    try:
        return _from_jsonable(Registry, data)
    except (TypeError, ValueError, KeyError) as exc:
        raise HistoryFormatError(f"registro non valido: {exc}") from exc


def registry_to_dict(registry: Registry) -> dict[str, Any]:
    return _to_jsonable(registry)


# --- generic (de)serialisation of the frozen dataclasses above -------------------------------

def _to_jsonable(obj: Any) -> Any:
    if is_dataclass(obj):
        return {f.name: _to_jsonable(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, dict):
        return {str(k): _to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_to_jsonable(v) for v in obj]
    return obj


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = get_type_hints(cls)
    return _HINTS[cls]


# JSON's words for the Python types a history holds (messages name what the document has, not Python's names)
_TYPE_WORDS = {str: "un testo", int: "un numero intero", float: "un numero", bool: "un booleano",
               list: "un elenco", tuple: "un elenco", dict: "un oggetto", type(None): "null"}


def _type_word(tp: Any) -> str:
    return _TYPE_WORDS.get(tp, getattr(tp, "__name__", str(tp)))


def _from_jsonable(tp: Any, value: Any) -> Any:
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        args = [a for a in get_args(tp) if a is not type(None)]
        return _from_jsonable(args[0], value) if len(args) == 1 else value
    if value is None:
        if tp is Any:
            return None
        raise TypeError(f"null dove serve {_type_word(tp)}")
    if origin is Literal:
        if value not in get_args(tp):
            raise ValueError(f"{value!r} non è tra {', '.join(map(repr, get_args(tp)))}")
        return value
    if origin is tuple:
        item = get_args(tp)[0]
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"atteso un elenco, trovato {_type_word(type(value))}")
        return tuple(_from_jsonable(item, v) for v in value)
    if origin is dict:
        _, vt = get_args(tp)
        if not isinstance(value, dict):
            raise TypeError(f"atteso un oggetto, trovato {_type_word(type(value))}")
        return {str(k): _from_jsonable(vt, v) for k, v in value.items()}
    if isinstance(tp, type) and is_dataclass(tp):
        if not isinstance(value, dict):
            raise TypeError(f"atteso un oggetto per {tp.__name__}")
        hints = _hints(tp)
        kwargs = {}
        for f in fields(tp):
            if f.name in value:
                try:
                    kwargs[f.name] = _from_jsonable(hints[f.name], value[f.name])
                except (TypeError, ValueError) as exc:
                    raise type(exc)(f"{tp.__name__}.{f.name}: {exc}") from None
        return tp(**kwargs)
    if tp is Any:
        return value
    if tp is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if tp is int and isinstance(value, bool):
        raise TypeError("atteso un numero intero, trovato un booleano")
    if isinstance(tp, type) and not isinstance(value, tp):
        raise TypeError(f"atteso {_type_word(tp)}, trovato {_type_word(type(value))}")
    return value


__all__ = [
    "HISTORY_FORMAT", "HistoryFormatError", "Modifier", "DiceLabel", "Roll", "Stat", "Resource",
    "ROLL_PROBLEMS", "describe_problems", "RegistroEntry", "PostSchema", "DamageTerm", "DamageCalc", "Quote", "Post", "Thread",
    "Technique", "Character", "Registry", "CombatHistory", "fold_name", "qualified_key", "registry_from_dict", "registry_to_dict",
    "asdict",
]
