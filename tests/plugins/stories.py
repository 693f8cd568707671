"""pytest fixtures for the fixture stories: render a story on a forum platform, parse it back, audit it, compare."""
from __future__ import annotations

import sys
from collections import Counter
from typing import Any, Callable

import pytest

from engine import replay
from engine.core import Audit
from engine.history import Registry
from scraper import parse
from tests.plugins.common import FIXTURES

sys.path.insert(0, str(FIXTURES))
import make_fixtures  # noqa: E402  (fixtures/make_fixtures.py renders the stories)

# (make_fixtures.Site, its renderer), as the test modules' SITES map them by platform
SiteEntry = tuple[Any, Callable[..., list[tuple[Any, str, bytes, Any]]]]


def story_sites(page_size: int, *, forumfree: tuple[str, str], phpbb: tuple[str, str],
                forumotion: tuple[str, str, str]) -> dict[str, SiteEntry]:
    """SITES by platform: (host, forum name) on ForumFree (current skin) and phpBB (prosilver), (skin, host, forum
    name) on Forumotion; `page_size` posts a page."""
    return {
        "forumfree": (make_fixtures.Site("forumfree", "ff-current", *forumfree, page_size),
                      make_fixtures.render_forumfree),
        "phpbb": (make_fixtures.Site("phpbb", "prosilver", *phpbb, page_size), make_fixtures.render_phpbb),
        "forumotion": (make_fixtures.Site("forumotion", *forumotion, page_size), make_fixtures.render_forumotion),
    }


@pytest.fixture(scope="module")
def story(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The story named by the test module's `STORY` (fixtures/stories/<STORY>)."""
    return make_fixtures.load_story(request.module.STORY)


def story_pages(story: dict[str, Any], site: SiteEntry) -> list[tuple[bytes, str]]:
    """The story's pages as the platform renders them: (html, url) in thread order."""
    meta, render = site
    return [(data, url) for _, url, data, _ in render(story, meta)]


def audit_story(story: dict[str, Any], site: SiteEntry, ruleset: str, registry: Registry,
                settings: dict[str, Any] | None = None) -> Audit:
    """Render, parse (with the registry) and replay the story; it must span more than one page."""
    pages = story_pages(story, site)
    assert len(pages) >= 2  # the story spans pages
    history = parse.parse_pages(pages, registry=registry)
    return replay(history, ruleset, registry, settings=settings)


def assert_verdicts_as_expected(story: dict[str, Any], audit: Audit, platform: str) -> None:
    """Every post survives parsing; every expected verdict is there, and no error or warning beyond them."""
    ids = [str(p["id"]) for p in story["posts"]]
    by_post = {p.id.lstrip("p"): p for p in audit.posts}
    assert set(ids) <= set(by_post), f"posts lost in parsing on {platform}"
    expected = Counter((str(e["post"]), e["code"]) for e in story["expected"])
    found = Counter((pid, v.code) for pid, pa in by_post.items() for v in pa.verdicts
                    if v.severity in ("error", "warning") or (pid, v.code) in expected)
    # every expected verdict is there...
    missing = expected - found
    assert not missing, f"{platform}: missing {sorted(missing)}"
    # ...and no error or warning beyond the deliberate mistakes (and the consequences they name)
    extra = {k for k in found if k not in expected}
    assert not extra, f"{platform}: unexpected {sorted(extra)}"


def assert_registry_file_agrees(story: dict[str, Any], site: SiteEntry, ruleset: str, registry_toml: str,
                                registry: Registry) -> None:
    """The registry written as a master's TOML file (scraper.registry_file) audits the story like `registry`."""
    from scraper import registry_file
    pages = story_pages(story, site)
    from_file = registry_file.parse_registry(registry_toml)
    a = replay(parse.parse_pages(pages, registry=from_file), ruleset, from_file)
    b = replay(parse.parse_pages(pages, registry=registry), ruleset, registry)
    assert a.characters == b.characters
    assert [[v.code for v in p.verdicts] for p in a.posts] == [[v.code for v in p.verdicts] for p in b.posts]
