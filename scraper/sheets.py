"""Character sheets as players post them (a forum post or page) read into a `Registry`; see docs/registry.md."""
from __future__ import annotations

import re
from typing import Any

from lxml import etree

from engine.history import Character, Registry, Resource, Technique

from scraper.dicetag import clean_markup
from scraper.platforms.base import html_parser, read_html
from scraper.schema import parse_schema, RESOURCE_ALIASES

MAX_SHEET_BYTES = 5_000_000

# Where the sheet text lives, known platforms first (the first post of the page is the sheet).
_CONTENT_XPATHS = (
    "//td[contains(concat(' ', normalize-space(@class), ' '), ' Item ')]"
    "//table[contains(concat(' ', normalize-space(@class), ' '), ' color ')]",  # ForumFree
    "//div[contains(concat(' ', normalize-space(@class), ' '), ' postbody ')]"
    "//div[contains(concat(' ', normalize-space(@class), ' '), ' content ')]",  # phpBB prosilver / Forumotion
    "//div[contains(concat(' ', normalize-space(@class), ' '), ' postbody ')]",
    "//div[contains(concat(' ', normalize-space(@class), ' '), ' post-entry ')]",
    "//*[contains(concat(' ', normalize-space(@class), ' '), ' scheda ')]",
    "//article",
)
_BLOCK = {"p", "div", "br", "li", "tr", "table", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote",
          "dt", "dd", "dl", "section", "article", "hr", "header", "footer", "pre", "tbody", "thead", "center"}
_CELL = {"td", "th"}
_SKIP = {"script", "style", "noscript", "template", "head", "title"}
_HEADING = {"h1", "h2", "h3", "h4", "b", "strong"}

_SECTION = re.compile(
    r"^\W{0,3}(?P<word>armi|arma|armature|armatura|tecniche|tecnica|poteri|potere|abilità|abilita|"
    r"equipaggiamento|incantesimi|magie)(?:\s+[A-Za-zÀ-ÿ]+){0,2}\s*:?\W{0,3}$",
    re.IGNORECASE)
_END_SECTION = re.compile(
    r"^\W{0,3}(?:note|storia|background|descrizione fisica|aspetto|carattere|biografia|inventario|"
    r"statistiche|parametri)\s*:?\W{0,3}$", re.IGNORECASE)
_SECTION_KIND = {"armi": "arma", "arma": "arma", "armature": "armatura", "armatura": "armatura",
                 "tecniche": "tecnica", "tecnica": "tecnica", "poteri": "potere", "potere": "potere",
                 "abilità": "abilità", "abilita": "abilità", "equipaggiamento": "arma",
                 "incantesimi": "incantesimo", "magie": "incantesimo"}
_KINDS = ("armatura", "arma", "tecnica", "potere", "abilità", "incantesimo", "oggetto")
_KEY = re.compile(
    r"^\W{0,3}(?P<key>tipo di danno|tipologia di danno|tipologia|tipo|categoria|classe|potenziale|"
    r"raggio ottimale|raggio|gittata|costo|consumo|mantenimento|danno|effett[oi]|descrizione|bonus|nome)\s*:\s*(?P<val>.*)$",
    re.IGNORECASE)
_KEY_NOCOLON = re.compile(r"^\W{0,3}(?P<key>potenziale|costo|mantenimento|raggio ottimale)\s+(?P<val>\S.*)$", re.IGNORECASE)
_INLINE_SPLIT = re.compile(
    r"\s+[|·]\s+|\s*;\s*|(?:\s+[—–-]\s+|\s*,\s*)(?=(?:tipo|tipologia|categoria|classe|potenziale|raggio|gittata|costo|consumo|mantenimento|"
    r"danno|effett[oi]|descrizione|bonus)\b)", re.IGNORECASE)
