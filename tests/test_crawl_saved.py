"""Saved pages: relative dates read against the save time (--saved-at, the page's save date, the mtime) and
`thread.pages_read` telling which pages of the thread were really read."""
from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings, strategies as st

from engine.history import CombatHistory
from scraper.crawl import (BadSavedAt, BadSource, crawl_thread, missing_pages, missing_pages_warning,
                           parse_saved_at, saved_page_date, scrape)
from scraper.errors import ScrapeError

FF = "bleach-gdr.forumfree.it"
ROME_WINTER = timezone(timedelta(hours=1))
SAVED = "2026-11-09T12:00:00+01:00"  # the story's fetch time: "Oggi" is 9 November, "Ieri" 8 November
# post id → (date shown on the HTML page, the full date api.php gives)
RELATIVE = {"600270": "2026-11-08T21:40:00+01:00", "600280": "2026-11-09T10:05:00+01:00"}


def _ff(fixtures_dir, name):
    return str(fixtures_dir / "forumfree" / name)


def _times(history):
    return {p.id: p.timestamp for p in history.posts}


def _copy(fixtures_dir, tmp_path, name, *, mtime=None, prefix=b""):
    """A copy of a ForumFree fixture with a chosen mtime and, optionally, bytes inserted after the doctype."""
    data = (fixtures_dir / "forumfree" / name).read_bytes()
    if prefix:
        head, sep, rest = data.partition(b"\n")
        data = head + sep + prefix + rest
    dest = tmp_path / name
    dest.write_bytes(data)
    if mtime is not None:
        stamp = datetime.fromisoformat(mtime).timestamp()
        os.utime(dest, (stamp, stamp))
    return str(dest)


# --- relative dates -----------------------------------------------------------------------------------

def test_html_and_api_json_give_the_same_timestamps_when_the_save_time_is_given(fixtures_dir):
    html = scrape([_ff(fixtures_dir, "topic_62345678_st0.html"), _ff(fixtures_dir, "topic_62345678_st15.html")],
                  saved_at=SAVED)
    api = scrape([_ff(fixtures_dir, "api_62345678_st0.json"), _ff(fixtures_dir, "api_62345678_st15.json")],
                 saved_at=SAVED)
    assert _times(html) == _times(api)
    assert len(_times(html)) == 18 and None not in _times(html).values()
    for pid, when in RELATIVE.items():
        assert _times(html)[pid] == when
    assert html.thread.fetched_at is not None
    assert datetime.fromisoformat(html.thread.fetched_at.replace("Z", "+00:00")) == datetime.fromisoformat(SAVED)


def test_relative_dates_follow_the_save_time_not_today(fixtures_dir):
    page = _ff(fixtures_dir, "topic_62345678_st15.html")
    a_week_later = _times(scrape([page], saved_at="2026-11-16T12:00:00+01:00"))
    assert a_week_later["600270"] == "2026-11-15T21:40:00+01:00"  # "Ieri" of the 16th
    assert a_week_later["600280"] == "2026-11-16T10:05:00+01:00"
    assert _times(scrape([page], saved_at=SAVED))["600270"] == RELATIVE["600270"]


def test_the_file_mtime_is_the_default_save_time(fixtures_dir, tmp_path):
    page = _copy(fixtures_dir, tmp_path, "topic_62345678_st15.html", mtime=SAVED)
    history = scrape([page])
    assert {pid: _times(history)[pid] for pid in RELATIVE} == RELATIVE
    assert history.thread.fetched_at in ("2026-11-09T11:00:00Z", "2026-11-09T11:00:00+00:00")
    # touching the file moves "Oggi": proof the mtime, not the clock, is used
    later = datetime.fromisoformat("2026-11-20T09:00:00+01:00").timestamp()
    os.utime(page, (later, later))
    assert _times(scrape([page]))["600280"] == "2026-11-20T10:05:00+01:00"


