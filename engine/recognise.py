"""Which ruleset a fight's posts are written for, from each ruleset's own post conventions (pools, stats, dice, actions)."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Iterable, Mapping

from .history import CombatHistory

# How much each kind of evidence counts: the pools of the post schema are the strongest sign (PV/PE, PV/Cosmo, PF/PD,
# PS/PF/PR), dice and action words are shared by several rulesets.
_WEIGHTS = {"pools": 4.0, "stats": 1.0, "dice": 2.0, "actions": 2.0}
MIN_SCORE = 0.5  # below this no ruleset fits well enough to be named
MIN_LEAD = 0.15  # the best must beat the second by this much, else the posts fit two rulesets alike
_DIE = re.compile(r"\d*d(\d+)", re.IGNORECASE)


def fold(text: str) -> str:
    """Lower case, no accents, single spaces: "Reattività" and "reattivita" are one word."""
    s = unicodedata.normalize("NFKD", text)
    return " ".join("".join(c for c in s if not unicodedata.combining(c)).lower().split())


@dataclass(frozen=True)
class Conventions:
    """What a ruleset's posts look like, as its rule text asks them to be written (each ruleset declares its own)."""

    pools: tuple[str, ...]  # the schema's resources ("PV", "PE"), in the ruleset's order
    dice: frozenset[int]  # die sides its rolls use
    actions: tuple[str, ...]  # words a roll label starts with, folded ("attacco", "schivata")
    stats: frozenset[str] = frozenset()  # the schema's stats, folded

    @classmethod
    def of(cls, pools: Iterable[str], dice: Iterable[int | None], actions: Iterable[str],
           stats: Iterable[str] = ()) -> Conventions:
        return cls(tuple(dict.fromkeys(pools)), frozenset(d for d in dice if d), tuple(sorted({fold(a) for a in actions})),
                   frozenset(fold(s) for s in stats))


@dataclass(frozen=True)
class Fit:
    """How well one ruleset's conventions explain the posts: a score in [0, 1] and the evidence in Italian."""

    ruleset: str
    score: float
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Recognition:
    """Every ruleset's fit, best first; `ruleset` is the one the posts clearly fit, or None."""

    fits: tuple[Fit, ...]

    @property
    def ruleset(self) -> str | None:
        if not self.fits or self.fits[0].score < MIN_SCORE:
            return None
        if len(self.fits) > 1 and self.fits[0].score - self.fits[1].score < MIN_LEAD:
            return None
        return self.fits[0].ruleset

    def fit(self, ruleset: str) -> Fit | None:
        return next((f for f in self.fits if f.ruleset == ruleset), None)

    def says(self, ruleset: str) -> str:
        """One Italian line: why the posts look like `ruleset`."""
        f = self.fit(ruleset)
        if f is None:
            return ruleset
        return f"{ruleset} ({', '.join(f.evidence) or 'nessun segno'})"


def _features(history: CombatHistory) -> tuple[list[frozenset[str]], list[str], list[int], list[str]]:
    pools, stats, dice, labels = [], [], [], []
    for post in history.posts:
        if post.role != "player":
            continue
        sch = post.schema
        if sch is not None:
            if sch.resources:
                pools.append(frozenset(sch.resources))
            stats.extend(fold(s) for s in sch.stats)
        for r in post.rolls:
            dice.extend(int(s) for s in _DIE.findall(r.expression or ""))
            if r.label:
                labels.append(fold(r.label))
    return pools, stats, dice, labels


def _fit(rid: str, conv: Conventions, pools: list[frozenset[str]], stats: list[str], dice: list[int],
         labels: list[str]) -> Fit:
    parts: dict[str, float] = {}
    evidence: list[str] = []
    if pools:
        own = frozenset(conv.pools)
        parts["pools"] = sum(len(p & own) / len(p | own) for p in pools) / len(pools)
        same = sum(1 for p in pools if p <= own)
        evidence.append(f"schema {'/'.join(conv.pools)} in {same} post su {len(pools)}")
    if stats:
        hit = sum(1 for s in stats if s in conv.stats)
        parts["stats"] = hit / len(stats)
    if dice:
        hit = sum(1 for d in dice if d in conv.dice)
        parts["dice"] = hit / len(dice)
        evidence.append(f"dadi {hit} su {len(dice)}")
    if labels:
        hit = sum(1 for lab in labels if any(lab.startswith(a) for a in conv.actions))
        parts["actions"] = hit / len(labels)
        evidence.append(f"azioni {hit} su {len(labels)}")
    total = sum(_WEIGHTS[k] for k in parts)
    score = sum(_WEIGHTS[k] * v for k, v in parts.items()) / total if total else 0.0
    return Fit(rid, round(score, 3), tuple(evidence))


def recognise(history: CombatHistory, conventions: Mapping[str, Conventions]) -> Recognition:
    """Each ruleset's fit to the posts (players' posts only; the master's follow no schema), best first."""
    features = _features(history)
    fits = [_fit(rid, conv, *features) for rid, conv in conventions.items()]
    return Recognition(tuple(sorted(fits, key=lambda f: (-f.score, f.ruleset))))


__all__ = ["Conventions", "Fit", "Recognition", "recognise", "MIN_SCORE", "MIN_LEAD"]
