"""Forum dates: Italian formats, relative days, summer time, offsets kept as instants."""
from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from scraper.platforms.base import parse_edit_note
from scraper.platforms.dates import parse_forum_date

ROME = ZoneInfo("Europe/Rome")
NOW = datetime(2026, 3, 29, 12, 0, tzinfo=timezone.utc)  # the day summer time starts in Rome


@pytest.mark.parametrize("text,iso", [
    ("2/11/2026, 21:14", "2026-11-02T21:14:00+01:00"),
    ("02/11/2026 21:14:05", "2026-11-02T21:14:05+01:00"),
    ("2/7/26, 9:05", "2026-07-02T09:05:00+02:00"),
    ("Lun 2 Nov 2026 - 21:14", "2026-11-02T21:14:00+01:00"),
    ("lunedì 2 novembre 2026, 21:14", "2026-11-02T21:14:00+01:00"),
    ("Mar 27 Ott 2026, 22:15", "2026-10-27T22:15:00+01:00"),
    ("Inviato il 14/3/2026, 20:00", "2026-03-14T20:00:00+01:00"),
    ("Oggi, 10:05", "2026-03-29T10:05:00+02:00"),
    ("Oggi alle 01:30", "2026-03-29T01:30:00+01:00"),
    ("Ieri alle 23:59", "2026-03-28T23:59:00+01:00"),
    ("5 Gen - 18:00", "2026-01-05T18:00:00+01:00"),
    ("Mon Nov 02, 2026 9:14 pm", "2026-11-02T21:14:00+01:00"),
    ("2026-07-01T18:30:00+00:00", "2026-07-01T20:30:00+02:00"),
    ("2026-07-01T18:30:00Z", "2026-07-01T20:30:00+02:00"),
    ("2026-07-01T18:30:00", "2026-07-01T18:30:00+02:00"),
])
def test_formats(text, iso):
    assert parse_forum_date(text, ROME, now=NOW) == iso


@pytest.mark.parametrize("text", [None, "", "mai", "31/02/2026, 10:00", "99/99/9999"])
def test_not_dates(text):
    assert parse_forum_date(text, ROME, now=NOW) is None


def test_relative_dates_follow_now():
    later = datetime(2026, 3, 31, 8, 0, tzinfo=timezone.utc)
    assert parse_forum_date("Oggi, 10:05", ROME, now=later) == "2026-03-31T10:05:00+02:00"
    assert parse_forum_date("Oggi, 10:05", ROME, now=NOW) == "2026-03-29T10:05:00+02:00"


@pytest.mark.parametrize("text,who,when", [
    ("Edited by Kurogane - 31/10/2026, 18:02", "Kurogane", "31/10/2026, 18:02"),
    ("Ultima modifica di Seireitei_Ryo il Sab 31 Ott 2026 - 18:02, modificato 1 volta", "Seireitei_Ryo",
     "Sab 31 Ott 2026 - 18:02, modificato 1 volta"),
    ("Modificato da Niccolò, 1/11/2026", "Niccolò", "1/11/2026"),
    ("nessuna nota", None, None),
])
def test_edit_notes(text, who, when):
    assert parse_edit_note(text) == (who, when)


# --- review of post fields (dates and edit notes) ----------------------------------------------------------------

@pytest.mark.parametrize("text,iso", [
    # year first: was read as day 26 of November 2002
    ("2026-11-02 21:14", "2026-11-02T21:14:00+01:00"),
    ("2026/11/02, 21:14", "2026-11-02T21:14:00+01:00"),
    # the time before the date: was midnight
    ("21:14 - 2/11/2026", "2026-11-02T21:14:00+01:00"),
    # ordinal day, comma before the year: were None / the fetch year
    ("1° novembre 2026, 21:14", "2026-11-01T21:14:00+01:00"),
    ("4th November 2026, 9:05 pm", "2026-11-04T21:05:00+01:00"),
    ("2 novembre, 2025 21:14", "2025-11-02T21:14:00+01:00"),
    # phpBB's English edit note: "1 time" was taken for the date, the time lost
    ("Sat Oct 31, 2026 6:02 pm, edited 1 time in total.", "2026-10-31T18:02:00+01:00"),
    # month first when only that reads (an English board): was None
    ("10/31/2026, 06:02 PM", "2026-10-31T18:02:00+01:00"),
    # "p.m." was ignored; "am" starting a word was taken for the morning
    ("2/11/2026 9:05 p.m.", "2026-11-02T21:05:00+01:00"),
    ("2/11/2026 12:30 amici", "2026-11-02T12:30:00+01:00"),
    ("2/11/2026 12:30am", "2026-11-02T00:30:00+01:00"),
])
def test_formats_review(text, iso):
    assert parse_forum_date(text, ROME, now=NOW) == iso


def test_yearless_date_is_never_in_the_future():
    january = datetime(2027, 1, 2, 12, 0, tzinfo=timezone.utc)
    assert parse_forum_date("28 dic, 21:14", ROME, now=january) == "2026-12-28T21:14:00+01:00"
    assert parse_forum_date("2 gen, 21:14", ROME, now=january) == "2027-01-02T21:14:00+01:00"


@pytest.mark.parametrize("text,who,when", [
    ("Edited by Jean-Luc - 31/10/2026, 18:02", "Jean-Luc", "31/10/2026, 18:02"),  # was ("Jean", "Luc - …")
    ("Modificato da Shin-ichi Kudo il 31/10/2026, 18:02", "Shin-ichi Kudo", "31/10/2026, 18:02"),
    ("Edited by Kurogane -31/10/2026", "Kurogane", "31/10/2026"),
])
def test_edit_notes_hyphenated_names(text, who, when):
    assert parse_edit_note(text) == (who, when)
