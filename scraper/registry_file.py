"""The registry file a master writes by hand (TOML): characters and techniques; see docs/registry.md."""
from __future__ import annotations

import os
from dataclasses import replace
import re
import tomllib
from typing import Any

from engine.history import Character, Registry, Resource, Stat, Technique, fold_name, qualified_key

from scraper.errors import RegistryFileError, os_error_reason
from scraper.schema import RESOURCE_ALIASES

MAX_FILE_BYTES = 2_000_000
CATEGORIES = ("D", "C", "B", "A", "S")

_CHAR_KEYS = {"player", "sheet", "stats", "pv_max", "pe_max", "pools", "techniques", "extra", "name"}
_TECH_KEYS = {"kind", "type", "category", "potenziale", "raggio_ottimale", "cost", "owner", "extra", "name"}
_TOP_KEYS = {"characters", "techniques", "meta"}
# `<pool>_max` keys besides pv_max / pe_max: pf_max, pd_max, ps_max, pr_max, cosmo_max.
_POOL_MAX = re.compile(r"^(?P<pool>[a-z]+)_max$", re.IGNORECASE)
_DECODE_POS = re.compile(r"\(at line (\d+), column (\d+)\)")
# One term of a cost text: "5 PE", "PE 5", "2 punti energia", with an upkeep tail ("a turno", "per turno", "/turno").
_COST_TERM = re.compile(r"^(?:(?P<n>\d{1,6})\s*(?P<pool>[^\W\d_]+(?:\s+[^\W\d_]+)?)|(?P<pool2>[^\W\d_]+(?:\s+[^\W\d_]+)?)"
                        r"\s*(?P<n2>\d{1,6}))(?P<upkeep>\s*(?:(?:a|al|per)\s+turno|/\s*turno))?$", re.IGNORECASE)
KNOWN_POOLS = tuple(dict.fromkeys(RESOURCE_ALIASES.values()))  # PV, PE, PF, PD, PS, PR, Cosmo


class _Ctx:
    """Source text and name, to point errors at the line that holds the bad value."""

    def __init__(self, text: str, path: str | None) -> None:
        self.lines = text.splitlines()
        self.path = path

    def line_of(self, table: str, key: str | None = None) -> int | None:
        # [characters.Hollow] / [characters."Hollow"] then `key =`; a dotted `characters.Hollow.key = …`; an
        # inline `Hollow = { … }` (under [characters]) or `characters.Hollow = { … }`.
        section, _, name = table.partition(".")
        nm = r"(?:\"" + re.escape(name) + r"\"|'" + re.escape(name) + r"'|" + re.escape(name) + r")"
        sec = r"\s*" + re.escape(section) + r"\s*\.\s*"
        header = re.compile(r"^\s*\[" + sec + nm + r"\s*\]")
        start = next((i for i, line in enumerate(self.lines) if header.match(line)), None)
        if key is not None:
            kp = r"(?:\"" + re.escape(key) + r"\"|" + re.escape(key) + r")\s*[=.]"
            if start is not None:
                key_re = re.compile(r"^\s*" + kp)
                for j in range(start + 1, len(self.lines)):
                    if self.lines[j].lstrip().startswith("["):
                        break
                    if key_re.match(self.lines[j]):
                        return j + 1
            dotted = re.compile(r"^" + sec + nm + r"\s*\.\s*" + kp)
            for i, line in enumerate(self.lines):
                if dotted.match(line):
                    return i + 1
        if start is not None:
            return start + 1
        inline = re.compile(r"^\s*(?:" + re.escape(section) + r"\s*\.\s*)?" + nm + r"\s*=\s*\{")
        dotted_any = re.compile(r"^" + sec + nm + r"\s*\.")
        return next((i + 1 for i, line in enumerate(self.lines) if inline.match(line) or dotted_any.match(line)),
                    None)

    def error(self, message: str, table: str | None = None, key: str | None = None) -> RegistryFileError:
        line = self.line_of(table, key) if table else None
        return RegistryFileError(message, line=line, path=self.path)


