"""Link forms: a URL's origin, and one key per sheet whatever form a post links it in (crawl and parse share them)."""
from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit


def origin(url: str) -> tuple[str, int | None]:
    """Host and port (None for the scheme's default): another port on the same hostname is another host."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = -1  # an unreadable port matches no origin but another unreadable one: refused by the fetcher anyway
    if port == {"http": 80, "https": 443}.get(parts.scheme.lower()):
        port = None
    return (parts.hostname or "").lower(), port


_FIRST_PAGE = re.compile(r"^(/t\d+)p0(?=-)")  # Forumotion "/t12p0-slug" is "/t12-slug"


def sheet_url(url: str) -> str:
    """The URL a sheet is fetched at: no fragment (`#entry123`), no first-page offset (`&st=0`, `&start=0`)."""
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = [(k, v) for k, v in pairs if not (k.lower() in ("st", "start") and v in ("0", ""))]
    path = _FIRST_PAGE.sub(r"\1", parts.path) or "/"
    # the query is rebuilt only when an offset went: otherwise it stays byte for byte as written
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path,
                       urlencode(query) if len(query) != len(pairs) else parts.query, ""))


def sheet_key(url: str) -> str:
    """One key per sheet whatever form a post links it in: `/index.php?showtopic=N`, `/index.php?t=N` and `/?t=N`
    are the same ForumFree/Invision topic; a default port is no port."""
    parts = urlsplit(url)
    host, port = origin(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    path = parts.path or "/"
    if path in ("/", "/index.php"):
        query = [("t" if k.lower() in ("showtopic", "t") else k, v) for k, v in query]
        if any(k == "t" for k, _ in query):
            path = "/"
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme.lower(), netloc, path, urlencode(sorted(query)), ""))


@lru_cache(maxsize=4096)
def sheet_link_key(link: str, base: str = "") -> str:
    """The key of the sheet a post's link (relative to `base`, the post's page) names: the key crawl fetched it
    under, so a character's `sheet_url` and any form of the same link meet."""
    try:
        return sheet_key(sheet_url(urljoin(base, link) if base else link))
    except ValueError:  # an unreadable link (bad port, bad IPv6 host) is only itself
        return link


__all__ = ["origin", "sheet_url", "sheet_key", "sheet_link_key"]
