"""pytest fixtures for the server tests: a tiny test ruleset, history builders, the app, a live waitress server."""
from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator

import pytest

from engine.core import Setting, register
from engine.history import CombatHistory, Post, PostSchema, Resource, Roll, Thread
from engine.verdicts import Verdict

TINY = "prova-server"


@dataclass(frozen=True)
class _TinyState:
    chars: tuple[tuple[str, int, int, int, int, tuple[tuple[str, int], ...]], ...] = ()
    last: str | None = None
    order: tuple[str, ...] = ()


class TinyRuleset:
    """A small, deterministic ruleset for the service's tests (the real rulesets are tested by their owners).

    PV/PE follow the post schema; a roll whose total is below 5 is a warning, a body containing "ERRORE" an
    error that quotes the post (as real verdicts quote labels); "Sbilanciamento" in a body gives its author
    2 stacks."""

    id = TINY
    title = "Ruleset di prova del servizio"
    settings = (Setting("soglia", 5, "tiro minimo senza avviso", ours=True),)

    def initial_state(self, thread: Any, registry: Any, settings: dict[str, Any]) -> _TinyState:
        return _TinyState()

    def step(self, state: _TinyState, post: Post) -> tuple[_TinyState, list[Verdict]]:
        who = post.character or post.author
        chars = {c[0]: c for c in state.chars}
        name, pv, pv_max, pe, pe_max, stacks = chars.get(who, (who, 0, 0, 0, 0, ()))
        if post.schema:
            r = post.schema.resources
            if "PV" in r:
                pv, pv_max = r["PV"].current, r["PV"].max or pv_max
            if "PE" in r:
                pe, pe_max = r["PE"].current, r["PE"].max or pe_max
        verdicts = []
        for i, roll in enumerate(post.rolls):
            if roll.total is not None and roll.total < 5:
                verdicts.append(Verdict("prova.tiro_basso", "warning", f"tiro basso di {who}", "Prova › Tiri",
                                        post.id, roll=i, expected=5, found=roll.total))
        if "ERRORE" in post.body:
            verdicts.append(Verdict("prova.errore", "error", f"errore di {who}: {post.body[:80]}",
                                    "Prova › Errori", post.id, expected=0, found=1))
        if "Sbilanciamento" in post.body:
            stacks = (("Sbilanciamento", 2),)
        chars[who] = (name, pv, pv_max, pe, pe_max, stacks)
        order = state.order if who in state.order else state.order + (who,)
        return _TinyState(tuple(sorted(chars.values())), who, order), verdicts

    def characters(self, state: _TinyState) -> dict[str, dict[str, Any]]:
        return {c[0]: {"pv": c[1], "pv_max": c[2], "pe": c[3], "pe_max": c[4],
                       "stacks": {k: {"count": n, "expires": "turno successivo"} for k, n in c[5]}}
                for c in state.chars}

    def next_hint(self, state: _TinyState, character: str | None = None) -> dict[str, Any]:
        nxt = character
        if nxt is None and state.order:
            others = [c for c in state.order if c != state.last]
            nxt = others[0] if others else state.order[0]
        return {"character": nxt, "incoming": [],
                "dice_tags": [{"label": "Attacco", "tag": f"[dice=1d12]Attacco ({nxt} vs ?)[/dice]"}]}


@pytest.fixture()
def tiny_ruleset():
    """The test ruleset, registered only while a server test runs (other areas' tests list the real ones)."""
    from engine.core import _RULESETS

    rs = register(TinyRuleset())
    yield rs
    _RULESETS.pop(TINY, None)


def make_post(i: int, author: str, *, pv: int = 50, pe: int = 40, body: str = "Attacco!", total: int | None = 9,
              url: str = "https://gdr.forumfree.it/?t=1", page: int = 1) -> Post:
    rolls = ()
    if total is not None:
        rolls = (Roll("1d12+2", 1, 12, 2, (total - 2,), total, "Attacco", None, "forum_roller", True),)
    return Post(
        id=str(1000 + i), page=page, url=f"{url}#entry{1000 + i}", author=author, author_id=str(len(author)),
        timestamp=f"2024-01-01T10:{i % 60:02d}:00+01:00", body=body, rolls=rolls, character=author,
        schema=PostSchema(resources={"PV": Resource(pv, 52), "PE": Resource(pe, 45)}),
        digest=f"d{i}-{author}-{pv}-{pe}-{body}",
    )


