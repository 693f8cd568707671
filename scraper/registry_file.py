"""The registry file a master writes by hand (TOML): characters and techniques; see docs/registry.md."""
from __future__ import annotations

import os
from dataclasses import replace
import re
import tomllib
from typing import Any

from engine.history import Character, Registry, Resource, Stat, Technique

from scraper.errors import RegistryFileError
from scraper.schema import RESOURCE_ALIASES

MAX_FILE_BYTES = 2_000_000
CATEGORIES = ("D", "C", "B", "A", "S")

_CHAR_KEYS = {"player", "sheet", "stats", "pv_max", "pe_max", "pools", "techniques", "extra", "name"}
_TECH_KEYS = {"kind", "type", "category", "potenziale", "raggio_ottimale", "cost", "owner", "extra", "name"}
_TOP_KEYS = {"characters", "techniques", "meta"}
# `<pool>_max` keys besides pv_max / pe_max: pf_max, pd_max, ps_max, pr_max, cosmo_max.
_POOL_MAX = re.compile(r"^(?P<pool>[a-z]+)_max$")
_DECODE_POS = re.compile(r"\(at line (\d+), column (\d+)\)")
_COST_TEXT = re.compile(r"(\d{1,6})\s*([A-Za-zÀ-ÿ]+(?:\s+[A-Za-zÀ-ÿ]+)?)")


class _Ctx:
    """Source text and name, to point errors at the line that holds the bad value."""

    def __init__(self, text: str, path: str | None) -> None:
        self.lines = text.splitlines()
        self.path = path

    def line_of(self, table: str, key: str | None = None) -> int | None:
        # Headers may quote names: [characters.Hollow] or [techniques."Artigli Affilati"].
        section, _, name = table.partition(".")
        header = re.compile(
            r"^\s*\[\s*" + re.escape(section) + r"\s*\.\s*(?:\"" + re.escape(name) + r"\"|'" + re.escape(name)
            + r"'|" + re.escape(name) + r")\s*\]")
        start = None
        for i, line in enumerate(self.lines):
            if header.match(line):
                start = i
                break
        if start is None:
            return None
        if key is None:
            return start + 1
        key_re = re.compile(r"^\s*(?:\"" + re.escape(key) + r"\"|" + re.escape(key) + r")\s*=")
        for j in range(start + 1, len(self.lines)):
            if self.lines[j].lstrip().startswith("["):
                break
            if key_re.match(self.lines[j]):
                return j + 1
        return start + 1

    def error(self, message: str, table: str | None = None, key: str | None = None) -> RegistryFileError:
        line = self.line_of(table, key) if table else None
        return RegistryFileError(message, line=line, path=self.path)


def _int(value: Any, ctx: _Ctx, table: str, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ctx.error(f"{key} deve essere un numero intero, trovato {value!r}", table, key)
    return value


def _str(value: Any, ctx: _Ctx, table: str, key: str) -> str:
    if not isinstance(value, str):
        raise ctx.error(f"{key} deve essere un testo, trovato {value!r}", table, key)
    return value


def _canon_pool(name: str) -> str:
    return RESOURCE_ALIASES.get(name.strip().lower(), name.strip())


def _stat(value: Any, ctx: _Ctx, table: str, name: str) -> Stat:
    # [base, bonus], {base=, bonus=} or a bare base
    if isinstance(value, bool):
        raise ctx.error(f"statistica {name}: valore non valido {value!r}", table, "stats")
    if isinstance(value, int):
        return Stat(base=value)
    if isinstance(value, list) and len(value) in (1, 2) and all(isinstance(v, int) and not isinstance(v, bool)
                                                              for v in value):
        return Stat(base=value[0], bonus=value[1] if len(value) == 2 else 0)
    if isinstance(value, dict) and set(value) <= {"base", "bonus"} and "base" in value:
        base, bonus = value["base"], value.get("bonus", 0)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in (base, bonus)):
            return Stat(base=base, bonus=bonus)
    raise ctx.error(f"statistica {name}: atteso [base, bonus] o {{base = N, bonus = M}}, trovato {value!r}",
                    table, "stats")


def _cost(value: Any, ctx: _Ctx, table: str) -> dict[str, int]:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            out[_canon_pool(k)] = _int(v, ctx, table, "cost")
        return out
    if isinstance(value, str):
        if value.strip().lower() in ("", "0", "nessuno", "nessuna", "-"):
            return {}
        found = _COST_TEXT.findall(value)
        if not found:
            raise ctx.error(f"costo non leggibile: {value!r} (scrivi ad esempio cost = {{PE = 5}})", table, "cost")
        return {_canon_pool(unit): int(n) for n, unit in found}
    raise ctx.error(f"costo non valido: {value!r} (scrivi ad esempio cost = {{PE = 5}})", table, "cost")