def _int(value: Any, ctx: _Ctx, table: str, key: str, what: str | None = None) -> int:
    """A whole number ≥ 0 (maxima, Potenziale, costs, stat levels are never negative)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ctx.error(f"{what or key} deve essere un numero intero, trovato {value!r}", table, key)
    if value < 0:
        raise ctx.error(f"{what or key} non può essere negativo, trovato {value}", table, key)
    return value


def _str(value: Any, ctx: _Ctx, table: str, key: str) -> str:
    if not isinstance(value, str):
        raise ctx.error(f"{key} deve essere un testo, trovato {value!r}", table, key)
    return value


def _known_pool(name: str, ctx: _Ctx, table: str, key: str) -> str:
    """The canonical pool of `name`; an unknown one is refused (a typo must not become a new pool)."""
    low = " ".join(name.split()).lower()
    pool = RESOURCE_ALIASES.get(low) or next((p for p in KNOWN_POOLS if p.lower() == low), None)
    if pool is None:
        raise ctx.error(f"risorsa sconosciuta {name!r} in {key} (risorse note: {', '.join(KNOWN_POOLS)}, "
                        "o i loro nomi estesi come \"punti energia\")", table, key)
    return pool


def _stat(value: Any, ctx: _Ctx, table: str, name: str) -> Stat:
    # [base, bonus], {base=, bonus=} or a bare base
    if isinstance(value, bool):
        raise ctx.error(f"statistica {name}: valore non valido {value!r}", table, "stats")
    stat: Stat | None = None
    if isinstance(value, int):
        stat = Stat(base=value)
    elif isinstance(value, list) and len(value) in (1, 2) and all(isinstance(v, int) and not isinstance(v, bool)
                                                                for v in value):
        stat = Stat(base=value[0], bonus=value[1] if len(value) == 2 else 0)
    elif isinstance(value, dict) and set(value) <= {"base", "bonus"} and "base" in value:
        base, bonus = value["base"], value.get("bonus", 0)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in (base, bonus)):
            stat = Stat(base=base, bonus=bonus)
    if stat is not None:
        if stat.base < 0:  # a level is never negative; a bonus may be (a malus)
            raise ctx.error(f"statistica {name}: il livello base non può essere negativo, trovato {stat.base}",
                            table, "stats")
        return stat
    raise ctx.error(f"statistica {name}: atteso [base, bonus] o {{base = N, bonus = M}}, trovato {value!r}",
                    table, "stats")


def _cost(value: Any, ctx: _Ctx, table: str) -> tuple[dict[str, int], dict[str, int]]:
    """(cost, upkeep per turn) by canonical pool; a pool written twice adds up."""
    cost: dict[str, int] = {}
    upkeep: dict[str, int] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            pool = _known_pool(str(k), ctx, table, "cost")
            cost[pool] = cost.get(pool, 0) + _int(v, ctx, table, "cost", f"cost {k}")
        return cost, upkeep
    if isinstance(value, str):
        if value.strip().lower() in ("", "0", "nessuno", "nessuna", "-"):
            return cost, upkeep
        for term in value.split("+"):
            m = _COST_TERM.match(term.strip())
            if m is None:
                raise ctx.error(f"costo non leggibile: {value!r} (scrivi ad esempio cost = \"5 PE\", \"2 PE + 1 PV\", "
                                "\"3 PE a turno\" o cost = {PE = 5})", table, "cost")
            pool = _known_pool(m.group("pool") or m.group("pool2"), ctx, table, "cost")
            into = upkeep if m.group("upkeep") else cost
            into[pool] = into.get(pool, 0) + int(m.group("n") or m.group("n2"))
        return cost, upkeep
    raise ctx.error(f"costo non valido: {value!r} (scrivi ad esempio cost = {{PE = 5}})", table, "cost")


def _character(name: str, data: Any, ctx: _Ctx) -> Character:
    table = f"characters.{name}"
    if not isinstance(data, dict):
        raise ctx.error(f"il personaggio {name} deve essere una tabella [characters.{name}]", "characters")
    unknown = [k for k in data if k not in _CHAR_KEYS and not _POOL_MAX.match(k)]
    if not unknown:
        for k in data:
            m = _POOL_MAX.match(k)
            if m and k not in _CHAR_KEYS:
                _known_pool(m.group("pool"), ctx, table, k)
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
            pool = _known_pool(m.group("pool"), ctx, table, key)
            n = _int(value, ctx, table, key)
            resources[pool] = Resource(current=n, max=n)
    pools = data.get("pools", {})
    if not isinstance(pools, dict):
        raise ctx.error("pools deve essere una tabella {PF = 3, …}", table, "pools")
    for key, value in pools.items():
        n = _int(value, ctx, table, "pools", f"pools {key}")
        resources[_known_pool(str(key), ctx, table, "pools")] = Resource(current=n, max=n)
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
    extra = dict(extra)
    cost, upkeep = _cost(data["cost"], ctx, table) if "cost" in data else ({}, {})
    if upkeep:
        if "mantenimento" in extra:
            raise ctx.error("mantenimento scritto due volte: nel costo (\"a turno\") e in extra", table, "cost")
        extra["mantenimento"] = upkeep  # the same key the sheet reader uses
    return Technique(
        name=_str(data["name"], ctx, table, "name") if "name" in data else name,
        kind=_str(data.get("kind", "tecnica"), ctx, table, "kind"),
        type=_str(data["type"], ctx, table, "type") if "type" in data else None,
        category=category,
        potenziale=_int(data["potenziale"], ctx, table, "potenziale") if "potenziale" in data else None,
        raggio_ottimale=_str(data["raggio_ottimale"], ctx, table, "raggio_ottimale")
        if "raggio_ottimale" in data else None,
        cost=cost,
        owner=_str(data["owner"], ctx, table, "owner") if "owner" in data else None,
        extra=extra,
    )


def _read_file(path: str | os.PathLike[str]) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise RegistryFileError("file del registro non leggibile: " + os_error_reason(exc), path=os.fspath(path)) from exc
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
    if text.startswith("\ufeff"):
        text = text[1:]  # a BOM (Windows editors): not part of the TOML
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
    # Entries by their displayed name (`name` when given, else the table key); the same name twice is refused.
    chars_by: dict[str, tuple[str, Character]] = {}
    for key, value in chars_raw.items():
        ch = _character(key, value, ctx)
        seen = chars_by.get(fold_name(ch.name))
        if seen is not None:
            raise _twice(ctx, "il personaggio", ch.name, f"characters.{seen[0]}", f"characters.{key}")
        chars_by[fold_name(ch.name)] = (key, ch)
    techs: list[tuple[str, Technique]] = [(key, _technique(key, value, ctx)) for key, value in techs_raw.items()]
    # a character lists techniques by name or by table key; owners name characters (case/accents as they like)
    tname_of = {fold_name(k): t.name for k, t in techs}
    tname_of.update({fold_name(t.name): t.name for _, t in techs})
    char_of = {f: ch.name for f, (_, ch) in chars_by.items()}
    characters: dict[str, Character] = {}
    for _, ch in chars_by.values():
        listed = tuple(dict.fromkeys(tname_of.get(fold_name(t), t) for t in ch.techniques))
        characters[ch.name] = replace(ch, techniques=listed)
    for i, (key, tech) in enumerate(techs):
        if tech.owner is not None and fold_name(tech.owner) in char_of:
            techs[i] = (key, replace(tech, owner=char_of[fold_name(tech.owner)]))
    for name, ch in list(characters.items()):
        # A character's technique list also holds every technique whose owner it is.
        have = {fold_name(t) for t in ch.techniques}
        owned = [t.name for _, t in techs if t.owner == name and fold_name(t.name) not in have]
        if owned:
            characters[name] = replace(ch, techniques=ch.techniques + tuple(dict.fromkeys(owned)))
    # Techniques listed by exactly one character and with no owner get that owner.
    for i, (key, tech) in enumerate(techs):
        if tech.owner is None:
            owners = [c.name for c in characters.values() if fold_name(tech.name) in map(fold_name, c.techniques)]
            if len(owners) == 1:
                techs[i] = (key, replace(tech, owner=owners[0]))
    # Two characters' "Katana" are two entries: the second under `Katana [Owner]` (docs/registry.md).
    techniques: dict[str, Technique] = {}
    placed: dict[tuple[str, str], str] = {}
    names: set[str] = set()
    given: dict[tuple[str, str], frozenset[str]] = {}
    for key, tech in techs:
        ident = (fold_name(tech.name), fold_name(tech.owner))
        if ident in placed:
            raise _twice(ctx, "la tecnica", tech.name + (f" di {tech.owner}" if tech.owner else ""),
                         f"techniques.{placed[ident]}", f"techniques.{key}")
        placed[ident] = key
        k = tech.name if ident[0] not in names else qualified_key(tech.name, tech.owner or "?")
        names.add(ident[0])
        techniques[k] = tech
        given[("t", k)] = frozenset(techs_raw[key])
    for key, ch in chars_by.values():
        given[("c", ch.name)] = frozenset(chars_raw[key])
    reg = Registry(characters=characters, techniques=techniques, sources=(path or "<registry text>",))
    # which keys each entry wrote: Registry.merged lets only those win over a sheet (not serialised)
    object.__setattr__(reg, "_given", given)
    return reg


def _twice(ctx: _Ctx, what: str, name: str, first: str, second: str) -> RegistryFileError:
    a, b = ctx.line_of(first), ctx.line_of(second)
    lines = f"righe {a} e {b}" if a is not None and b is not None else "due voci"
    return RegistryFileError(f"{what} {name} è scritt{'a' if what.startswith('la') else 'o'} due volte ({lines}): "
                             "i nomi si confrontano senza maiuscole, accenti e spazi doppi", line=b, path=ctx.path)


__all__ = ["load_registry", "parse_registry", "CATEGORIES", "KNOWN_POOLS"]