@pytest.mark.parametrize("note", [
    b"<!--\n Page saved with SingleFile \n url: https://bleach-gdr.forumfree.it/?t=62345678&st=15 \n"
    b" saved date: Mon Nov 09 2026 12:00:00 GMT+0100 (Ora standard dell\xe2\x80\x99Europa centrale)\n-->\n",
    b'<meta name="savepage-date" content="Mon Nov 09 2026 12:00:00 GMT+0100 (Central European Standard Time)">\n',
    b'<meta name="arbitro:saved-at" content="2026-11-09T11:00:00Z">\n',
])
def test_a_save_date_written_in_the_page_wins_over_the_mtime(fixtures_dir, tmp_path, note):
    page = _copy(fixtures_dir, tmp_path, "topic_62345678_st15.html", mtime="2026-11-25T12:00:00+01:00",
                 prefix=note)
    assert {pid: _times(scrape([page]))[pid] for pid in RELATIVE} == RELATIVE
    # and the command line wins over the page
    assert _times(scrape([page], saved_at="2026-11-16T12:00+01:00"))["600280"] == "2026-11-16T10:05:00+01:00"


def test_pages_saved_on_different_days_keep_their_own_days(fixtures_dir, tmp_path):
    first = _copy(fixtures_dir, tmp_path, "topic_62345678_st0.html", mtime="2026-11-20T18:00:00+01:00")
    second = _copy(fixtures_dir, tmp_path, "topic_62345678_st15.html", mtime=SAVED)
    history = scrape([first, second])
    assert {pid: _times(history)[pid] for pid in RELATIVE} == RELATIVE  # page 2's "Oggi" is 9 November
    assert history.thread.fetched_at in ("2026-11-20T17:00:00Z", "2026-11-20T17:00:00+00:00")  # the newest
    # the rest of the history is the one-time parse's
    same = scrape([first, second], saved_at=SAVED)
    assert [(p.id, p.body, p.rolls, p.schema, p.character) for p in history.posts] == \
        [(p.id, p.body, p.rolls, p.schema, p.character) for p in same.posts]
    assert _times(history) == _times(same)


def test_save_date_sniffing():
    js = b"<!-- Page saved with SingleFile \n saved date: Sun Jul 05 2026 08:30:15 GMT+0200 (CEST)\n-->"
    assert saved_page_date(js) == datetime(2026, 7, 5, 8, 30, 15, tzinfo=timezone(timedelta(hours=2)))
    meta = b"<head><meta content='Mon Nov 09 2026 12:00:00 GMT+0100 (CET)' name='savepage-date'></head>"
    assert saved_page_date(meta) == datetime(2026, 11, 9, 11, 0, tzinfo=timezone.utc)
    assert saved_page_date(b'<meta name="arbitro:saved-at" content="Mon, 09 Nov 2026 11:00:00 +0000">') == \
        datetime(2026, 11, 9, 11, 0, tzinfo=timezone.utc)
    # publication dates are not save times; a date without offset would be a guess; garbage is nothing
    assert saved_page_date(b'<meta name="date" content="2026-11-09T11:00:00Z">') is None
    assert saved_page_date(b'<meta property="article:modified_time" content="2026-11-09T11:00:00Z">') is None
    assert saved_page_date(b'<meta name="arbitro:saved-at" content="2026-11-09T11:00:00">') is None
    assert saved_page_date(b'<meta name="savepage-date" content="Mon Feb 31 2026 12:00:00 GMT+0100">') is None
    assert saved_page_date(b'<meta name="savepage-date" content="ieri">') is None
    assert saved_page_date(b"<!-- Page saved with SingleFile \n saved date: \x00\xff -->") is None
    assert saved_page_date(b"<html><body>niente</body></html>") is None


def test_parse_saved_at_forms():
    assert parse_saved_at("2026-11-09T11:00:00Z") == datetime(2026, 11, 9, 11, tzinfo=timezone.utc)
    assert parse_saved_at("2026-11-09T12:00+01:00") == datetime(2026, 11, 9, 11, tzinfo=timezone.utc)
    naive = parse_saved_at("2026-11-09T12:00")
    assert naive.tzinfo is not None and naive == datetime(2026, 11, 9, 12).astimezone()  # the machine's clock
    assert parse_saved_at("2026-11-09") == datetime(2026, 11, 9, 12).astimezone()  # a bare date: its noon
    aware = datetime(2026, 11, 9, 12, tzinfo=ROME_WINTER)
    assert parse_saved_at(aware) is aware


