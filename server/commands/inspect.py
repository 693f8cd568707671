"""`arbitro inspect`: what the scraper recognises on each page, and the forum-config stanza a skin it does not read needs."""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
from datetime import datetime, timezone
from typing import Any

from .scrape import add_network_arguments, fetch_policy

EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
EXIT_FETCH = 3
ADAPTERS = ("forumfree", "forumotion", "phpbb", "generic")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "inspect", help="mostra cosa Arbitro riconosce in ogni pagina (e la configurazione per uno stile sconosciuto)",
        description="Per ogni pagina (file salvato o URL ammesso) mostra cosa vi riconosce il lettore: piattaforma e "
                    "stile, la discussione e le sue pagine, ogni messaggio (id, autore, data, citazioni, modifica, "
                    "dadi, scheda). Per uno stile che nessun lettore conosce stampa la configurazione del forum "
                    "(TOML) da incollare nel file dei forum.")
    p.add_argument("sources", nargs="+", metavar="SOURCE", help="pagina salvata o URL di una pagina della discussione")
    p.add_argument("--platform", choices=("auto", *ADAPTERS), default="auto",
                   help="piattaforma del forum (default: riconosciuta dalla pagina)")
    p.add_argument("--forum-config", "--config", dest="forum_config", metavar="FILE",
                   help="configurazione dei forum (TOML, docs/forum-config.md)")
    add_network_arguments(p)
    p.add_argument("--format", choices=("text", "json"), default="text", help="formato dell'uscita")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from scraper.errors import BlockedByRobots, FetchFailed, PageTooLarge, ScrapeError
    from server.commands.scrape import refusal_message

    try:
        reports = inspect_sources(args)
    except (FetchFailed, PageTooLarge, BlockedByRobots) as exc:
        return _fail(exc.code, exc.message, EXIT_FETCH)
    except ScrapeError as exc:
        return _fail(exc.code, refusal_message(exc), EXIT_BAD_INPUT)
    except Exception as exc:  # last resort: one line, never a traceback (ARBITRO_DEBUG=1 shows it)
        if os.environ.get("ARBITRO_DEBUG"):
            raise
        return _fail("internal_error", f"{type(exc).__name__}: {exc}", EXIT_INTERNAL)
    if args.format == "json":
        text = json.dumps(reports, indent=2, ensure_ascii=False) + "\n"
    else:
        text = "\n".join(render_text(r) for r in reports)
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.flush()
    unread = [r for r in reports if r["error"]]
    for r in unread:  # the report is printed; the status still says a page was not read
        print(f"arbitro inspect: errore [{r['error']['code']}]: {r['source']}: {r['error']['message']}", file=sys.stderr)
    return EXIT_BAD_INPUT if unread else 0


def _fail(code: str, message: str, status: int) -> int:
    print(f"arbitro inspect: errore [{code}]: {message}", file=sys.stderr)
    return status


# --- reading -------------------------------------------------------------------------------------------

def inspect_sources(args: argparse.Namespace) -> list[dict[str, Any]]:
    """One report per source; a URL is fetched as `arbitro scrape` fetches it (same policy, allowlist, robots)."""
    from scraper.crawl import BadSource, SourceNotFound, read_file_capped, saved_page_date, saved_page_url
    from scraper.charset import charset_from_content_type
    from scraper.fetch import Fetcher

    config = None
    if args.forum_config:
        from scraper.platforms.config import load_config
        config = load_config(pathlib.Path(args.forum_config))
    policy = fetch_policy(args, cache_dir=None)
    reports = []
    with Fetcher(policy) as fetcher:
        for source in args.sources:
            if "://" in source:
                result = fetcher.get(source)
                charset = charset_from_content_type(result.headers.get("Content-Type"))
                reports.append(inspect_page(result.content, result.final_url, source=source, platform=args.platform,
                                            config=config, charset=charset,
                                            fetched_at=datetime.now(timezone.utc)))
                continue
            path = pathlib.Path(source)
            try:
                data = read_file_capped(path, policy.max_bytes, source)  # a saved page is capped as a fetched one
            except FileNotFoundError:
                raise SourceNotFound(f"file non trovato: {source}") from None
            except OSError as exc:
                from scraper.errors import os_error_text

                raise BadSource("impossibile leggere " + os_error_text(exc, source)) from None
            url = saved_page_url(data) or path.resolve().as_uri()
            reports.append(inspect_page(data, url, source=source, platform=args.platform, config=config,
                                        fetched_at=saved_page_date(data)))
    return reports


