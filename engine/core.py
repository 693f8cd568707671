"""The replay fold: one ruleset step function folded over the posts, with per-post snapshots."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol, Sequence, runtime_checkable

from .evidence import edited_after_reply
from .fastdata import maker
from .gcpause import collector_paused
from .history import CombatHistory, Post, Registry, Thread, _to_jsonable
from .verdicts import Verdict, make_verdict

AUDIT_FORMAT = "arbitro.audit/1"


class EngineError(Exception):
    """Root of the engine's errors."""


class UnknownRuleset(EngineError):
    def __init__(self, ruleset_id: str, known: list[str]):
        super().__init__(f"regolamento sconosciuto {ruleset_id!r} (noti: {', '.join(known)})")
        self.ruleset_id = ruleset_id
        self.known = known


def internal_error(post_id: str, exc: Exception) -> Verdict:
    """The verdict of a post a ruleset crashed on (every ruleset: the guard is the replay's)."""
    return make_verdict("engine.internal_error",
                        f"Errore interno del motore su questo post ({type(exc).__name__}): post non valutato.",
                        "Arbitro", post_id, details={"error": f"{type(exc).__name__}: {exc}"})


class BadSetting(EngineError):
    """A ruleset setting has an unknown name or a value of the wrong kind."""


@dataclass(frozen=True)
class Setting:
    """A number or choice the rule text leaves open. `ours` = the default is our assumption."""

    name: str
    default: Any
    description: str
    ours: bool = True
    required: bool = False  # the text needs it and gives no value: verdicts that need it ask for a ruling


@runtime_checkable
class Ruleset(Protocol):
    """What a ruleset module provides. Adding a ruleset changes nothing in this file."""

    id: str
    title: str
    settings: tuple[Setting, ...]

    def initial_state(self, thread: Thread, registry: Registry, settings: dict[str, Any]) -> Any:
        """Immutable state before the first post."""

    def step(self, state: Any, post: Post) -> tuple[Any, list[Verdict]]:
        """One post: the new state and the verdicts about this post. Pure."""

    def characters(self, state: Any) -> dict[str, dict[str, Any]]:
        """JSON summary of every fighter (pv, pv_max, pe, pe_max, stacks, conditions, …)."""

    def next_hint(self, state: Any, character: str | None = None) -> dict[str, Any]:
        """The "your turn" hint: who posts next, incoming attacks, stats, stacks, Registro, dice tags."""

    # Optional: `conventions` (engine.recognise.Conventions), what its posts look like, so a fight no config assigns
    # can be recognised.
    # Optional (a ruleset may omit it): `rulings(state) -> [(code, post_id, decision), …]`, the master's
    # rulings seen so far; `replay` annotates the matching verdicts with `details["ruling"]`.


_RULESETS: dict[str, Ruleset] = {}


def register(ruleset: Ruleset) -> Ruleset:
    _RULESETS[ruleset.id] = ruleset
    return ruleset


def get_ruleset(ruleset_id: str) -> Ruleset:
    from . import rulesets  # noqa: F401  (registers the bundled rulesets)

    try:
        return _RULESETS[ruleset_id]
    except KeyError:
        raise UnknownRuleset(ruleset_id, sorted(_RULESETS)) from None


def available_rulesets() -> dict[str, Ruleset]:
    from . import rulesets  # noqa: F401

    return dict(sorted(_RULESETS.items()))


def resolve_settings(ruleset: Ruleset, overrides: dict[str, Any] | None) -> dict[str, Any]:
    known = {s.name: s for s in ruleset.settings}
    out = {name: s.default for name, s in known.items()}
    for name, value in (overrides or {}).items():
        if name not in known:
            raise BadSetting(f"il regolamento {ruleset.id!r} non ha l'impostazione {name!r} "
                             f"(ha: {', '.join(sorted(known)) or 'nessuna'})")
        out[name] = value
    return out


@dataclass(frozen=True)
class PostAudit:
    id: str
    author: str
    character: str | None
    url: str
    verdicts: tuple[Verdict, ...]
    state: dict[str, Any]  # characters summary after this post

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "author": self.author, "character": self.character, "url": self.url,
            "verdicts": [v.to_dict() for v in self.verdicts], "state": self.state,
        }


@dataclass(frozen=True)
class Snapshot:
    post_id: str
    key: Any  # what identifies the post's content (digest, or the Post itself)
    state: Any