@pytest.mark.parametrize("bad", ["", "ieri", "2026-13-01", "09/11/2026", "2026-11-09T25:00", "Z"])
def test_bad_saved_at_is_named(fixtures_dir, bad):
    with pytest.raises(BadSavedAt, match="data di salvataggio non valida"):
        parse_saved_at(bad)
    with pytest.raises(BadSavedAt) as info:
        scrape([_ff(fixtures_dir, "topic_62345678_st15.html")], saved_at=bad)
    assert isinstance(info.value, BadSource) and isinstance(info.value, ScrapeError)
    assert info.value.code == "bad_saved_at"


def test_saved_at_is_refused_for_a_url(local_forum, local_fetcher):
    local_forum.load_forum(FF)
    with pytest.raises(BadSavedAt, match="solo per le pagine salvate"):
        scrape([local_forum.url("/?t=62345678")], fetcher=local_fetcher, saved_at=SAVED)
    assert [r for r in local_forum.requests_log if r.path != "/robots.txt"] == []  # refused before any fetch


def test_a_url_crawl_reads_relative_dates_against_the_fetch_time(local_forum, local_fetcher):
    local_forum.load_forum(FF)
    before = datetime.now(timezone.utc).replace(microsecond=0)
    history = scrape([local_forum.url("/?t=62345678")], fetcher=local_fetcher, follow_sheets=False)
    fetched = datetime.fromisoformat(history.thread.fetched_at.replace("Z", "+00:00"))
    assert before <= fetched <= datetime.now(timezone.utc)
    shown = datetime.fromisoformat(_times(history)["600280"])  # "Oggi, 10:05" of the fetch day, in Rome
    from zoneinfo import ZoneInfo
    assert shown.date() == fetched.astimezone(ZoneInfo("Europe/Rome")).date() and shown.hour == 10


# --- pages read ---------------------------------------------------------------------------------------

def test_only_page_two_saved_says_page_one_is_missing(fixtures_dir):
    history = scrape([_ff(fixtures_dir, "topic_62345678_st15.html")], saved_at=SAVED)
    assert history.thread.pages == 2 and history.thread.pages_read == (2,)
    assert len(history.posts) == 3
    assert missing_pages(history) == (1,)
    warning = missing_pages_warning(history)
    assert warning is not None and "incompleta" in warning and "letta 1 pagina su 2" in warning
    assert "la pagina 1 manca" in warning


def test_only_page_two_of_forumotion_and_api_json(fixtures_dir):
    only = scrape([str(fixtures_dir / "forumotion" / "phpbb3" / "t87p20.html")])
    assert only.thread.pages == 2 and only.thread.pages_read == (2,) and missing_pages(only) == (1,)
    api = scrape([_ff(fixtures_dir, "api_62345678_st15.json")], saved_at=SAVED)
    assert api.thread.pages_read == (2,) and missing_pages(api) == (1,)


def test_whole_saved_thread_has_every_page_read(fixtures_dir):
    folder = fixtures_dir / "forumotion" / "phpbb3"
    result = crawl_thread([str(folder / "t87p20.html"), str(folder / "t87p0.html")])
    assert result.history.thread.pages_read == (1, 2)
    assert missing_pages(result.history) == () and missing_pages_warning(result.history) is None


def test_url_crawl_records_every_page_read(local_forum, local_fetcher):
    local_forum.load_forum(FF)
    result = crawl_thread(local_forum.url("/?t=62345678&st=15"), fetcher=local_fetcher, follow_sheets=False)
    assert result.history.thread.pages == 2 and result.history.thread.pages_read == (1, 2)
    assert missing_pages(result.history) == ()


def test_pages_read_survives_the_json_round_trip_and_old_documents_still_load(fixtures_dir):
    history = scrape([_ff(fixtures_dir, "topic_62345678_st15.html")], saved_at=SAVED)
    doc = json.loads(json.dumps(history.to_dict()))
    assert doc["thread"]["pages_read"] == [2]
    again = CombatHistory.from_dict(doc)
    assert again.thread.pages_read == (2,) and missing_pages(again) == (1,)
    del doc["thread"]["pages_read"]  # a history written before the field existed: "not recorded"
    old = CombatHistory.from_dict(doc)
    assert old.thread.pages_read == () and missing_pages(old) == () and missing_pages_warning(old) is None