# a category is a lone letter (not inside a word: "B12", "C - 8", "(categoria B)"); the value the first number
_POT_CAT = re.compile(r"(?<![A-ZÀ-Ý])[DCBAS](?![A-ZÀ-Ý])")
_POT_VAL = re.compile(r"\d{1,4}")
_COST = re.compile(r"(?P<n>\d{1,6})\s*(?P<unit>[A-Za-zÀ-ÿ]+(?:\s+[A-Za-zÀ-ÿ]+)?)?")
_CHAR_FIELD = re.compile(r"^\W{0,3}(?P<key>nome\s+del\s+giocatore|nome\s+utente|giocatore|player|utente|"
                         r"nome\s+e\s+cognome|nome\s+completo|nome(?:\s+(?:del\s+)?personaggio)?|personaggio)"
                         r"\s*:\s*(?P<val>.+?)\s*$", re.IGNORECASE)
_PLAYER_KEYS = ("giocatore", "player", "utente", "nome del giocatore", "nome utente")
# headings that name the page, not the character: "Scheda Personaggio", "Scheda PG", "Scheda"
_GENERIC_NAME = re.compile(r"^(?:(?:del\s+)?personaggio|pg|png|scheda|nome|dati|statistiche|giocatore)?$", re.IGNORECASE)
_SCHEDA_PREFIX = re.compile(r"^scheda(?:\s+(?:di|del|pg|personaggio)\b)?\s*", re.IGNORECASE)
_EXTRA = re.compile(r"(?<![A-Za-z])(?P<key>CAE|CAC|EAC|KAC|BAB|Iniziativa|Velocità)\s*:?\s*(?P<val>[+-]?\d{1,4})")
_POOL_MAX = re.compile(
    r"^\W{0,3}(?P<name>punti vita|punti energia|punti fatica|punti ferita|punti stamina|punti risolutezza|"
    r"punti salute|punti cosmo|pv|pe|pf|ps|pr|pd|cosmo)(?:\s+(?:massimi|max|totali))?\s*:?\s*(?P<a>\d{1,6})"
    r"(?:\s*(?:/|su)\s*(?P<b>\d{1,6}))?\s*$", re.IGNORECASE)


def _lines(root: Any) -> list[tuple[list[str], bool]]:
    """Block-aware text of `root`: one entry per line, (cells, is a list item); table rows keep their cells apart,
    an empty cell included (a row keeps its columns). Walked with a stack, not recursion: a sheet may nest as
    deep as the HTML reader allows (2048)."""
    lines: list[tuple[list[str], bool]] = []
    current: list[str] = []  # cells of the current line
    buf: list[str] = []

    def flush_cell(keep_empty: bool = False) -> None:
        text = " ".join("".join(buf).split())
        buf.clear()
        if text or keep_empty:
            current.append(text)

    def flush_line(item: bool = False) -> None:
        flush_cell()
        if current:
            lines.append((list(current), item))
            current.clear()

    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        el, closing = stack.pop()
        if closing:
            tag = el.tag.lower()
            if tag in _BLOCK:
                flush_line(tag == "li")
            elif tag in _CELL:
                flush_cell(True)
            if el.tail:
                buf.append(el.tail)
            continue
        tag = el.tag if isinstance(el.tag, str) else None
        if tag is None or tag.lower() in _SKIP:  # comments, scripts, styles hold no sheet text
            if el.tail and el is not root:
                buf.append(el.tail)
            continue
        tag = tag.lower()
        if tag in _BLOCK:
            flush_line()
        elif tag in _CELL:
            flush_cell()
        if el.text:
            buf.append(el.text)
        stack.append((el, True))
        stack.extend((child, False) for child in reversed(el))
    flush_line()
    return lines


def _content_root(doc: Any) -> Any:
    for xp in _CONTENT_XPATHS:
        found = doc.xpath(xp)
        if found:
            return found[0]
    body = doc.find(".//body")
    return body if body is not None else doc


def _potenziale(value: str) -> tuple[str | None, int | None]:
    """`B (12)`, `B 12`, `B12`, `C - 8`, `12 (B)`, `10 (categoria B)`, `Categoria B, valore 12`, `S`, `7`."""
    up = value.upper()
    cat = _POT_CAT.search(up)
    val = _POT_VAL.search(up)
    return (cat.group() if cat else None), (int(val.group()) if val else None)


