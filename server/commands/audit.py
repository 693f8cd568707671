"""`arbitro audit`: replay a fight (thread URL, saved pages, history JSON); print it as text, JSON, Markdown or BBCode."""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
from typing import Any

from .scrape import add_network_arguments, fetch_policy

EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
EXIT_FETCH = 3
DEFAULT_RULESET = "guida"
HISTORY_BYTES_FACTOR = 10  # a history JSON file may be this many times --max-bytes (~3 KB a post, 10,000 posts)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "audit", help="arbitra un combattimento: esito di ogni turno e suggerimento per il prossimo",
        description="Rigioca un combattimento secondo un regolamento e stampa i verdetti di ogni post, lo stato "
                    "finale dei personaggi e il suggerimento per il prossimo turno. SOURCE è l'URL della "
                    "discussione, pagine salvate (HTML o JSON di api.php), oppure una cronologia JSON "
                    "(arbitro.history/1, come prodotta da `arbitro scrape`).")
    p.add_argument("sources", nargs="+", metavar="SOURCE", help="URL, pagine salvate o cronologia JSON")
    p.add_argument("--ruleset", default=None,
                   help="regolamento (default: quello della configurazione del forum per l'host e la sezione "
                        "della discussione, altrimenti guida)")
    p.add_argument("--forum-config", metavar="FILE",
                   help="configurazione dei forum (TOML, docs/forum-config.md): regolamento per forum o sezione, "
                        "selettori, master")
    p.add_argument("--registry", metavar="FILE", help="registro TOML scritto dal master (vince sulle schede)")
    p.add_argument("--format", choices=("text", "json", "markdown", "bbcode"), default="text",
                   help="formato dell'uscita (bbcode: da incollare in un post del forum)")
    p.add_argument("--min-severity", choices=("info", "warning", "error"), default=None,
                   help="mostra solo i verdetti di questa gravità o più gravi (default: warning; in JSON tutti); "
                        "il riepilogo li conta sempre tutti")
    p.add_argument("--character", metavar="NAME", help="solo i turni di questo personaggio e il suo suggerimento")
    p.add_argument("--setting", action="append", default=[], metavar="NOME=VALORE",
                   help="imposta un'opzione del regolamento (valore JSON o testo; ripetibile)")
    p.add_argument("--platform", choices=("auto", "forumfree", "forumotion", "phpbb", "generic"), default="auto",
                   help="piattaforma del forum (default: riconosciuta dalla pagina)")
    add_network_arguments(p)
    p.add_argument("--no-sheets", action="store_true", help="non seguire i link alle schede dei personaggi")
    p.add_argument("--saved-at", metavar="ISO",
                   help="pagine salvate: quando sono state salvate (ISO 8601); \"Oggi\"/\"Ieri\" si leggono rispetto "
                        "a questa data. Default: la data scritta nella pagina, altrimenti la data di modifica del file")
    p.add_argument("--cache-dir", metavar="DIR", help="cartella della cache HTTP (default: nessuna cache)")
    p.add_argument("--max-bytes", type=_positive_int, default=None, metavar="N",
                   help="pagina più grande letta, scaricata o salvata (byte; default 5242880, come il download); "
                        "una cronologia JSON può essere 10 volte tanto")
    p.add_argument("--no-color", action="store_true", help="niente colori anche su un terminale")
    p.add_argument("-o", "--output", metavar="FILE", help="scrive il risultato in FILE")
    p.set_defaults(func=run)
    return p


def _positive_int(text: str) -> int:
    from .scrape import _positive_int as positive

    return positive(text)


