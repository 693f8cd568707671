"""The element/class/id skeleton of a piece of markup: what fixture pages must share with real pages and templates."""
from __future__ import annotations

import re
from typing import Iterable

from lxml import etree

Skeleton = tuple  # ((tag, classes, id shape), (children…))


def skeleton(el: etree._Element, stop: Iterable[tuple[str | None, str]] = ()) -> Skeleton:
    """(tag, sorted classes, id with digits as #) of `el` and, recursively, of its element children; `tbody` is
    transparent (browsers insert it, saved DOMs have it, templates and generators may not); below an element
    matching a (tag, class) of `stop` (tag None: any; a post body, a profile, a name: content, not structure)
    nothing is kept."""
    stops = tuple(stop)
    tokens = (el.get("class") or "").split()
    node = (el.tag, " ".join(sorted(tokens)), re.sub(r"\d+", "#", el.get("id") or ""))
    if any((t is None or el.tag == t) and c in tokens for t, c in stops):
        return (node, ())
    return (node, tuple(_children(el, stops)))


def _children(el: etree._Element, stops: tuple[tuple[str | None, str], ...]) -> list[Skeleton]:
    out: list[Skeleton] = []
    for child in el:
        if not isinstance(child.tag, str):
            continue
        if child.tag == "tbody":
            out.extend(_children(child, stops))
        else:
            out.append(skeleton(child, stops))
    return out
