"""Per-forum configuration (TOML): platform, selector overrides, dice patterns and face images, ruleset, timezone, masters."""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from lxml import etree

from scraper.errors import ParseError

DEFAULT_TIMEZONE = "Europe/Rome"  # Italian forums show local time without an offset
# Whole words: the plural group names forums use ("Narratori", "Masters") are listed too, or their members
# would read as players (and their posts as turns).
DEFAULT_MASTER_GROUPS = ("Master", "Masters", "Game Master", "Admin", "Administrator", "Administrators",
                         "Amministratore", "Amministratori", "Narratore", "Narratori")
DEFAULT_GM_ACCOUNTS = ("Game Master",)  # Forumotion's dice account
PLATFORMS = ("auto", "forumfree", "forumotion", "phpbb", "generic")
SELECTOR_KEYS = ("post", "author", "body", "date", "dice", "group")
TEXT_ROLLS = ("typed", "forum")


class ForumConfigError(ParseError):
    """A forum config file or value that cannot be used."""

    code = "forum_config"
    default_message = "configurazione del forum non valida"


@dataclass(frozen=True)
class ForumConfig:
    """How to read one forum. Every field has a default; a forum config file overrides some.

    `selectors`: XPath expressions (keys in SELECTOR_KEYS) tried before the platform's own; `post` is
    evaluated on the document, the others relative to a post element.
    `dice_patterns`: regular expressions with named groups `expr`, `faces`, `total` (and optionally
    `label`) read inside a dice block before the built-in recognition.
    `text_rolls`: how a rendered-looking roll found in plain text (outside any dice block) counts:
    "typed" (default: not authentic, it could be typed by hand) or "forum" (trust it; for skins whose
    roller leaves no markup).
    `ruleset` applies to the whole forum; `sections` maps a section/forum id to a ruleset.
    `dice_faces`: Forumotion's dice are images the admin uploads; this maps a face image (its full address, or
    its file name) to the number it shows, for images whose alt, title and file name do not say it.
    """

    host: str | None = None
    platform: str = "auto"
    skin: str | None = None
    timezone: str = DEFAULT_TIMEZONE
    ruleset: str | None = None
    sections: Mapping[str, str] = field(default_factory=dict)
    masters: tuple[str, ...] = ()
    master_groups: tuple[str, ...] = DEFAULT_MASTER_GROUPS
    gm_accounts: tuple[str, ...] = DEFAULT_GM_ACCOUNTS
    selectors: Mapping[str, str] = field(default_factory=dict)
    dice_patterns: tuple[str, ...] = ()
    dice_classes: tuple[str, ...] = ()  # extra class-name fragments that mark a dice block
    text_rolls: str = "typed"
    page_size: int | None = None  # posts per page when the page does not say
    dice_faces: Mapping[str, int] = field(default_factory=dict)  # face image (address or file name) → its number

    def __post_init__(self) -> None:
        if self.platform not in PLATFORMS:
            raise ForumConfigError(f"piattaforma sconosciuta nella configurazione: {self.platform!r}")
        if self.text_rolls not in TEXT_ROLLS:
            raise ForumConfigError(f"text_rolls deve essere uno di {TEXT_ROLLS}: {self.text_rolls!r}")
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ForumConfigError(f"fuso orario sconosciuto: {self.timezone!r}") from exc
        for key, xp in self.selectors.items():
            if key not in SELECTOR_KEYS:
                raise ForumConfigError(f"selettore sconosciuto {key!r} (ammessi: {', '.join(SELECTOR_KEYS)})")
            try:
                etree.XPath(xp)
            except etree.XPathSyntaxError as exc:
                raise ForumConfigError(f"selettore XPath non valido per {key!r}: {xp!r}") from exc
        for pat in self.dice_patterns:
            try:
                rx = re.compile(pat)
            except re.error as exc:
                raise ForumConfigError(f"espressione regolare non valida: {pat!r}") from exc
            if not {"expr", "total"} <= set(rx.groupindex):
                raise ForumConfigError(f"il pattern dei dadi deve avere i gruppi 'expr' e 'total': {pat!r}")

    # Derived values, computed once per config (a frozen dataclass still has an instance __dict__).
    @cached_property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @cached_property
    def _master_names(self) -> frozenset[str]:
        return frozenset(m.casefold() for m in self.masters)

    @cached_property
    def _master_group_re(self) -> re.Pattern[str] | None:
        if not self.master_groups:
            return None
        alts = "|".join(re.escape(g.casefold()) for g in self.master_groups)
        return re.compile(rf"(?<!\w)(?:{alts})(?!\w)")

    @cached_property
    def _gm_names(self) -> frozenset[str]:
        return frozenset(a.casefold() for a in self.gm_accounts)

    def is_master(self, name: str | None, group: str | None = None) -> bool:
        """A master: listed by name, or in a member group whose text names a master group."""
        if name and name.casefold() in self._master_names:
            return True
        rx = self._master_group_re
        return bool(group and rx is not None and rx.search(group.casefold()))

    def is_gm_account(self, name: str | None) -> bool:
        return bool(name) and name.casefold() in self._gm_names

    def dice_face(self, src: str) -> int | None:
        """The number the face map gives an image (by its whole address, else its file name), else None."""
        if not self.dice_faces or not src:
            return None
        found = self.dice_faces.get(src)
        if found is None:
            found = self.dice_faces.get(src.split("?")[0].split("#")[0].rstrip("/").rsplit("/", 1)[-1])
        return found

    def ruleset_for(self, section: str | None = None) -> str | None:
        if section is not None and section in self.sections:
            return self.sections[section]
        return self.ruleset

    @cached_property
    def _compiled_patterns(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p) for p in self.dice_patterns)

    def compiled_dice_patterns(self) -> tuple[re.Pattern[str], ...]:
        return self._compiled_patterns


