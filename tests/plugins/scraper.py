"""pytest fixtures for the scraper tests."""


# --- fetch/crawl fixtures (tests/test_fetch*.py, test_crawl*.py, test_cli_scrape.py; reusable by others) ---

import pytest as _pytest


@_pytest.fixture()
def local_forum(fixtures_dir):
    """A started ForumServer (tests/forumserver.py) on 127.0.0.1:<free port>, serving nothing until told.
    (Not named `forum_server`: tests/plugins/browser.py has a session fixture of that name.)"""
    from tests.forumserver import ForumServer

    server = ForumServer(fixtures_dir)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@_pytest.fixture()
def sleeps():
    """A list the fetch policy's `sleep` appends to instead of sleeping (waits are asserted, not spent)."""
    return []


@_pytest.fixture()
def local_policy(tmp_path, sleeps):
    """A FetchPolicy for the local forum: 127.0.0.1 allowed, short timeouts, recorded sleeps, a temp cache."""
    from scraper.policy import FetchPolicy

    return FetchPolicy(allowed_hosts=("127.0.0.1",), private_allowlist=("127.0.0.1:*",), connect_timeout=2.0,
                       read_timeout=2.0, total_timeout=10.0, min_interval=0.0, retries=3, backoff=0.5,
                       cache_dir=tmp_path / "cache", sleep=sleeps.append)


@_pytest.fixture()
def local_fetcher(local_policy):
    """A Fetcher under `local_policy`."""
    from scraper.fetch import Fetcher

    fetcher = Fetcher(local_policy)
    try:
        yield fetcher
    finally:
        fetcher.close()


# --- platform adapter fixtures (tests/test_platforms*.py, test_parse*.py, test_htmltext.py) ---

import importlib.util as _ilu
import json as _json
import re as _re
from zoneinfo import ZoneInfo as _ZoneInfo

_ROME = _ZoneInfo("Europe/Rome")


def _load_generator(fixtures_dir):
    spec = _ilu.spec_from_file_location("arbitro_make_fixtures", fixtures_dir / "make_fixtures.py")
    module = _ilu.module_from_spec(spec)
    import sys as _sys

    _sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@_pytest.fixture(scope="session")
def fixture_generator(fixtures_dir):
    """fixtures/make_fixtures.py loaded as a module (build_all(), load_story())."""
    return _load_generator(fixtures_dir)


@_pytest.fixture(scope="session")
def fixture_manifest(fixtures_dir):
    """path → manifest entry (url, platform, skin, story, page, charset) of every committed fixture page."""
    return {e["path"]: e for e in _json.loads((fixtures_dir / "manifest.json").read_text(encoding="utf-8"))}


@_pytest.fixture(scope="session")
def fixture_page(fixtures_dir, fixture_manifest):
    """fixture_page(path) → (bytes, url) of one committed fixture page."""

    def get(path):
        return (fixtures_dir / path).read_bytes(), fixture_manifest[path]["url"]

    return get


class StoryExpect:
    """What a story says each rendered post must parse to, per platform (independent of the parser)."""

    def __init__(self, story):
        self.story = story
        self.users = story["_users"]

    @staticmethod
    def plain_label(label):
        return _re.sub(r"\[url=[^\]]*\](.*?)\[/url\]", r"\1", label)

    def iso(self, dt):
        return dt.replace(tzinfo=_ROME).isoformat()

    def posts(self, platform):
        """[{id, author, author_id, timestamp, role, edited_by, edited_at, answers, rolls: [(expr, faces, total,
        label, source, authentic)]}] in thread order (Forumotion: with its Game-Master posts)."""
        out = []
        for post in self.story["posts"]:
            u = self.users[post["author"]]
            typed, dice = [], []
            for b in post["blocks"]:
                if "typed" in b:
                    m = _re.search(r"(\d*d\d+(?:[+-]\d+)?)\s*=\s*(\d+)", b["typed"])
                    typed.append((m.group(1), None, int(m.group(2)), b["typed"][:m.start()].strip(),
                                  "typed_text", False))
                elif "dice" in b:
                    count, sides, const = (lambda m: (int(m.group(1) or 1), int(m.group(2)), int(m.group(3) or 0)))(
                        _re.fullmatch(r"(\d*)d(\d+)([+-]\d+)?", b["dice"]))
                    faces = tuple(b["faces"])
                    label = self.plain_label(b["label"])
                    if platform == "forumotion":
                        dice.append((f"{count}d{sides}", faces, sum(faces), label, "forumotion_gm", True))
                    else:
                        src = "phpbb_dice" if platform == "phpbb" else "forum_roller"
                        dice.append((b["dice"], faces, b["total"], label, src, sum(faces) + const == b["total"]))
            if platform == "forumotion":
                rolls = typed + dice
            else:
                order = [b for b in post["blocks"] if "typed" in b or "dice" in b]
                it_t, it_d = iter(typed), iter(dice)
                rolls = [next(it_t) if "typed" in b else next(it_d) for b in order]
            out.append({
                "id": str(post["id"]), "author": post["author"], "author_id": str(u["uid"]),
                "timestamp": self.iso(post["at"]), "role": "master" if u["group"] == "Master" else "player",
                "edited_by": post.get("edited_by"),
                "edited_at": self.iso(post["edited_at"]) if post.get("edited_at") else None,
                "answers": None, "rolls": rolls,
            })
            if platform == "forumotion" and dice:
                out.append({"id": str(post["id"] + 1), "author": "Game Master", "author_id": None,
                            "timestamp": self.iso(post["at"]), "role": "gm_bot", "edited_by": None,
                            "edited_at": None, "answers": str(post["id"]), "rolls": []})
        return out


def roll_tuple(roll):
    return (roll.expression, roll.faces, roll.total, roll.label, roll.source, roll.authentic)


def post_summary(post):
    return {"id": post.id, "author": post.author, "author_id": post.author_id, "timestamp": post.timestamp,
            "role": post.role, "edited_by": post.edited_by, "edited_at": post.edited_at, "answers": post.answers,
            "rolls": [roll_tuple(r) for r in post.rolls]}


@_pytest.fixture(scope="session")
def story_expect(fixture_generator):
    """story_expect(name) → StoryExpect for fixtures/stories/<name>.toml."""
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = StoryExpect(fixture_generator.load_story(name))
        return cache[name]

    return get
