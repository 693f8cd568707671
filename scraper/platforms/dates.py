"""Forum dates as written on Italian boards → ISO 8601 with the forum's offset (zoneinfo)."""
from __future__ import annotations

import re
from functools import lru_cache
from datetime import date, datetime, timedelta, timezone, tzinfo

MONTHS = {
    "gen": 1, "gennaio": 1, "feb": 2, "febbraio": 2, "mar": 3, "marzo": 3, "apr": 4, "aprile": 4,
    "mag": 5, "maggio": 5, "giu": 6, "giugno": 6, "lug": 7, "luglio": 7, "ago": 8, "agosto": 8,
    "set": 9, "sett": 9, "settembre": 9, "ott": 10, "ottobre": 10, "nov": 11, "novembre": 11,
    "dic": 12, "dicembre": 12,
    # English month names (phpBB and ForumFree in English)
    "jan": 1, "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "jun": 6, "june": 6,
    "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9, "september": 9, "oct": 10,
    "october": 10, "november": 11, "dec": 12, "december": 12,
}
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
# am/pm also as "p.m.", never the start of a word ("12:30 amici" is no 00:30)
_TIME = re.compile(r"(\d{1,2})[:.](\d{2})(?:[:.](\d{2}))?(?:\s*([ap])\.?m\b\.?)?", re.I)
# Not inside a longer number: "2026-11-02" is year first (_YMD), never day 26 of month 11 of 2002.
_NUMERIC = re.compile(r"(?<!\d)(\d{1,2})[/.-](\d{1,2})[/.-](\d{2,4})(?!\d)")
_YMD = re.compile(r"(?<!\d)(\d{4})[/.-](\d{1,2})[/.-](\d{1,2})(?!\d)")
# "1° novembre 2026", "2 novembre, 2026"
_WORDED = re.compile(r"(\d{1,2})(?:°|º|st|nd|rd|th)?\s+([a-zA-Z]{3,10})\.?(?:,?\s+(\d{4}))?")
_WORDED_EN = re.compile(r"([a-zA-Z]{3,10})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})")
_YEAR = re.compile(r"\d{4}|\d{1,2}/\d{1,2}/\d{2}\b")
_RELATIVE = re.compile(r"\b(oggi|ieri|today|yesterday|aujourd'hui|hier)\b", re.I)


def parse_forum_date(text: str | None, tz: tzinfo, *, now: datetime | None = None) -> str | None:
    """`"2/11/2026, 21:14"`, `"Lun 2 Nov 2026 - 21:14"`, `"Oggi, 21:14"`, ISO … → ISO 8601 with offset.

    Day/month/year order (Italian). Dates without an offset are local time of `tz`; "Oggi"/"Ieri" (and
    dates without a year) are relative to `now` (the fetch time) in `tz`. None when nothing date-like.
    """
    if not text:
        return None
    # Same text and zone → same answer; only relative or year-less dates also depend on `now`.
    depends = _RELATIVE.search(text) is not None or _YEAR.search(text) is None
    if depends and now is None:
        return _parse(text, tz, now=None)
    return _parse_cached(text, tz, now if depends else None)


@lru_cache(maxsize=4096)
def _parse_cached(text: str, tz: tzinfo, now: datetime | None) -> str | None:
    return _parse(text, tz, now=now)


def _parse(text: str | None, tz: tzinfo, *, now: datetime | None = None) -> str | None:
    if not text:
        return None
    text = text.strip()
    iso = _ISO.search(text)
    if iso:
        raw = iso.group(0).replace("Z", "+00:00")
        try:
            dt = datetime.fromisoformat(raw)
        except ValueError:
            dt = None
        if dt is not None:
            # the same instant, shown in the forum's timezone (so every post of a thread shares one clock)
            dt = dt.replace(tzinfo=tz) if dt.tzinfo is None else dt.astimezone(tz)
            return dt.isoformat()
    day: date | None = None
    dm: re.Match[str] | None = None  # the date's own match: the time is looked for after it
    rel = _RELATIVE.search(text)
    if rel:
        ref = (now or datetime.now(timezone.utc)).astimezone(tz).date()
        word = rel.group(1).lower()
        day = ref if word in ("oggi", "today", "aujourd'hui") else ref - timedelta(days=1)
    else:
        m = _NUMERIC.search(text)
        if m:
            d, mo, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
            y = y + 2000 if y < 100 else y
            if mo > 12 >= d:  # only month/day reads it (an English board's 10/31/2026); else day first
                d, mo = mo, d
            day, dm = _safe_date(y, mo, d), m
        elif (m := _YMD.search(text)) is not None:
            day, dm = _safe_date(int(m.group(1)), int(m.group(2)), int(m.group(3))), m
        else:
            for m in _WORDED.finditer(text):
                mo = MONTHS.get(m.group(2).lower())
                if mo:
                    if m.group(3):
                        day = _safe_date(int(m.group(3)), mo, int(m.group(1)))
                    else:
                        day = _yearless(mo, int(m.group(1)), tz, now)
                    dm = m
                    break
            if day is None:
                m = _WORDED_EN.search(text)
                if m and MONTHS.get(m.group(1).lower()):
                    day, dm = _safe_date(int(m.group(3)), MONTHS[m.group(1).lower()], int(m.group(2))), m
    if day is None:
        return None
    # The time is after the date (avoid reading "2/11" as a time), else before it ("21:14 - 2/11/2026").
    tail = text[dm.end():] if dm is not None else text
    t = _TIME.search(tail)
    if t is None and dm is not None:
        t = _TIME.search(text, 0, dm.start())
    hh = mm = ss = 0
    if t:
        hh, mm, ss = int(t.group(1)), int(t.group(2)), int(t.group(3) or 0)
        ampm = (t.group(4) or "").lower()
        if ampm == "p" and hh < 12:
            hh += 12
        elif ampm == "a" and hh == 12:
            hh = 0
        if not (0 <= hh < 24 and 0 <= mm < 60 and 0 <= ss < 60):
            hh = mm = ss = 0
    return datetime(day.year, day.month, day.day, hh, mm, ss, tzinfo=tz).isoformat()


def _yearless(month: int, d: int, tz: tzinfo, now: datetime | None) -> date | None:
    """A date shown without its year ("28 dic, 21:14"): the latest one not after the fetch day (a post is
    never from the future: late December read in January is last year's)."""
    ref = (now or datetime.now(timezone.utc)).astimezone(tz).date()
    day = _safe_date(ref.year, month, d)
    if day is None or day > ref + timedelta(days=1):  # a day's slack: the forum's clock and ours may differ
        day = _safe_date(ref.year - 1, month, d) or day
    return day


def _safe_date(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


__all__ = ["parse_forum_date", "MONTHS"]