_LIST_KEYS = ("masters", "master_groups", "gm_accounts", "dice_patterns", "dice_classes")


def config_from_dict(data: Mapping[str, Any], *, host: str | None = None,
                     base: ForumConfig | None = None) -> ForumConfig:
    """A ForumConfig from one TOML table (unknown keys are an error, so typos do not pass silently)."""
    known = {f for f in ForumConfig.__dataclass_fields__}
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise ForumConfigError(f"chiave sconosciuta nella configurazione del forum: {key!r}")
        if key in _LIST_KEYS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ForumConfigError(f"{key!r} deve essere una lista di stringhe")
            value = tuple(value)
        elif key in ("selectors", "sections"):
            if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
                raise ForumConfigError(f"{key!r} deve essere una tabella di stringhe")
            value = {str(k): v for k, v in value.items()}
        elif key == "dice_faces":
            if not isinstance(value, dict) or not all(
                    isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value.values()):
                raise ForumConfigError("'dice_faces' deve essere una tabella immagine → numero intero positivo")
            value = {str(k).strip(): v for k, v in value.items()}
        elif key == "page_size":
            if not isinstance(value, int) or value <= 0:
                raise ForumConfigError("'page_size' deve essere un intero positivo")
        elif not isinstance(value, str):
            raise ForumConfigError(f"{key!r} deve essere una stringa")
        kwargs[key] = value
    if host is not None:
        kwargs.setdefault("host", host)
    return replace(base or ForumConfig(), **kwargs)


@dataclass(frozen=True)
class ForumConfigSet:
    """Configs for several forums, by host; `default` applies to hosts not listed."""

    default: ForumConfig = field(default_factory=ForumConfig)
    forums: Mapping[str, ForumConfig] = field(default_factory=dict)

    def for_host(self, host: str | None) -> ForumConfig:
        if host:
            h = host.lower().rstrip(".")
            if h in self.forums:
                return self.forums[h]
            if h.startswith("www.") and h[4:] in self.forums:
                return self.forums[h[4:]]
        return self.default


def load_config(source: str | Path | Mapping[str, Any]) -> ForumConfigSet:
    """Load a forum config file (path, TOML text or parsed mapping). Raises ForumConfigError.

    Layout: an optional `[default]` table and one `[forums."<host>"]` table per forum; see
    docs/forum-config.md.
    """
    if isinstance(source, Mapping):
        data: Mapping[str, Any] = source
    else:
        text: str
        if isinstance(source, Path) or ("\n" not in str(source) and str(source).endswith(".toml")):
            try:
                text = Path(source).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ForumConfigError(f"impossibile leggere la configurazione {source}: {exc}") from exc
        else:
            text = str(source)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ForumConfigError(f"configurazione TOML non valida: {exc}") from exc
    extra = set(data) - {"default", "forums"}
    if extra:
        raise ForumConfigError(f"sezioni sconosciute nella configurazione: {', '.join(sorted(extra))}")
    default = config_from_dict(data.get("default", {}))
    forums: dict[str, ForumConfig] = {}
    raw_forums = data.get("forums", {})
    if not isinstance(raw_forums, dict):
        raise ForumConfigError("'forums' deve essere una tabella di forum")
    for host, table in raw_forums.items():
        if not isinstance(table, dict):
            raise ForumConfigError(f"la configurazione di {host!r} deve essere una tabella")
        forums[host.lower()] = config_from_dict(table, host=host.lower(), base=default)
    return ForumConfigSet(default=default, forums=forums)


def resolve_config(config: ForumConfig | ForumConfigSet | Mapping[str, Any] | str | Path | None,
                   host: str | None) -> ForumConfig:
    """Whatever the caller passed as config → the ForumConfig for `host`."""
    if config is None:
        return ForumConfig(host=host)
    if isinstance(config, ForumConfig):
        return config
    if not isinstance(config, ForumConfigSet):
        config = load_config(config)
    return config.for_host(host)


__all__ = [
    "ForumConfig", "ForumConfigSet", "ForumConfigError", "load_config", "config_from_dict",
    "resolve_config", "DEFAULT_TIMEZONE", "DEFAULT_MASTER_GROUPS", "DEFAULT_GM_ACCOUNTS",
]