class _BadInput(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _settings(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name.strip():
            raise _BadInput("bad_setting", f"opzione non valida {pair!r}: attesa NOME=VALORE")
        try:
            out[name.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            out[name.strip()] = raw
    return out


class _FirstPage:
    """Wraps the scraper's Fetcher to keep the first page fetched (its section id can pick the ruleset)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.first: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get(self, url: str, *args: Any, **kwargs: Any) -> Any:
        res = self._inner.get(url, *args, **kwargs)
        if self.first is None:
            self.first = res
        return res


def _forum_configs(args: argparse.Namespace) -> Any:
    if not getattr(args, "forum_config", None):
        return None
    from scraper.platforms.config import load_config

    from server.untrusted import check_toml_file

    from .scrape import max_bytes

    path = pathlib.Path(args.forum_config)
    if not path.exists():
        raise _BadInput("not_found", f"file non trovato: {path}")
    check_toml_file(path, "--forum-config", max_bytes(args))
    return load_config(path)


def pick_ruleset(args: argparse.Namespace, history: Any, forums: Any,
                 first_page: tuple[bytes, str] | None) -> tuple[str, str | None]:
    """(ruleset, a line for the user): --ruleset, else the forum config's ruleset for the thread's host and
    section, else the one whose post conventions the fight clearly follows, else guida. When the chosen ruleset
    is not the one the posts look like, the line says so."""
    from engine.core import available_rulesets
    from engine.recognise import recognise

    seen = recognise(history, {rid: rs.conventions for rid, rs in available_rulesets().items()
                               if getattr(rs, "conventions", None) is not None})
    decided = args.ruleset or _configured_ruleset(args, history, forums, first_page)
    if decided is not None:
        if seen.ruleset not in (None, decided):
            return decided, (f"attenzione: regolamento {decided}, ma i post sembrano di un combattimento "
                             f"{seen.says(seen.ruleset)}; --ruleset {seen.ruleset} per rigiocarlo così")
        return decided, None
    if seen.ruleset is not None:
        return seen.ruleset, (f"regolamento riconosciuto dai post: {seen.says(seen.ruleset)}; nessuna "
                              "configurazione del forum lo sceglie (--ruleset o --forum-config lo fissano)")
    best = seen.fits[0].ruleset if seen.fits else DEFAULT_RULESET
    if best != DEFAULT_RULESET:
        return DEFAULT_RULESET, (f"regolamento {DEFAULT_RULESET} (predefinito): i post non somigliano con certezza "
                                 f"a nessun regolamento, il più vicino è {seen.says(best)}; --ruleset lo sceglie")
    return DEFAULT_RULESET, None


def _configured_ruleset(args: argparse.Namespace, history: Any, forums: Any,
                        first_page: tuple[bytes, str] | None) -> str | None:
    """The forum config's ruleset for the thread's host and section; None when there is no config or it is
    silent."""
    if forums is None:
        return None
    from server.config import forum_has_sections, forum_ruleset, section_from_url

    host = history.thread.host
    section = None
    if forum_has_sections(forums, host):
        section = section_from_url(history.thread.url) or next(
            (section_from_url(s) for s in args.sources if section_from_url(s)), None)
        if section is None and first_page is not None:
            from scraper.parse import parse_page

            section = parse_page(first_page[0], first_page[1], platform=args.platform, config=forums).section
    return forum_ruleset(forums, host, section)


def load_history(args: argparse.Namespace, forums: Any = None) -> tuple[Any, tuple[bytes, str] | None]:
    """A history JSON file, or the pages / URL through the scraper; with the first page read (bytes, URL)."""
    from scraper.crawl import read_file_capped

    from .scrape import max_bytes

    cap = max_bytes(args)
    if len(args.sources) == 1 and "://" not in args.sources[0]:
        path = pathlib.Path(args.sources[0])
        if not path.exists():
            raise _BadInput("not_found", f"file non trovato: {path}")
        with path.open("rb") as fh:
            head = fh.read(4096).lstrip()
        if head.startswith(b"{"):
            raw = read_file_capped(path, cap * HISTORY_BYTES_FACTOR, str(path))
            if b"arbitro.history/1" in raw:
                return _history_file(path, raw), None
    from scraper.crawl import scrape
    from scraper.fetch import Fetcher

    is_url = any("://" in s for s in args.sources)
    if not is_url:
        missing = [s for s in args.sources if not pathlib.Path(s).exists()]
        if missing:
            raise _BadInput("not_found", "file non trovato: " + ", ".join(missing))
    policy = fetch_policy(args, cache_dir=args.cache_dir, max_bytes=cap)
    with Fetcher(policy) as fetcher:
        keep = _FirstPage(fetcher)
        history = scrape(args.sources, platform=args.platform, fetcher=keep if is_url else None, config=forums,
                         registry_file=None, follow_sheets=is_url and not args.no_sheets,
                         saved_at=None if is_url else args.saved_at, max_bytes=cap)
    if is_url:
        first = (keep.first.content, keep.first.final_url) if keep.first is not None else None
    else:
        first = (read_file_capped(pathlib.Path(args.sources[0]), cap), history.thread.url)
    return history, first


def _history_file(path: pathlib.Path, raw: bytes) -> Any:
    """An arbitro.history/1 file → CombatHistory, read as the service reads a `history` body: nesting depth
    checked before parsing, no lone surrogate, at most scraper.parse.MAX_POSTS posts."""
    from engine.history import CombatHistory, HistoryFormatError
    from scraper.parse import check_post_count

    from server.untrusted import Refused, loads

    try:
        data = loads(raw)
    except Refused as exc:
        raise _BadInput(exc.code, f"{path}: {exc.message}") from None
    if isinstance(data, dict) and isinstance(data.get("posts"), list):
        check_post_count(len(data["posts"]))
    try:
        return CombatHistory.from_dict(data)
    except HistoryFormatError as exc:
        raise _BadInput("bad_history", f"{path}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    from engine.core import EngineError, replay
    from engine.report import SEVERITIES, render_bbcode, render_markdown, render_text

    from server.untrusted import Refused

    from .scrape import too_large_message

    try:
        from scraper.errors import BlockedByRobots, FetchFailed, PageTooLarge, ScrapeError
    except ImportError:  # the scraper is optional for history files
        ScrapeError = FetchFailed = PageTooLarge = BlockedByRobots = ()  # type: ignore[assignment,misc]
    try:
        settings = _settings(args.setting)
        forums = _forum_configs(args)
        history, first_page = load_history(args, forums)
        from scraper.crawl import history_warnings

        for warning in history_warnings(history):  # never a half or doubtful history presented as sure
            print(f"arbitro audit: {warning}", file=sys.stderr)
        args.ruleset, note = pick_ruleset(args, history, forums, first_page)
        if note:
            print(f"arbitro audit: {note}", file=sys.stderr)
        registry = None
        if args.registry:
            from scraper.registry_file import load_registry
            from server.untrusted import check_toml_file

            from .scrape import max_bytes

            check_toml_file(args.registry, "--registry", max_bytes(args))
            registry = load_registry(args.registry)
        audit = replay(history, args.ruleset, registry, settings=settings)
        if args.character:
            args.character = _fighter(audit, args.character)
            from engine.core import get_ruleset
            rs = get_ruleset(args.ruleset)
            state = audit.snapshots[-1].state if audit.snapshots else rs.initial_state(
                history.thread, history.registry, audit.settings)
            audit = _with_next(audit, rs.next_hint(state, args.character))
        if args.format == "json":
            doc = audit.to_dict()
            if args.character:
                doc["posts"] = [p for p in doc["posts"]
                                if (p["character"] or p["author"]).lower() == args.character.lower()]
            if args.min_severity:  # asked for: JSON drops the verdicts below it too
                floor = SEVERITIES.index(args.min_severity)
                for p in doc["posts"]:
                    p["verdicts"] = [v for v in p["verdicts"] if SEVERITIES.index(v["severity"]) >= floor]
            text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        elif args.format == "markdown":
            text = render_markdown(audit, character=args.character, min_severity=args.min_severity or "warning")
        elif args.format == "bbcode":
            text = render_bbcode(audit, character=args.character, min_severity=args.min_severity or "warning")
        else:
            colour = not args.no_color and not args.output and _is_tty() and not os.environ.get("NO_COLOR")
            text = render_text(audit, colour=colour, character=args.character,
                               min_severity=args.min_severity or "warning")
        if args.output:
            pathlib.Path(args.output).write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    except (_BadInput, Refused) as exc:
        return _fail(exc.code, exc.message, EXIT_BAD_INPUT)
    except EngineError as exc:
        return _fail("engine", str(exc), EXIT_BAD_INPUT)
    except PageTooLarge as exc:  # type: ignore[misc]
        status = EXIT_BAD_INPUT if getattr(exc, "reason", None) == "file" else EXIT_FETCH
        return _fail(exc.code, too_large_message(exc), status)
    except (FetchFailed, BlockedByRobots) as exc:  # type: ignore[misc]
        return _fail(exc.code, exc.message, EXIT_FETCH)
    except ScrapeError as exc:  # type: ignore[misc]
        from .scrape import refusal_message

        return _fail(exc.code, refusal_message(exc), EXIT_BAD_INPUT)  # the option that lifts a refusal, as scrape says
    except OSError as exc:
        from scraper.errors import os_error_text

        return _fail("io", os_error_text(exc), EXIT_BAD_INPUT)
    except Exception as exc:  # last resort: one line, never a traceback (ARBITRO_DEBUG=1 shows it)
        if os.environ.get("ARBITRO_DEBUG"):
            raise
        return _fail("internal_error", f"{type(exc).__name__}: {exc}", EXIT_INTERNAL)
    return 0


def _fighter(audit: Any, name: str) -> str:
    """The fight's own spelling of --character; an unknown name is an error naming the fight's characters."""
    known = list(audit.characters) + [p.character or p.author for p in audit.posts]
    for k in known:
        if k.casefold() == name.strip().casefold():
            return k
    names = ", ".join(sorted(set(audit.characters) or set(known))) or "nessuno"
    raise _BadInput("unknown_character", f"personaggio sconosciuto {name!r}: in questo combattimento ci sono {names}")


def _with_next(audit: Any, hint: dict[str, Any]) -> Any:
    from dataclasses import replace
    return replace(audit, next=hint)


def _fail(code: str, message: str, status: int) -> int:
    print(f"arbitro audit: errore [{code}]: {message}", file=sys.stderr)
    return status


def _is_tty() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False