def inspect_page(data: bytes, url: str, *, source: str, platform: str = "auto", config: Any = None,
                 charset: str | None = None, fetched_at: datetime | None = None) -> dict[str, Any]:
    """What the scraper recognises on one page, as plain data (the text and JSON outputs both print it)."""
    from scraper.errors import ScrapeError
    from scraper.parse import _looks_json, parse_document, parse_page
    from scraper.platforms.base import host_of
    from scraper.platforms.detect import get_platform
    from scraper.platforms.config import resolve_config
    from scraper.platforms.generic import date_text, read_structure

    cfg = resolve_config(config, host_of(url))
    report: dict[str, Any] = {"source": source, "url": url, "host": host_of(url) or None, "detection": {},
                              "page": None, "posts": [], "problems": [], "error": None, "config_stanza": None}
    doc = None
    if not _looks_json(data, url):
        try:
            doc = parse_document(data, charset=charset)
        except ScrapeError as exc:
            report["error"] = {"code": exc.code, "message": exc.message}
            return report
        report["detection"] = {name: round(get_platform(name).detect(doc, url), 2) for name in ADAPTERS}
    try:
        page = parse_page(data, url, platform=platform, config=config, fetched_at=fetched_at, charset=charset)
    except ScrapeError as exc:
        page = None
        report["error"] = {"code": exc.code, "message": exc.message}
    reading = read_structure(doc, cfg.selectors) if doc is not None and (page is None or page.platform == "generic") \
        else None
    if page is not None:
        report["page"] = {
            "platform": page.platform, "skin": page.skin, "thread_id": page.thread_id, "title": page.title,
            "page": page.page, "page_count": page.page_count, "page_size": page.page_size,
            "next_url": page.next_url, "page_urls": list(page.page_urls),
        }
        report["problems"] = list(getattr(page, "problems", ()))
        shown = _shown_dates(reading, page, date_text)
        report["posts"] = [_post_report(p, shown.get(p.id)) for p in page.posts]
    if reading is not None:
        report["config_stanza"] = config_stanza(host_of(url), reading.selectors, reading.learned)
        if page is None:
            report["problems"] = list(reading.problems)
    return report


def _shown_dates(reading: Any, page: Any, date_text: Any) -> dict[str, str | None]:
    """Post id → the date as the page writes it (the structural reading knows where it is: generic pages)."""
    from scraper.platforms.base import first

    if reading is None or "date" not in reading.selectors or len(reading.blocks) != len(page.posts):
        return {}
    return {p.id: date_text(first(b, reading.selectors["date"])) for p, b in zip(page.posts, reading.blocks)}


def _post_report(post: Any, shown_date: str | None) -> dict[str, Any]:
    schema = post.schema
    return {
        "id": post.id, "url": post.url, "author": post.author, "author_id": post.author_id, "role": post.role,
        "date_text": shown_date, "timestamp": post.timestamp,
        "quotes": [q.author for q in post.quotes],
        "edited_by": post.edited_by, "edited_at": post.edited_at,
        "rolls": [{"expression": r.expression, "faces": list(r.faces) if r.faces is not None else None,
                   "total": r.total, "label": r.label, "source": r.source, "authentic": r.authentic,
                   "problems": list(r.problems)} for r in post.rolls],
        "schema": None if schema is None else {
            "character": schema.character, "sheet_url": schema.sheet_url,
            "resources": {k: [v.current, v.max] for k, v in schema.resources.items()},
            "stats": {k: [v.base, v.bonus] for k, v in schema.stats.items()},
            "registro": None if schema.registro is None else [e.raw for e in schema.registro],
            "missing": list(schema.missing)},
        "answers": post.answers,
    }


