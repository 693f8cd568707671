"""The arbitro.history/1 document: round trip, and malformed documents give HistoryFormatError only."""
from __future__ import annotations

import copy
import json
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine.history import CombatHistory, HistoryFormatError
from scraper.parse import parse_pages

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def history_dict() -> dict:
    pages = [((ROOT / f"fixtures/forumfree/topic_62345678_st{o}.html").read_bytes(),
              f"https://bleach-gdr.forumfree.it/?t=62345678&st={o}") for o in (0, 15)]
    return parse_pages(pages).to_dict()


def test_round_trip(history_dict):
    again = CombatHistory.from_dict(json.loads(json.dumps(history_dict)))
    assert again.to_dict() == history_dict


@pytest.mark.parametrize("path", ["registry", "posts.1", "posts.1.schema.stats", "posts.1.rolls.0.count", "thread"])
def test_null_where_required_is_a_format_error(history_dict, path):
    doc = copy.deepcopy(history_dict)
    *parents, last = path.split(".")
    node = doc
    for p in parents:
        node = node[int(p)] if p.isdigit() else node[p]
    node[int(last) if last.isdigit() else last] = None
    with pytest.raises(HistoryFormatError) as info:
        CombatHistory.from_dict(doc)
    assert "null" in str(info.value)


def _paths(node, prefix=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):
            yield prefix + (i,)
            yield from _paths(v, prefix + (i,))


JUNK = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=20),
                 st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_documents_replay_or_fail_by_name(history_dict, data):
    """Any mutation of a valid document: a HistoryFormatError, or an audit — never another exception."""
    paths = list(_paths(history_dict))
    doc = copy.deepcopy(history_dict)
    path = data.draw(st.sampled_from(paths))
    node = doc
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = data.draw(JUNK)
    try:
        history = CombatHistory.from_dict(doc)
    except HistoryFormatError:
        return
    audit = engine.replay(history, "guida")
    assert audit.to_dict()["format"] == "arbitro.audit/1"
