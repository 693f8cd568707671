"""pytest fixtures for the engine tests: a tiny builder of `CombatHistory` objects from short Python descriptions.

    f = Fight(registry=reg)
    f.post("Hollow", pv=52, pe=45, stats={"Destrezza": 6, "Costituzione": 4},
           rolls=[R("1d12+8", 9, "Attacco [Artigli] (Hollow vs Quincy): (+2 [Raggio Corto] +6 [Destrezza])")])
    f.post("Quincy", pv=40, rolls=[R("1d24+6", 12, "Protezione (Quincy vs Hollow): (+2 [Bonus Protezione] +4 [Destrezza])")])
    audit = f.replay()
"""
from __future__ import annotations

import re
from typing import Any, Iterable

import pytest

from engine.core import Audit, replay
from engine.history import (
    Character, CombatHistory, DamageCalc, DamageTerm, Post, PostSchema, RegistroEntry, Registry, Resource, Roll, Stat,
    Technique, Thread,
)

THREAD = Thread(url="https://gdr.example.forumfree.it/?t=1", platform="forumfree", host="gdr.example.forumfree.it",
                thread_id="1", title="Hollow vs Quincy", pages=1, fetched_at="2026-11-30T12:00:00Z")

_EXPR = re.compile(r"^(\d*)d(\d+)([+-]\d+)?$")
_REG = re.compile(r"^\s*([+-]\s*\d+)\s+(PV|PE)\s*(?:\[(.*)\])?\s*$")


def R(expression: str, faces: int | Iterable[int] | None, label: str, *, total: int | None = None,
      source: str = "forum_roller") -> Roll:
    """A roll as a forum renders it; the label is parsed with the scraper's own parser."""
    from scraper.dicetag import make_roll

    if isinstance(faces, int):
        faces = (faces,)
    face_t = tuple(faces) if faces is not None else None
    m = _EXPR.match(expression)
    assert m, expression
    const = int(m.group(3) or 0)
    if total is None and face_t is not None:
        total = sum(face_t) + const
    return make_roll(expression=expression, faces=face_t, total=total, label=label, source=source)


def stats_of(stats: dict[str, Any] | None) -> dict[str, Stat]:
    out = {}
    for k, v in (stats or {}).items():
        out[k] = Stat(*v) if isinstance(v, tuple) else Stat(int(v))
    return out


def registro_of(lines: Iterable[str] | None) -> tuple[RegistroEntry, ...] | None:
    if lines is None:
        return None
    out = []
    for line in lines:
        m = _REG.match(line)
        assert m, line
        out.append(RegistroEntry(int(m.group(1).replace(" ", "")), m.group(2), m.group(3) or "", line))
    return tuple(out)


def calc(target: str | None, result: int | None, *, technique: str | None = None, actor: str | None = None,
         terms: Iterable[tuple[str, str, float]] = (), kind: str = "normale", raw: str = "", resource: str = "PV") -> DamageCalc:
    """A Calcolo dei Danni: terms like ("+", "Potenza", 14), ("-", "Resistenza", 6), ("/", "", 2)."""
    t = tuple(DamageTerm(op, n, float(v)) for op, n, v in terms)  # type: ignore[arg-type]
    return DamageCalc(raw=raw or f"Calcolo {technique or ''} su {target}: {result}", technique=technique, actor=actor,
                      target=target, kind=kind, terms=t, result=result, resource=resource)


def registry(characters: dict[str, dict[str, Any]] | None = None,
             techniques: dict[str, dict[str, Any]] | None = None) -> Registry:
    chars = {}
    for name, d in (characters or {}).items():
        res = {k: Resource(v, v) for k, v in (d.get("resources") or {}).items()}
        chars[name] = Character(name=name, player=d.get("player"), stats=stats_of(d.get("stats")), resources=res,
                                techniques=tuple(d.get("techniques", ())), extra=dict(d.get("extra", {})))
    techs = {name: Technique(name=name, **d) for name, d in (techniques or {}).items()}
    return Registry(characters=chars, techniques=techs, sources=("test",))