# an amount paid each turn, not once: "5 PE a turno", "4 PE/turno", "2 PE per mantenerla", "mantenimento 2 PE"
_UPKEEP_AFTER = re.compile(r"^\W*(?:(?:a|al|per|ogni)\s+)?turn[oi]\b|^\W*(?:per|di)\s+manten", re.IGNORECASE)


_POOL_FIRST = re.compile(r"^\W*(?P<unit>[A-Za-zÀ-ÿ]+(?:\s+[A-Za-zÀ-ÿ]+)?)\s*:?\s*(?P<n>\d{1,6})\b(?P<rest>.*)$", re.DOTALL)


def _cost(value: str) -> tuple[dict[str, int], dict[str, int], str | None]:
    """`5 PE`, `5 PE + 1 PF`, `0`, `nessuno` → (upfront cost, upkeep per turn, raw); a number with no pool is kept
    raw (not guessed). Upkeep: an amount followed by "a turno"/"/turno"/"per mantenerla", or after "mantenimento"."""
    cost: dict[str, int] = {}
    upkeep: dict[str, int] = {}
    raw_unitless = None
    first = _POOL_FIRST.match(value)
    if first and first.group("unit").lower() in RESOURCE_ALIASES:  # "PE 5" is "5 PE"
        value = f"{first.group('n')} {first.group('unit')}{first.group('rest')}"
    matches = list(_COST.finditer(value))
    for i, m in enumerate(matches):
        unit = (m.group("unit") or "").strip().lower()
        canon = RESOURCE_ALIASES.get(unit)
        end = m.end("unit") if canon else -1
        if not canon and unit:
            canon = RESOURCE_ALIASES.get(unit.split(" ")[0])
            end = m.start("unit") + len(unit.split(" ")[0])  # "PE a turno": the unit ate "a"
        if canon:
            after = value[end:matches[i + 1].start() if i + 1 < len(matches) else len(value)].lower()
            per_turn = ("turn" in after or "manten" in after) and _UPKEEP_AFTER.match(after) or \
                "manten" in value[matches[i - 1].end() if i else 0:m.start()].lower()
            table = upkeep if per_turn else cost
            table[canon] = table.get(canon, 0) + int(m.group("n"))
        elif int(m.group("n")) != 0:
            raw_unitless = value.strip()
    return cost, upkeep, raw_unitless


def _kind_and_type(value: str, default_kind: str) -> tuple[str, str | None]:
    """`Arma - Offensiva Fisica` → ("arma", "Offensiva Fisica"); `Tecnica Difensiva` → ("tecnica", "Difensiva")."""
    text = value.strip()
    low = text.lower()
    for kind in _KINDS:
        if low.startswith(kind) and not low[len(kind):len(kind) + 1].isalpha():
            rest = text[len(kind):].lstrip(" -–—:,/")
            # "Tecnica di Potenziamento" → type "Potenziamento"
            rest = re.sub(r"^(?:di|da)\s+", "", rest, flags=re.IGNORECASE)
            return kind, rest or None
    return default_kind, text or None


