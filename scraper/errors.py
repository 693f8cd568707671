"""Named errors of the scraper: one root (`ScrapeError`) with a precise subclass per failure."""
from __future__ import annotations


import errno as _errno

# What the OS says, in Italian (strerror is the C library's English): the common errors of reading and writing files
# and of listening on a port.
_OS_ERRORS = {
    _errno.ENOENT: "file o cartella non trovati", _errno.EACCES: "permesso negato", _errno.EPERM: "operazione non permessa",
    _errno.EISDIR: "è una cartella, non un file", _errno.ENOTDIR: "un elemento del percorso non è una cartella",
    _errno.ENOSPC: "spazio su disco esaurito", _errno.EROFS: "file system in sola lettura",
    _errno.ENAMETOOLONG: "nome di file troppo lungo", _errno.ELOOP: "troppi collegamenti simbolici",
    _errno.EMFILE: "troppi file aperti", _errno.EIO: "errore di lettura o scrittura del disco",
    _errno.EADDRINUSE: "indirizzo già in uso", _errno.EADDRNOTAVAIL: "indirizzo non disponibile su questa macchina",
    _errno.EEXIST: "il file esiste già", _errno.EBUSY: "risorsa occupata", _errno.EFBIG: "file troppo grande",
    _errno.EINVAL: "argomento non valido",
}


def os_error_reason(exc: OSError) -> str:
    """What happened, in Italian, without the file's name."""
    return _OS_ERRORS.get(exc.errno or -1) or (exc.strerror or str(exc))


def os_error_text(exc: OSError, path: object = None) -> str:
    """`<file>: <what happened>` in Italian, naming the file the user named (`path`), else the exception's own."""
    what = os_error_reason(exc)
    name = path if path is not None else exc.filename
    return f"{name}: {what}" if name is not None else what


class ScrapeError(Exception):
    """Root of every scraper error. `.code` is a stable machine name, `str(err)` an Italian message."""

    code: str = "scrape_error"
    default_message: str = "errore durante la lettura del forum"

    def __init__(self, message: str | None = None) -> None:
        self.message = message or self.default_message
        super().__init__(self.message)


class HostNotAllowed(ScrapeError):
    code = "host_not_allowed"
    default_message = "host non consentito"


class NotAThread(ScrapeError):
    code = "not_a_thread"
    default_message = "la pagina non è una discussione del forum"


class TooManyPages(NotAThread):
    """A page whose pagination claims more pages than any thread has (scraper.platforms.base.MAX_PAGES)."""

    default_message = "la paginazione indica troppe pagine: non sembra una discussione"


class TooManyPosts(NotAThread):
    """More posts than any fight has (scraper.parse.MAX_POSTS): refused before the replay, which keeps a state per post."""

    code = "too_many_posts"
    default_message = "troppi messaggi: non sembra un combattimento"


class UnsupportedPlatform(ScrapeError):
    code = "unsupported_platform"
    default_message = "piattaforma del forum non supportata"


class PageTooLarge(ScrapeError):
    code = "page_too_large"
    default_message = "pagina troppo grande"


class FetchFailed(ScrapeError):
    """A fetch that failed for good (after retries); `.status` is the last HTTP status, if any."""

    code = "fetch_failed"
    default_message = "download della pagina non riuscito"

    def __init__(self, message: str | None = None, status: int | None = None, url: str | None = None) -> None:
        self.status = status
        self.url = url
        super().__init__(message)


class FetchTimeout(FetchFailed):
    code = "fetch_timeout"
    default_message = "tempo scaduto durante il download della pagina"


class BlockedByRobots(ScrapeError):
    code = "blocked_by_robots"
    default_message = "pagina esclusa da robots.txt"


class ParseError(ScrapeError):
    """Text that could not be read as the structure it should be."""

    code = "parse_error"
    default_message = "testo non interpretabile"


class PageTooDeep(ParseError):
    """Markup nested beyond the HTML reader's depth limit: the rest of the page would be lost, so nothing is read."""

    default_message = "pagina annidata troppo in profondità: il lettore HTML ne perderebbe il resto"


class DiceExpressionError(ParseError):
    code = "dice_expression"
    default_message = "espressione del dado non valida"


class SchemaError(ParseError):
    code = "schema"
    default_message = "schema del post non valido"


class RegistryFileError(ParseError):
    """A bad registry file; `.line` / `.column` locate the problem when known (1-based)."""

    code = "registry_file"
    default_message = "file del registro non valido"

    def __init__(self, message: str | None = None, *, line: int | None = None, column: int | None = None,
                 path: str | None = None) -> None:
        self.line = line
        self.column = column
        self.path = path
        where = []
        if path:
            where.append(path)
        if line is not None:
            where.append(f"riga {line}" + (f", colonna {column}" if column is not None else ""))
        text = message or self.default_message
        super().__init__(f"{text} ({'; '.join(where)})" if where else text)


__all__ = [
    "ScrapeError", "HostNotAllowed", "NotAThread", "TooManyPages", "TooManyPosts", "UnsupportedPlatform", "PageTooLarge", "FetchFailed",
    "FetchTimeout", "BlockedByRobots", "ParseError", "PageTooDeep", "DiceExpressionError", "SchemaError", "RegistryFileError",
    "os_error_reason", "os_error_text",
]