def test_warning_names_several_missing_pages(fixtures_dir):
    from dataclasses import replace

    history = scrape([_ff(fixtures_dir, "topic_62345678_st15.html")], saved_at=SAVED)
    longer = replace(history, thread=replace(history.thread, pages=4, pages_read=(2,)))
    assert missing_pages(longer) == (1, 3, 4)
    assert "le pagine 1, 3, 4 mancano" in missing_pages_warning(longer)
    assert "letta 1 pagina su 4" in missing_pages_warning(longer)



@pytest.mark.parametrize("bad", ["1994-12-31", "0001-01-01T00:00+01:00", "9999-12-31T23:59-10:00"])
def test_save_times_out_of_range_are_refused_or_ignored(fixtures_dir, tmp_path, bad):
    with pytest.raises(BadSavedAt):
        parse_saved_at(bad)
    note = f'<meta name="arbitro:saved-at" content="{bad}">\n'.encode()
    page = _copy(fixtures_dir, tmp_path, "topic_62345678_st15.html", mtime=SAVED, prefix=note)
    assert {pid: _times(scrape([page]))[pid] for pid in RELATIVE} == RELATIVE  # the mtime is used instead


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_hostile_save_dates_never_raise(text):
    for data in (f'<meta name="savepage-date" content="{text}">',
                 f"<!-- Page saved with SingleFile \n saved date: {text}\n-->",
                 f'<meta name="arbitro:saved-at" content="{text}">'):
        moment = saved_page_date(data.encode("utf-8", "surrogatepass"))
        assert moment is None or (moment.tzinfo is not None and 1995 <= moment.astimezone(timezone.utc).year <= 9000)
    try:
        moment = parse_saved_at(text)
    except BadSavedAt:
        return
    assert moment.tzinfo is not None


# --- saved files of one thread only ----------------------------------------------------------------------------

def test_saved_pages_of_two_threads_are_refused_naming_both(fixtures_dir):
    first, other = _ff(fixtures_dir, "topic_62345678_st0.html"), _ff(fixtures_dir, "topic_63000001_st0.html")
    with pytest.raises(BadSource) as err:
        scrape([first, other], saved_at=SAVED)
    msg = str(err.value)
    assert "stessa discussione" in msg and other in msg and first in msg
    assert "«Cerco gruppo per quest»" in msg and "«Arena di Karakura — Hollow vs Quincy»" in msg


def test_saved_pages_with_different_thread_ids_are_refused(fixtures_dir, tmp_path):
    # page 2 of thread 62345678 saved with its address, next to page 1 of thread 62345679
    page2 = (fixtures_dir / "forumfree" / "topic_62345678_st15.html").read_bytes()
    (tmp_path / "p2.html").write_bytes(b"<!-- saved from url=(0047)https://" + FF.encode() +
                                       b"/?t=62345678&st=15 -->\n" + page2)
    page1 = (fixtures_dir / "forumfree" / "topic_62345678_st0.html").read_bytes()
    (tmp_path / "p1.html").write_bytes(b"<!-- saved from url=(0036)https://" + FF.encode() + b"/?t=62345679 -->\n"
                                       + page1)
    with pytest.raises(BadSource, match=r"p2\.html è della discussione 62345678, .*p1\.html della 62345679"):
        scrape([str(tmp_path / "p1.html"), str(tmp_path / "p2.html")], saved_at=SAVED)


def test_a_saved_page_of_another_platform_is_named_as_such(fixtures_dir):
    ff, bb = _ff(fixtures_dir, "topic_62345678_st0.html"), str(fixtures_dir / "phpbb" / "viewtopic_t312_start0.html")
    with pytest.raises(BadSource, match="è una pagina phpbb, .* una pagina forumfree"):
        scrape([ff, bb], saved_at=SAVED)
    # a page that is no thread at all keeps its own error
    with pytest.raises(ScrapeError) as err:
        scrape([ff, _ff(fixtures_dir, "index.html")], saved_at=SAVED)
    assert err.value.code == "not_a_thread"


@pytest.mark.parametrize("title", ["Arena di Karakura", "ARENA  di karakura", "Arena di Karakura - Pagina 2",
                                   "Arena di Karakura | page 3", "Arena di Karakura (pag. 2)"])
def test_one_thread_s_titles_compare_equal_page_suffix_ignored(title):
    from scraper.crawl import _title_key

    assert _title_key(title) == _title_key("Arena di Karakura") == "arena di karakura"
    assert _title_key("Arena di Karakura 2") != _title_key("Arena di Karakura")  # a sequel is another thread