class _TechBuilder:
    def __init__(self, name: str, kind: str) -> None:
        self.name = name
        self.kind = kind
        self.type: str | None = None
        self.category: str | None = None
        self.potenziale: int | None = None
        self.raggio: str | None = None
        self.cost: dict[str, int] = {}
        self.extra: dict[str, Any] = {}

    def set(self, key: str, value: str) -> None:
        key = key.lower()
        value = value.strip()
        if not value.strip(" .-—–/?"):  # "Raggio Ottimale: —": nothing written
            return
        if key in ("tipo", "tipologia"):
            self.kind, self.type = _kind_and_type(value, self.kind)
        elif key in ("categoria", "classe"):
            cat, _ = _potenziale(value)
            self.category = cat or self.category
        elif key == "potenziale":
            cat, val = _potenziale(value)
            self.category = cat or self.category
            self.potenziale = val if val is not None else self.potenziale
        elif key in ("raggio ottimale", "raggio", "gittata"):
            self.raggio = value.strip(" .")
        elif key in ("costo", "consumo"):
            self.cost, upkeep, raw = _cost(value)
            if upkeep:
                self.extra["mantenimento"] = upkeep
            if raw:
                self.extra["costo"] = raw
        elif key == "mantenimento":
            cost, upkeep, raw = _cost(value)
            for pool, n in cost.items():  # every amount under this key is per turn
                upkeep[pool] = upkeep.get(pool, 0) + n
            if upkeep:
                self.extra["mantenimento"] = upkeep
            elif raw:
                self.extra["mantenimento"] = raw
        elif key in ("tipo di danno", "tipologia di danno", "danno"):
            self.extra["danno"] = value
        elif key in ("effetto", "effetti", "descrizione"):
            self.extra.setdefault("effetto", value)
        elif key == "bonus":
            self.extra["bonus"] = value

    def build(self, owner: str | None) -> Technique:
        return Technique(name=self.name, kind=self.kind, type=self.type, category=self.category,
                         potenziale=self.potenziale, raggio_ottimale=self.raggio, cost=dict(self.cost),
                         owner=owner, extra=dict(self.extra))


_NAME_PREFIX = re.compile(r"^\W{0,3}(?P<kind>tecnica|arma|armatura|potere|abilità|abilita|incantesimo|oggetto)"
                          r"\s*:\s*(?P<rest>\S.*)$", re.IGNORECASE)
_LEAD_TYPE = re.compile(r"^[\[(](?P<t>[^\[\]()]+)[\])]\s*(?P<n>[^\[\]()].*)$")
_TRAIL_TYPE = re.compile(r"^(?P<n>[^\[\]()]+?)\s*[\[(](?P<t>[^\[\]()]*)[\])]\s*:?$")
_DASH_TYPE = re.compile(r"^(?P<n>[^\[\]()]+?)\s+[—–-]\s+(?P<t>(?:offensiv|difensiv|potenziament|curativ|support|passiv|"
                        r"arma\b|armatura|tecnica|potere)[^:\d]{0,50})$", re.IGNORECASE)
_NAME_TYPE = re.compile(r"^(?P<n>[^:\d]{1,60}?)\s*:\s*(?P<t>[^:\d]{1,60})$")


def _new_technique(text: str, section: str) -> _TechBuilder:
    """A technique from its name line: the name, with a kind prefix (`Tecnica: Cero`), a type in brackets before
    or after it (`[Offensiva] Cero`, `Artigli Affilati [Arma, Offensiva Fisica]`), after a colon (`Fendente:
    Offensiva Fisica`) or a dash (`Scatto – Potenziamento`) read into kind/type, never left in the name."""
    kind = section
    m = _NAME_PREFIX.match(text)
    if m:
        kind = _SECTION_KIND.get(m.group("kind").lower(), m.group("kind").lower())
        text = m.group("rest")
    type_text = None
    m = _LEAD_TYPE.match(text) or _TRAIL_TYPE.match(text) or _NAME_TYPE.match(text) or \
        (_DASH_TYPE.match(text) if " " in text else None)
    if m:
        text, type_text = m.group("n"), m.group("t")
    tb = _TechBuilder(text.strip(" :*•-"), kind)
    if type_text and type_text.strip():
        tb.set("tipo", type_text)
    return tb


def _key_value(piece: str) -> tuple[str, str] | None:
    m = _KEY.match(piece) or _KEY_NOCOLON.match(piece)
    return (m.group("key"), m.group("val")) if m else None


_HEADER_KEYS = {"nome": "nome", "tipo": "tipo", "tipologia": "tipo", "categoria": "categoria",
                "classe": "categoria", "potenziale": "potenziale", "raggio": "raggio",
                "raggio ottimale": "raggio ottimale", "gittata": "raggio", "costo": "costo", "consumo": "costo",
                "danno": "danno", "tipo di danno": "danno", "effetto": "effetto", "effetti": "effetto",
                "descrizione": "effetto", "arma": "nome", "tecnica": "nome"}


