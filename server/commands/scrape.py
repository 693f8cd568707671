"""`arbitro scrape`: a thread URL or saved pages of one thread → the combat history JSON (arbitro.history/1)."""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile
from typing import Any, TextIO

EXIT_BAD_INPUT = 2
EXIT_FETCH = 3
EXIT_INTERNAL = 1


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "scrape", help="legge una discussione e stampa la cronologia del combattimento (JSON)",
        description="Legge una discussione di combattimento (URL, oppure pagine HTML salvate o JSON di api.php "
                    "di una sola discussione) e stampa la cronologia arbitro.history/1 in JSON.")
    p.add_argument("sources", nargs="+", metavar="SOURCE", help="URL della discussione, o file delle sue pagine")
    p.add_argument("--platform", choices=("auto", "forumfree", "forumotion", "phpbb", "generic"), default="auto",
                   help="piattaforma del forum (default: riconosciuta dalla pagina)")
    p.add_argument("-o", "--output", metavar="FILE", help="scrive il JSON in FILE invece che sullo standard output")
    p.add_argument("--registry", metavar="FILE", help="registro TOML scritto dal master (vince sulle schede)")
    p.add_argument("--config", "--forum-config", dest="config", metavar="FORUMCONFIG",
                   help="configurazione TOML dei forum (selettori, dadi, fuso)")
    add_network_arguments(p)
    p.add_argument("--cache-dir", default=".arbitro-cache", metavar="DIR",
                   help="cartella della cache HTTP per le richieste condizionali (default: .arbitro-cache)")
    p.add_argument("--no-cache", action="store_true", help="nessuna cache: scarica sempre tutto")
    p.add_argument("--no-sheets", action="store_true", help="non seguire i link alle schede dei personaggi")
    p.add_argument("--saved-at", metavar="ISO",
                   help="pagine salvate: quando sono state salvate (ISO 8601, es. 2026-11-09T12:00+01:00); "
                        "\"Oggi\"/\"Ieri\" si leggono rispetto a questa data. Default: la data scritta nella "
                        "pagina dallo strumento di salvataggio, altrimenti la data di modifica del file")
    p.add_argument("--max-bytes", type=_positive_int, default=None, metavar="N",
                   help="pagina più grande letta, scaricata o salvata (byte; default 5242880, come il download)")
    p.add_argument("--api", action="store_true",
                   help="ForumFree/ForumCommunity: legge la discussione da api.php (JSON) invece che dall'HTML")
    p.set_defaults(func=run)
    return p


def add_network_arguments(p: argparse.ArgumentParser) -> None:
    """--allow-host and --allow-private, the same for every command that fetches (docs/fetching.md)."""
    p.add_argument("--allow-host", action="append", default=[], metavar="HOST",
                   help="ammette anche questo host (ripetibile; '*.dominio' per i sottodomini)")
    p.add_argument("--allow-private", action="append", default=[], type=_private_entry, metavar="ADDR:PORT",
                   help="ammette questo indirizzo privato o locale con la sua porta (ripetibile; es. "
                        "127.0.0.1:8123, 10.1.0.0/16:8080, [::1]:8123; '*' per ogni porta): un forum in rete "
                        "locale o di prova. Metadati cloud e link-local mai")


def _private_entry(text: str) -> str:
    from scraper.netguard import AllowlistError, parse_private_entry

    try:
        parse_private_entry(text)
    except AllowlistError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def fetch_policy(args: argparse.Namespace, **fields: Any) -> Any:
    """The FetchPolicy of a command: its --allow-host and --allow-private on top of the defaults."""
    from scraper.policy import FetchPolicy

    return FetchPolicy(private_allowlist=tuple(args.allow_private), **fields).with_hosts(*args.allow_host)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"serve un numero intero positivo di byte: {text!r}")
    return value


def max_bytes(args: argparse.Namespace) -> int:
    """`--max-bytes`, else the fetcher's cap: saved files get the same cap as fetched pages."""
    from scraper.policy import FetchPolicy

    return getattr(args, "max_bytes", None) or FetchPolicy().max_bytes


def too_large_message(exc: Exception) -> str:
    """PageTooLarge as the command line says it: a saved file's cap is lifted by --max-bytes."""
    return str(exc) + ("; --max-bytes N lo alza" if getattr(exc, "reason", None) == "file" else "")