def _character(name: str, data: Any, ctx: _Ctx) -> Character:
    table = f"characters.{name}"
    if not isinstance(data, dict):
        raise ctx.error(f"il personaggio {name} deve essere una tabella [characters.{name}]", "characters")
    unknown = [k for k in data if k not in _CHAR_KEYS and not _POOL_MAX.match(k)]
    if unknown:
        raise ctx.error(f"chiave sconosciuta per il personaggio {name}: {unknown[0]}", table, unknown[0])
    stats_raw = data.get("stats", {})
    if not isinstance(stats_raw, dict):
        raise ctx.error("stats deve essere una tabella {Forza = [5, 1], …}", table, "stats")
    stats = {str(k): _stat(v, ctx, table, str(k)) for k, v in stats_raw.items()}
    resources: dict[str, Resource] = {}
    for key, value in data.items():
        m = _POOL_MAX.match(key)
        if m:
            pool = _canon_pool(m.group("pool"))
            n = _int(value, ctx, table, key)
            resources[pool] = Resource(current=n, max=n)
    pools = data.get("pools", {})
    if not isinstance(pools, dict):
        raise ctx.error("pools deve essere una tabella {PF = 3, …}", table, "pools")
    for key, value in pools.items():
        n = _int(value, ctx, table, "pools")
        resources[_canon_pool(key)] = Resource(current=n, max=n)
    techniques = data.get("techniques", [])
    if not isinstance(techniques, list) or not all(isinstance(t, str) for t in techniques):
        raise ctx.error("techniques deve essere una lista di nomi", table, "techniques")
    extra = data.get("extra", {})
    if not isinstance(extra, dict):
        raise ctx.error("extra deve essere una tabella", table, "extra")
    return Character(
        name=_str(data["name"], ctx, table, "name") if "name" in data else name,
        sheet_url=_str(data["sheet"], ctx, table, "sheet") if "sheet" in data else None,
        player=_str(data["player"], ctx, table, "player") if "player" in data else None,
        stats=stats, resources=resources, techniques=tuple(techniques), extra=dict(extra),
    )


def _technique(name: str, data: Any, ctx: _Ctx) -> Technique:
    table = f"techniques.{name}"
    if not isinstance(data, dict):
        raise ctx.error(f"la tecnica {name} deve essere una tabella [techniques.\"{name}\"]", "techniques")
    unknown = [k for k in data if k not in _TECH_KEYS]
    if unknown:
        raise ctx.error(f"chiave sconosciuta per la tecnica {name}: {unknown[0]}", table, unknown[0])
    category = data.get("category")
    if category is not None:
        category = _str(category, ctx, table, "category").strip().upper()
        if category not in CATEGORIES:
            raise ctx.error(f"categoria {category!r} non valida (una di D, C, B, A, S)", table, "category")
    extra = data.get("extra", {})
    if not isinstance(extra, dict):
        raise ctx.error("extra deve essere una tabella", table, "extra")
    return Technique(
        name=_str(data["name"], ctx, table, "name") if "name" in data else name,
        kind=_str(data.get("kind", "tecnica"), ctx, table, "kind"),
        type=_str(data["type"], ctx, table, "type") if "type" in data else None,
        category=category,
        potenziale=_int(data["potenziale"], ctx, table, "potenziale") if "potenziale" in data else None,
        raggio_ottimale=_str(data["raggio_ottimale"], ctx, table, "raggio_ottimale")
        if "raggio_ottimale" in data else None,
        cost=_cost(data["cost"], ctx, table) if "cost" in data else {},
        owner=_str(data["owner"], ctx, table, "owner") if "owner" in data else None,
        extra=dict(extra),
    )


def _read_file(path: str | os.PathLike[str]) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise RegistryFileError(f"file del registro non leggibile: {exc.strerror or exc}", path=os.fspath(path)) from exc
    if len(data) > MAX_FILE_BYTES:
        raise RegistryFileError("file del registro troppo grande", path=os.fspath(path))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RegistryFileError("il file del registro non è in UTF-8", path=os.fspath(path)) from exc


def load_registry(path: str | os.PathLike[str]) -> Registry:
    """A `Registry` from a TOML file. Raises `RegistryFileError` (with line) when bad."""
    if not isinstance(path, (str, os.PathLike)):
        raise RegistryFileError(f"percorso del registro non valido: {type(path).__name__}")
    return parse_registry(_read_file(path), path=os.fspath(path))


def parse_registry(text: str, *, path: str | None = None) -> Registry:
    """A `Registry` from TOML text — never read as a file name, so text from a request is safe here."""
    if not isinstance(text, str):
        raise RegistryFileError(f"testo del registro non valido: {type(text).__name__}")
    if len(text) > MAX_FILE_BYTES:
        raise RegistryFileError("testo del registro troppo grande")
    ctx = _Ctx(text, path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        pos = _DECODE_POS.search(msg)
        line = int(pos.group(1)) if pos else (len(ctx.lines) if "end of document" in msg else None)
        column = int(pos.group(2)) if pos else None
        raise RegistryFileError(f"TOML non valido: {_DECODE_POS.sub('', msg).strip()}", line=line, column=column,
                                path=path) from exc
    unknown = [k for k in data if k not in _TOP_KEYS]
    if unknown:
        raise RegistryFileError(f"sezione sconosciuta: {unknown[0]} (attese: characters, techniques, meta)",
                                line=next((i + 1 for i, ln in enumerate(ctx.lines) if unknown[0] in ln), None),
                                path=path)
    chars_raw = data.get("characters", {})
    techs_raw = data.get("techniques", {})
    if not isinstance(chars_raw, dict) or not isinstance(techs_raw, dict):
        raise RegistryFileError("characters e techniques devono essere tabelle", path=path)
    techniques = {name: _technique(name, value, ctx) for name, value in techs_raw.items()}
    characters: dict[str, Character] = {}
    for name, value in chars_raw.items():
        ch = _character(name, value, ctx)
        # A character's technique list also holds every technique whose owner it is.
        owned = [t.name for t in techniques.values() if t.owner == ch.name and t.name not in ch.techniques]
        if owned:
            ch = replace(ch, techniques=ch.techniques + tuple(owned))
        characters[ch.name] = ch
    # Techniques listed by exactly one character and with no owner get that owner.
    for tname, tech in list(techniques.items()):
        if tech.owner is None:
            owners = [c.name for c in characters.values() if tname in c.techniques]
            if len(owners) == 1:
                techniques[tname] = replace(tech, owner=owners[0])
    return Registry(characters=characters, techniques=techniques, sources=(path or "<registry text>",))


__all__ = ["load_registry", "parse_registry", "CATEGORIES"]
