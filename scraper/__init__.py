"""The scraper: forum thread pages (fetched politely or saved) → a CombatHistory (arbitro.history/1)."""
from __future__ import annotations

from typing import Any

from .crawl import BadSource, CrawlResult, PageRecord, SheetRecord, crawl_thread, rescrape, scrape
from .errors import (BlockedByRobots, DiceExpressionError, FetchFailed, FetchTimeout, HostNotAllowed, NotAThread,
                     PageTooLarge, ParseError, RegistryFileError, SchemaError, ScrapeError, UnsupportedPlatform)
from .fetch import Fetcher, FetchResult
from .policy import FetchPolicy


def __getattr__(name: str) -> Any:
    # the parser is loaded on first use, so `import scraper.errors` stays light
    if name in ("parse_page", "parse_pages"):
        from . import parse
        return getattr(parse, name)
    raise AttributeError(f"module 'scraper' has no attribute {name!r}")


__all__ = [
    "scrape", "crawl_thread", "rescrape", "CrawlResult", "PageRecord", "SheetRecord", "parse_page", "parse_pages",
    "Fetcher", "FetchPolicy", "FetchResult", "ScrapeError", "HostNotAllowed", "NotAThread", "UnsupportedPlatform",
    "PageTooLarge", "FetchFailed", "FetchTimeout", "BlockedByRobots", "ParseError", "DiceExpressionError",
    "SchemaError", "RegistryFileError", "BadSource",
]