def _document(html: bytes | str, charset: str | None) -> Any:
    """The sheet's tree, its bytes decoded as the thread pages are (scraper.parse.decode_html: BOM, the HTTP
    `charset`, a <meta>, UTF-8, else windows-1252, mixed encodings repaired); None when there is nothing to read.
    PageTooDeep when the markup nests beyond the reader's limit (the rest of the page would be lost)."""
    from scraper.parse import decode_html

    if isinstance(html, str):
        data = html.encode("utf-8", "replace")  # already text: no charset to detect
    else:
        data = bytes(html or b"")
        if b"\x00" in data:
            data = data.replace(b"\x00", b"")
        if len(data) > MAX_SHEET_BYTES or not data.strip():
            return None
        text, _enc, _ = decode_html(data, charset=charset)
        if text is not None:
            data = text.encode("utf-8", "replace")
    if len(data) > MAX_SHEET_BYTES or not data.strip():
        return None
    try:
        return read_html(data, html_parser())  # a parser per sheet: read_html reads the parser's error log
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None


def _post_author(html: bytes | str, url: str, charset: str | None) -> str | None:
    """The author of the sheet's post on a known forum platform: the player, when no line names one."""
    from scraper.parse import parse_page
    from scraper.errors import ScrapeError

    try:
        page = parse_page(html.encode("utf-8") if isinstance(html, str) else bytes(html), url, charset=charset)
    except ScrapeError:
        return None
    return page.posts[0].author or None if page.posts else None


def _text(el: Any) -> str:
    return " ".join(el.xpath("string()").split())