def config_stanza(host: str, selectors: dict[str, str], learned: set[str] | None = None) -> str:
    """The forum-config TOML that makes the generic reader read this skin as it was read here (it loads through
    `scraper.platforms.config.load_config`; a key not found is left commented, to write by hand)."""
    table = f"forums.{json.dumps(host)}" if host else "default"
    lines = ["# configurazione suggerita da arbitro inspect: incollala nel file dei forum (docs/forum-config.md)"]
    if not host:
        lines.append('# la pagina salvata non dice di che forum è: sostituisci [default] con [forums."<host del forum>"]')
    lines += [f"[{table}]", 'platform = "generic"', "", f"[{table}.selectors]"]
    for key in ("post", "author", "date", "body"):
        if key in selectors:
            note = "" if learned is None or key in learned else "  # dalla configurazione data"
            lines.append(f"{key} = {json.dumps(selectors[key], ensure_ascii=False)}{note}")  # a JSON string is TOML
        else:
            lines.append(f'# {key} = "…"  # non trovato nella pagina: scrivi l\'XPath a mano')
    return "\n".join(lines) + "\n"


# --- text ----------------------------------------------------------------------------------------------

def _yes_no(value: bool) -> str:
    return "sì" if value else "no"


def render_text(report: dict[str, Any]) -> str:
    out = [f"== {report['source']}", f"URL: {report['url']}"]
    if report["detection"]:
        out.append("Riconoscimento: " + ", ".join(f"{k} {v:.2f}" for k, v in report["detection"].items()))
    page = report["page"]
    if report["error"]:
        out.append(f"Nessun messaggio letto [{report['error']['code']}]: {report['error']['message']}")
    if page:
        out.append(f"Piattaforma: {page['platform']}" + (f" (stile {page['skin']})" if page["skin"] else ""))
        count = f" di {page['page_count']}" if page["page_count"] else ""
        out.append(f"Discussione: {page['thread_id'] or '—'} «{page['title'] or ''}», pagina {page['page']}{count}"
                   + (f", {page['page_size']} messaggi per pagina" if page["page_size"] else ""))
        out.append(f"Pagina successiva: {page['next_url'] or '—'}")
        out.append(f"Messaggi: {len(report['posts'])}")
    for n, post in enumerate(report["posts"], 1):
        out.append(f"  {n}. id {post['id']} · autore {post['author'] or '—'}"
                   + (f" (utente {post['author_id']})" if post["author_id"] else "") + f" · ruolo {post['role']}")
        shown = f"«{post['date_text']}» → " if post["date_text"] else ""
        out.append(f"     data: {shown}{post['timestamp'] or 'non letta'}")
        if post["quotes"]:
            out.append("     citazioni: " + ", ".join(a or "(senza autore)" for a in post["quotes"]))
        if post["edited_by"] or post["edited_at"]:
            out.append(f"     modificato da {post['edited_by'] or '—'} il {post['edited_at'] or '—'}")
        for r in post["rolls"]:
            faces = " ".join(map(str, r["faces"])) if r["faces"] is not None else "non mostrate"
            problems = f", problemi: {', '.join(r['problems'])}" if r["problems"] else ""
            out.append(f"     dado {r['expression']}: facce {faces}, totale {r['total'] if r['total'] is not None else '—'},"
                       f" «{r['label']}», letto da {r['source']}, autentico {_yes_no(r['authentic'])}{problems}")
        schema = post["schema"]
        if schema is None:
            out.append("     scheda: assente")
        else:
            pools = ", ".join(f"{k} {c}" + (f"/{m}" if m is not None else "") for k, (c, m) in schema["resources"].items())
            out.append(f"     scheda: personaggio {schema['character'] or '—'}; {pools or 'nessuna risorsa'}"
                       + (f"; mancano: {', '.join(schema['missing'])}" if schema["missing"] else ""))
        if post["answers"]:
            out.append(f"     risponde al messaggio {post['answers']}")
    if report["problems"]:
        out.append("Dubbi della lettura:")
        out += [f"  - {p}" for p in report["problems"]]
    if report["config_stanza"]:
        out.append("Stile non riconosciuto da un lettore dedicato. Configurazione del forum suggerita:")
        out.append(report["config_stanza"].rstrip("\n"))
    return "\n".join(out) + "\n"