@dataclass(frozen=True)
class Audit:
    ruleset: str
    thread: Thread
    posts: tuple[PostAudit, ...]
    characters: dict[str, dict[str, Any]]
    next: dict[str, Any]
    settings: dict[str, Any]
    snapshots: tuple[Snapshot, ...] = field(default=(), repr=False, compare=False)
    context_key: Any = field(default=None, repr=False, compare=False)
    replayed: int = 0  # posts stepped in this call (the rest came from snapshots)
    # a page-local audit (engine.provisional): only the verdicts whose inputs are all on the page, no state
    provisional: dict[str, Any] | None = None
    # evidence about posts no longer in the thread (post.deleted): kept by the service, given to replay()
    deleted: tuple[Verdict, ...] = ()
    # the posts' audits as the ruleset gave them, before the thread-wide annotations (rulings, edits, evidence):
    # what an incremental replay resumes from
    stepped: tuple[PostAudit, ...] = field(default=(), repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        doc = {
            "format": AUDIT_FORMAT,
            "ruleset": self.ruleset,
            "thread": _to_jsonable(self.thread),
            "settings": self.settings,
            "posts": [p.to_dict() for p in self.posts],
            "characters": self.characters,
            "next": self.next,
        }
        if self.provisional is not None:
            doc["provisional"] = self.provisional
        if self.deleted:
            doc["deleted_posts"] = [v.to_dict() for v in self.deleted]
        return doc


# one per post in the fold: built without the generated __init__'s object.__setattr__ per field (engine.fastdata)
_post_audit = maker(PostAudit)
_snapshot = maker(Snapshot)


def _annotate(pa: PostAudit, ruled: dict[tuple[str, str], str]) -> PostAudit:
    """The post's verdicts with the master's ruling on them (matched by code and post id), if any."""
    if not any((v.code, pa.id) in ruled for v in pa.verdicts):
        return pa
    verdicts = tuple(
        replace(v, details={**v.details, "ruling": ruled[(v.code, pa.id)]}) if (v.code, pa.id) in ruled else v
        for v in pa.verdicts)
    return replace(pa, verdicts=verdicts)


def _post_key(post: Post) -> Any:
    return getattr(post, "digest", None) or post


def replay(
    history: CombatHistory | dict[str, Any],
    ruleset: str | Ruleset = "guida",
    registry: Registry | None = None,
    *,
    settings: dict[str, Any] | None = None,
    previous: Audit | None = None,
    evidence: Sequence[Verdict] = (),
) -> Audit:
    """Replay `history` under `ruleset`. With `previous` (an audit of an earlier version of the same
    thread under the same ruleset, registry and settings) only posts after the last unchanged one
    are stepped. `evidence`: verdicts from earlier readings of the thread (changed rolls, deleted posts; the
    service keeps them), attached to their posts (attach_evidence)."""
    if isinstance(history, dict):
        history = CombatHistory.from_dict(history)
    rs = get_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
    resolved = resolve_settings(rs, settings)
    reg = history.registry.merged(registry) if registry is not None else history.registry
    context_key = (rs.id, repr(sorted(resolved.items())), repr(reg))

    start = 0
    state = None
    post_audits: list[PostAudit] = []
    snapshots: list[Snapshot] = []
    if previous is not None and previous.context_key == context_key and previous.snapshots:
        for i, (snap, post) in enumerate(zip(previous.snapshots, history.posts)):
            if snap.post_id != post.id or snap.key != _post_key(post):
                break
            start = i + 1
        if start:
            state = previous.snapshots[start - 1].state
            post_audits = list(previous.stepped[:start])
            snapshots = list(previous.snapshots[:start])
    if state is None:
        state = rs.initial_state(history.thread, reg, resolved)

    step, characters = rs.step, rs.characters
    add_audit, add_snapshot = post_audits.append, snapshots.append
    # Every object the fold makes is kept (a snapshot per post, for incremental replays) and none makes a reference
    # cycle (states are immutable trees): the cyclic collector would only re-traverse the growing heap of survivors,
    # a quarter of a long replay's time (see collector_paused).
    with collector_paused():
        for post in history.posts[start:]:
            key = getattr(post, "digest", None) or post  # _post_key
            try:
                state, verdicts = step(state, post)
            except Exception as exc:  # a ruleset's bug must not lose the audit: the post is skipped and says why
                verdicts = [internal_error(post.id, exc)]
            add_audit(_post_audit(post.id, post.author, post.character, post.url, tuple(verdicts), characters(state)))
            add_snapshot(_snapshot(post.id, key, state))

    rulings_of = getattr(rs, "rulings", None)
    ruled = {(c, p): d for c, p, d in (rulings_of(state) if callable(rulings_of) else ())}
    shown = tuple(_annotate(pa, ruled) for pa in post_audits) if ruled else tuple(post_audits)
    # evidence across posts (an edit after the next post): over the whole thread, so an incremental replay that
    # kept a post's audit still learns of the reply that came after it
    edits = edited_after_reply(history.posts)
    if edits:
        shown = tuple(replace(pa, verdicts=pa.verdicts + (edits[pa.id],)) if pa.id in edits else pa for pa in shown)

    return attach_evidence(Audit(
        ruleset=rs.id,
        thread=history.thread,
        posts=shown,
        characters=rs.characters(state),
        next=rs.next_hint(state),
        settings=resolved,
        snapshots=tuple(snapshots),
        context_key=context_key,
        replayed=len(history.posts) - start,
        stepped=tuple(post_audits),
    ), evidence)


def attach_evidence(audit: Audit, evidence: Sequence[Verdict]) -> Audit:
    """The audit with evidence verdicts from outside the history (the service's earlier readings, engine.evidence):
    on their post, after its own verdicts; those of posts no longer in the thread in `Audit.deleted`."""
    if not evidence:
        return audit
    by_post: dict[str, list[Verdict]] = {}
    for v in evidence:
        by_post.setdefault(v.post, []).append(v)
    present = {pa.id for pa in audit.posts}
    posts = tuple(replace(pa, verdicts=pa.verdicts + tuple(by_post[pa.id])) if pa.id in by_post else pa
                  for pa in audit.posts)
    gone = tuple(v for v in evidence if v.post not in present)
    return replace(audit, posts=posts, deleted=audit.deleted + gone)
