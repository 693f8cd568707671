"""The combat history: plain data the scraper produces and the engine replays (format arbitro.history/1)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any, Literal, get_args, get_origin, get_type_hints
import types
import typing

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
    problems: tuple[str, ...] = ()  # "typed_by_hand", "faces_out_of_range", "face_count_mismatch", "total_mismatch"


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


@dataclass(frozen=True)
class Registry:
    characters: dict[str, Character] = field(default_factory=dict)
    techniques: dict[str, Technique] = field(default_factory=dict)
    sources: tuple[str, ...] = ()  # where entries came from: sheet URLs, file paths

    def merged(self, winner: Registry) -> Registry:
        """This registry overlaid by `winner` (a hand-written file wins over scraped sheets)."""
        return Registry(
            characters={**self.characters, **winner.characters},
            techniques={**self.techniques, **winner.techniques},
            sources=self.sources + winner.sources,
        )


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
            raise HistoryFormatError(f"not an {HISTORY_FORMAT} document")
        try:
            return _from_jsonable(cls, data)
        except (TypeError, ValueError, KeyError) as exc:
            raise HistoryFormatError(f"invalid {HISTORY_FORMAT} document: {exc}") from exc


def registry_from_dict(data: dict[str, Any]) -> Registry:
    try:
        return _from_jsonable(Registry, data)
    except (TypeError, ValueError, KeyError) as exc:
        raise HistoryFormatError(f"invalid registry: {exc}") from exc


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
        raise TypeError(f"null where {getattr(tp, '__name__', tp)} is required")
    if origin is Literal:
        if value not in get_args(tp):
            raise ValueError(f"{value!r} not one of {get_args(tp)}")
        return value
    if origin is tuple:
        item = get_args(tp)[0]
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"expected a list, got {type(value).__name__}")
        return tuple(_from_jsonable(item, v) for v in value)
    if origin is dict:
        _, vt = get_args(tp)
        if not isinstance(value, dict):
            raise TypeError(f"expected an object, got {type(value).__name__}")
        return {str(k): _from_jsonable(vt, v) for k, v in value.items()}
    if isinstance(tp, type) and is_dataclass(tp):
        if not isinstance(value, dict):
            raise TypeError(f"expected an object for {tp.__name__}")
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
        raise TypeError("expected int, got bool")
    if isinstance(tp, type) and not isinstance(value, tp):
        raise TypeError(f"expected {tp.__name__}, got {type(value).__name__}")
    return value


__all__ = [
    "HISTORY_FORMAT", "HistoryFormatError", "Modifier", "DiceLabel", "Roll", "Stat", "Resource",
    "RegistroEntry", "PostSchema", "DamageTerm", "DamageCalc", "Quote", "Post", "Thread",
    "Technique", "Character", "Registry", "CombatHistory", "registry_from_dict", "registry_to_dict",
    "asdict",
]