class Fight:
    """Builds a CombatHistory post by post."""

    def __init__(self, registry: Registry | None = None, thread: Thread = THREAD):
        self.registry = registry or Registry()
        self.thread = thread
        self.posts: list[Post] = []

    def post(self, author: str, *, character: str | None = None, pv: int | tuple[int, int] | None = None,
             pe: int | tuple[int, int] | None = None, stats: dict[str, Any] | None = None,
             registro: Iterable[str] | None = (), rolls: Iterable[Roll] = (), damage: Iterable[DamageCalc] = (),
             body: str = "", role: str = "player", schema: bool = True, missing: tuple[str, ...] = (),
             id: str | None = None, page: int = 1, answers: str | None = None) -> Post:
        pid = id or str(100 + len(self.posts))
        sch = None
        if schema and role == "player":
            resources = {}
            for key, val in (("PV", pv), ("PE", pe)):
                if val is not None:
                    resources[key] = Resource(*val) if isinstance(val, tuple) else Resource(val)
            sch = PostSchema(sheet_url="https://gdr.example.forumfree.it/?t=9", resources=resources,
                             stats=stats_of(stats), registro=registro_of(registro), missing=missing)
        post = Post(id=pid, page=page, url=f"{self.thread.url}#entry{pid}", author=author, author_id=None,
                    timestamp=None, role=role, body=body, schema=sch, rolls=tuple(rolls), damage=tuple(damage),  # type: ignore[arg-type]
                    character=character or (author if role == "player" else None), answers=answers)
        self.posts.append(post)
        return post

    def master(self, body: str) -> Post:
        return self.post("Master", role="master", body=body, schema=False)

    def history(self) -> CombatHistory:
        return CombatHistory(thread=self.thread, posts=tuple(self.posts), registry=self.registry)

    def replay(self, **kw: Any) -> Audit:
        return replay(self.history(), "guida", **kw)


def codes(audit: Audit, post: str | None = None, *, severity: str | None = None) -> list[str]:
    """Verdict codes of one post (or all posts), in order."""
    out = []
    for p in audit.posts:
        if post is None or p.id == post:
            out.extend(v.code for v in p.verdicts if severity is None or v.severity == severity)
    return out


def find(audit: Audit, code: str, post: str | None = None) -> list[Any]:
    return [v for p in audit.posts for v in p.verdicts if v.code == code and (post is None or p.id == post)]


@pytest.fixture()
def fight():
    """A fresh `Fight` builder (pass a registry with `fight.registry = registry(...)`)."""
    return Fight()


# --------------------------------------------------------------------------- cosmo / poteri / starfinder unit tests
# Their posts are built by hand and their verdicts read by post index (0 = the first post of the audit).

def plain_roll(expr: str, faces: tuple[int, ...] | None, label: str, authentic: bool = True) -> Roll:
    """A roll built field by field (no scraper): `authentic=False` marks it as typed by hand."""
    m = re.fullmatch(r"(\d+)d(\d+)([+-]\d+)?", expr)
    assert m, expr
    count, sides, const = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
    return Roll(expression=expr, count=count, sides=sides, constant=const, faces=faces,
                total=None if faces is None else sum(faces) + const, label=label, tag=None,
                source="forum_roller", authentic=authentic, problems=() if authentic else ("typed_by_hand",))


def post_codes(audit: Audit, i: int) -> list[str]:
    """Verdict codes of the i-th post, in order."""
    return [v.code for v in audit.posts[i].verdicts]


def post_verdict(audit: Audit, i: int, code: str) -> Any:
    """The first verdict `code` of the i-th post (fails the test when there is none)."""
    found = [v for v in audit.posts[i].verdicts if v.code == code]
    assert found, f"{code} not in {post_codes(audit, i)}"
    return found[0]


def assert_explained(audit: Audit) -> None:
    """Every verdict names its rule and says something; the audit serialises."""
    for p in audit.posts:
        for v in p.verdicts:
            assert v.rule and v.message
    audit.to_dict()