def make_history(n: int = 6, *, url: str = "https://gdr.forumfree.it/?t=1", title: str = "Duello di prova",
                 fighters: tuple[str, str] = ("Hollow", "Quincy"), bodies: dict[int, str] | None = None) -> CombatHistory:
    posts = []
    for i in range(n):
        who = fighters[i % 2]
        body = (bodies or {}).get(i, f"Turno {i + 1} di {who}")
        posts.append(make_post(i, who, pv=52 - i * 2, pe=45 - i, body=body, total=3 if i % 5 == 4 else 9, url=url,
                               page=1 + i // 15))
    thread = Thread(url=url, platform="forumfree", host="gdr.forumfree.it", thread_id="1", title=title,
                    pages=1 + (n - 1) // 15, fetched_at="2024-01-02T00:00:00Z", skin="ff-current")
    return CombatHistory(thread=thread, posts=tuple(posts))


@pytest.fixture()
def history_factory():
    return make_history


@pytest.fixture()
def server_config(tmp_path, tiny_ruleset) -> dict[str, Any]:
    return {
        "database": str(tmp_path / "arbitro.sqlite3"), "cache_dir": str(tmp_path / "cache"),
        "default_ruleset": TINY, "allowed_hosts": ["127.0.0.1", "*.forumfree.it"], "private_allowlist": ["127.0.0.1:*"],
        "fetch_min_interval": 0.0, "fetch_retries": 0, "fetch_backoff": 0.01, "fetch_read_timeout": 3.0,
        "fetch_connect_timeout": 2.0, "obey_robots": False, "follow_sheets": False, "failure_backoff": 0.0,
        "cors_origins": ["https://*.forumfree.it"], "secret_key": "s3greto-di-prova",
    }


@pytest.fixture()
def app(server_config):
    from server.app import create_app

    application = create_app(server_config)
    yield application
    application.extensions["arbitro"].close()


@pytest.fixture()
def client(app):
    return app.test_client()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """The app on waitress in a thread, on 127.0.0.1:<free port> (the production server, as `arbitro serve`)."""

    def __init__(self, app: Any, threads: int = 8) -> None:
        from waitress.server import create_server

        self.app = app
        self.server = create_server(app, host="127.0.0.1", port=0, threads=threads)
        self.port = self.server.effective_port
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self._run, daemon=True)
        self._stopping = False

    def _run(self) -> None:
        try:
            self.server.run()
        except OSError:
            if not self._stopping:  # closing the socket under the select loop is how waitress stops here
                raise

    def start(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("live server did not start")

    def stop(self) -> None:
        self._stopping = True
        self.server.close()
        self.thread.join(timeout=5)


@pytest.fixture()
def live_server(app) -> Iterator[LiveServer]:
    srv = LiveServer(app).start()
    yield srv
    srv.stop()


def wait_until(pred, timeout: float = 10.0, interval: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(interval)
    return False


__all__ = ["TINY", "TinyRuleset", "make_history", "make_post", "LiveServer", "wait_until", "free_port"]


FF_TID = 62345678
FF_HOST = "bleach-gdr.forumfree.it"
FF_PAGES = ("forumfree/topic_62345678_st0.html", "forumfree/topic_62345678_st15.html")


@pytest.fixture()
def ff(fixtures_dir):
    """The hollow_vs_quincy ForumFree thread (two pages) on a local forum server; `ff.paths`, `ff.thread_url`."""
    from tests.forumserver import ForumServer

    srv = ForumServer(fixtures_dir, rewrite_hosts=[FF_HOST])
    srv.start()
    srv.paths = srv.add_thread("forumfree", FF_TID, [fixtures_dir / p for p in FF_PAGES])
    srv.thread_url = srv.url(f"/?t={FF_TID}")
    yield srv
    srv.stop()