def run(args: argparse.Namespace) -> int:
    from scraper.errors import BlockedByRobots, FetchFailed, PageTooLarge, ScrapeError

    from scraper.crawl import history_warnings
    from server.untrusted import Refused

    bar = _ProgressBar(sys.stderr) if _is_tty(sys.stderr) else None
    try:
        history = _scrape(args, bar)
        warnings = history_warnings(history)
        text = json.dumps(history.to_dict(), indent=2, ensure_ascii=False) + "\n"
        if args.output:
            _write_atomic(pathlib.Path(args.output), text)
        else:
            sys.stdout.buffer.write(text.encode("utf-8"))
            sys.stdout.flush()
    except PageTooLarge as exc:
        status = EXIT_BAD_INPUT if getattr(exc, "reason", None) == "file" else EXIT_FETCH
        return _fail(bar, exc.code, too_large_message(exc), status)
    except (FetchFailed, BlockedByRobots) as exc:
        return _fail(bar, exc.code, exc.message, EXIT_FETCH)
    except ScrapeError as exc:
        return _fail(bar, exc.code, refusal_message(exc), EXIT_BAD_INPUT)
    except Refused as exc:  # a --registry/--forum-config file too large or nested too deep
        return _fail(bar, exc.code, exc.message, EXIT_BAD_INPUT)
    except OSError as exc:  # the output file
        from scraper.errors import os_error_text

        return _fail(bar, "output", "impossibile scrivere " + os_error_text(exc, args.output), EXIT_BAD_INPUT)
    except Exception as exc:  # last resort: one line, never a traceback (ARBITRO_DEBUG=1 shows it)
        if os.environ.get("ARBITRO_DEBUG"):
            raise
        return _fail(bar, "internal_error", f"{type(exc).__name__}: {exc}", EXIT_INTERNAL)
    if bar:
        bar.finish()
    for warning in warnings:  # a partial or doubtful history is printed, but never passed off as sure
        print(f"arbitro scrape: {warning}", file=sys.stderr)
    return 0


def _scrape(args: argparse.Namespace, bar: _ProgressBar | None) -> Any:
    from scraper.crawl import scrape
    from scraper.fetch import Fetcher

    from server.untrusted import check_toml_file

    cap = max_bytes(args)
    config = None
    if args.config:
        from scraper.platforms.config import load_config
        check_toml_file(args.config, "--forum-config", cap)
        config = load_config(pathlib.Path(args.config))
    if args.registry:
        check_toml_file(args.registry, "--registry", cap)
    policy = fetch_policy(args, cache_dir=None if args.no_cache else args.cache_dir, max_bytes=cap)
    with Fetcher(policy) as fetcher:
        is_url = any("://" in s for s in args.sources)
        return scrape(args.sources, platform=args.platform, config=config, fetcher=fetcher if is_url else None,
                      registry_file=args.registry, follow_sheets=not args.no_sheets,
                      progress=bar.update if bar else None, use_api=args.api and is_url,
                      saved_at=getattr(args, "saved_at", None), max_bytes=cap)


def refusal_message(exc: Exception) -> str:
    """A scraper error as the command line says it, with the option that lifts a host or address refusal."""
    message = str(exc)
    reason = getattr(exc, "reason", None)
    if reason == "host":
        message += "; --allow-host HOST lo ammette"
    elif reason == "address":
        message += "; --allow-private INDIRIZZO:PORTA lo ammette (solo un forum in rete locale o di prova)"
    elif reason == "port":
        message += "; --allow-host HOST:PORTA ammette quella porta"
    return message


def _fail(bar: _ProgressBar | None, code: str, message: str, status: int) -> int:
    if bar:
        bar.clear()
    print(f"arbitro scrape: errore [{code}]: {message}", file=sys.stderr)
    return status


def _write_atomic(path: pathlib.Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class _ProgressBar:
    """`[#####-----] 3/7 <url>` redrawn in place on a terminal's stderr (tqdm draws it; the total grows as the
    crawl learns the thread's page count)."""

    def __init__(self, stream: TextIO) -> None:
        import shutil

        from tqdm import tqdm

        # a terminal that says it has 0 columns and 0 rows (a bare pty) would hide the bar: give it a size
        size = shutil.get_terminal_size((100, 20))
        self.bar = tqdm(total=1, file=stream, ascii="-#", leave=False, ncols=size.columns or 100,
                        nrows=size.lines or 20, unit="pagina",
                        bar_format="[{bar:24}] {n_fmt}/{total_fmt} {desc}", delay=0)
        self.drawn = False

    def update(self, done: int, total: int, url: str) -> None:
        self.bar.total = max(total, done, 1)
        self.bar.n = done
        self.bar.set_description_str(url if len(url) <= 48 else "…" + url[-47:], refresh=False)
        self.bar.refresh()
        self.drawn = True

    def clear(self) -> None:
        self.bar.clear()

    def finish(self) -> None:
        self.bar.leave = self.drawn  # the last state stays on screen, as a finished line
        self.bar.close()
