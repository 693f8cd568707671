"""Which platform adapter reads a page: the adapter registry and detection (the adapters import base, not this)."""
from __future__ import annotations

from lxml import etree

from scraper.errors import NotAThread, UnsupportedPlatform
from scraper.platforms.base import Platform
from scraper.platforms.forumfree import ForumFree
from scraper.platforms.forumotion import Forumotion
from scraper.platforms.generic import Generic
from scraper.platforms.phpbb import PhpBB

# Most specific first; the generic fallback last.
ADAPTERS: tuple[Platform, ...] = (ForumFree(), Forumotion(), PhpBB(), Generic())
_BY_NAME = {a.name: a for a in ADAPTERS}


def get_platform(name: str) -> Platform:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UnsupportedPlatform(f"piattaforma non supportata: {name!r}") from None


def detect_platform(doc: etree._Element, url: str, forced: str | None = None) -> Platform:
    """The adapter for this page: `forced` (config/--platform), else the most confident one.

    Raises UnsupportedPlatform for an unknown forced name, NotAThread when no adapter (not even the
    generic one) sees a thread.
    """
    if forced and forced != "auto":
        return get_platform(forced)
    # The platform the URL names (its host, or phpBB's viewtopic.php) is asked first: when it is sure,
    # the others need not scan the page (each detection walks the whole document).
    known: dict[str, float] = {}
    hinted = next((a for a in ADAPTERS if a.claims_url(url)), None)
    if hinted is not None:
        score = known[hinted.name] = hinted.detect(doc, url)
        if score >= 0.9:
            return hinted
    best: tuple[float, Platform] | None = None
    for adapter in ADAPTERS:
        if adapter.name == "generic" and best is not None and best[0] >= 0.5:
            break  # a known platform is sure enough: skip the costly generic scan
        score = known[adapter.name] if adapter.name in known else adapter.detect(doc, url)
        if score > 0 and (best is None or score > best[0]):
            best = (score, adapter)
        if score >= 0.9:
            break  # unmistakable markup (ForumFree li.post#ee…, prosilver with memberlist links)
    if best is None or best[0] < 0.2:
        raise NotAThread("la pagina non sembra una discussione di un forum riconosciuto")
    return best[1]


__all__ = ["ADAPTERS", "detect_platform", "get_platform"]