def parse_sheet(html: bytes | str, url: str, *, charset: str | None = None) -> Registry:
    """One character and its techniques from a sheet page; never raises on odd markup (an empty page gives a
    character named from the page title or the URL, with nothing else) but PageTooDeep on markup nested beyond
    the HTML reader's limit. `charset` is the HTTP header's (it wins over a <meta>)."""
    doc = _document(html, charset)
    if doc is None:
        return Registry(characters={}, techniques={}, sources=(url,))
    root = _content_root(doc)
    rows = _lines(root)

    name: str | None = None
    player: str | None = None
    char_lines: list[str] = []
    extra: dict[str, Any] = {}
    pools: dict[str, Resource] = {}
    techs: list[_TechBuilder] = []
    current: _TechBuilder | None = None
    section: str | None = None
    table_header: list[str] | None = None

    for cells, item in rows:
        raw = [clean_markup(c) for c in cells]
        cells = [c for c in raw if c]
        if not cells:
            continue
        line = " ".join(cells)
        sec = _SECTION.match(line) if len(cells) == 1 else None
        if sec:
            section = _SECTION_KIND.get(sec.group("word").lower(), "tecnica")
            current = None
            table_header = None
            continue
        if len(cells) == 1 and _END_SECTION.match(line):
            section = None
            current = None
            table_header = None
            continue
        if section is None:
            # "Nome: X", and the table row "Nome | X"
            cf = _CHAR_FIELD.match(line if len(cells) != 2 else f"{cells[0].rstrip(' :')}: {cells[1]}")
            if cf:
                key = " ".join(cf.group("key").lower().split())
                if key in _PLAYER_KEYS:
                    player = player or cf.group("val")
                else:
                    name = name or cf.group("val")
                continue
            pm = _POOL_MAX.match(line) if len(cells) == 1 else _POOL_MAX.match(" ".join(cells[:3]))
            if pm:
                pool = RESOURCE_ALIASES.get(" ".join(pm.group("name").lower().split()), pm.group("name").upper())
                mx = int(pm.group("b") or pm.group("a"))
                pools[pool] = Resource(current=mx, max=mx)
                continue
            for em in _EXTRA.finditer(line):
                extra[em.group("key")] = int(em.group("val"))
            # Stat tables: "Forza | 5 | +1" reads as "Forza 5 (+1)".
            if len(cells) in (2, 3) and re.fullmatch(r"\d{1,5}", cells[1]) and \
                    (len(cells) == 2 or re.fullmatch(r"\(?[+-]?\s*\d{1,5}\)?", cells[2])):
                bonus = cells[2].strip("()").replace(" ", "") if len(cells) == 3 else "+0"
                if not bonus.startswith(("+", "-")):
                    bonus = "+" + bonus
                char_lines.append(f"{cells[0]} {cells[1]} ({bonus})")
            elif len(cells) == 2 and cells[1][:1].isdigit() and not any(ch.isdigit() for ch in cells[0]):
                # "Destrezza: | 4+2", "Forza | 5 (+1)": the name cell and the value cell read as one schema line
                char_lines.append(f"{cells[0].rstrip(' :')} {cells[1]}")
            else:
                char_lines.append(" | ".join(cells))
            continue

        # Inside a techniques section. A table with a header row maps its cells by column.
        if len(cells) >= 3 and all(c.lower().strip(" :") in _HEADER_KEYS for c in cells):
            table_header = [_HEADER_KEYS[c.lower().strip(" :")] for c in cells]
            continue
        if table_header and len(table_header) in (len(raw), len(cells)):
            row = raw if len(raw) == len(table_header) else cells  # an empty cell keeps its column
            tb = _TechBuilder(row[table_header.index("nome")] if "nome" in table_header else row[0], section)
            for key, val in zip(table_header, row):
                if key != "nome":
                    tb.set(key, val)
            if tb.name:
                techs.append(tb)
            current = None
            continue
        pieces = [p for p in _INLINE_SPLIT.split(" | ".join(cells) if len(cells) > 1 else line) if p.strip()]
        first = _key_value(pieces[0])
        if first is None and item and "," in line and ":" not in line:
            # "<li>Katana, Wakizashi</li>": a list item naming several items of the section
            names = [n.strip(" *•-.") for n in line.split(",")]
            if all(0 < len(n) <= 40 and len(n.split()) <= 5 for n in names):
                for n in names:
                    techs.append(_TechBuilder(n, section))
                current = None
                continue
        if first is None or first[0].lower() == "nome":
            current = _new_technique(first[1].strip() if first else pieces[0].strip(), section)
            techs.append(current)
            pieces = pieces[1:]
        if current is None:
            continue
        for piece in pieces:
            kv = _key_value(piece)
            if kv:
                current.set(*kv)

    text = "\n".join(char_lines)
    schema = parse_schema(text)
    stats = dict(schema.stats) if schema else {}
    if schema:
        for pool, res in schema.resources.items():
            if pool not in pools:
                mx = res.max if res.max is not None else res.current
                pools[pool] = Resource(current=mx, max=mx)
    if name is None:
        for el in root.iter(*_HEADING):
            text = _text(el)
            if text and len(text) <= 60 and not _SECTION.match(text):
                text = _SCHEDA_PREFIX.sub("", text).strip(" :-")
                if not _GENERIC_NAME.match(text):
                    name = text
                    break
    if not name:
        title = " ".join((doc.findtext(".//title") or "").split())
        # "Scheda Kenshi Yamato - Bleach GdR": the part before the forum's name, without "Scheda"
        title = _SCHEDA_PREFIX.sub("", re.split(r"\s+[-|–—]\s+", title)[0]).strip(" :-") if title else ""
        name = title if title and not _GENERIC_NAME.match(title) else \
            url.rstrip("/").rsplit("/", 1)[-1] or url
    name = name.strip()
    if player is None:
        player = _post_author(html, url, charset)

    techniques: dict[str, Technique] = {}
    for tb in techs:
        if tb.name and tb.name not in techniques:
            techniques[tb.name] = tb.build(name)
    character = Character(name=name, sheet_url=url, player=player, stats=stats, resources=pools,
                          techniques=tuple(techniques), extra=extra)
    return Registry(characters={name: character}, techniques=techniques, sources=(url,))


__all__ = ["parse_sheet"]
