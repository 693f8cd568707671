"""WHATWG charset of page bytes: labels, detection (BOM, Content-Type, <meta>, UTF-8, 1252), mixed-page repair."""
from __future__ import annotations

import codecs
import re
from typing import Iterator

# WHATWG Encoding Standard labels of the encodings old Italian forums use; latin-1/ascii mean windows-1252.
_LABELS: dict[str, str] = {}
for _name, _labels in {
    "utf-8": "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8",
    "windows-1252": "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 "
                    "iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252",
    "iso-8859-15": "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9",
    "iso-8859-2": "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2",
    "windows-1250": "cp1250 windows-1250 x-cp1250",
    "utf-16le": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le",
    "utf-16be": "unicodefffe utf-16be",
}.items():
    for _label in _labels.split():
        _LABELS[_label] = _name


def encoding_for_label(label: str | None) -> str | None:
    """WHATWG "get an encoding": a label → canonical name, None when unknown."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    if label in _LABELS:
        return _LABELS[label]
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


_META_RE = re.compile(rb"<meta\b[^>]*>", re.I)
_CHARSET_ATTR_RE = re.compile(rb"""charset\s*=\s*["']?\s*([a-zA-Z0-9_:.\-]+)""", re.I)
_HTTP_EQUIV_RE = re.compile(rb"""http-equiv\s*=\s*["']?\s*content-type""", re.I)


def charset_from_content_type(content_type: str | None) -> str | None:
    if not content_type:
        return None
    m = re.search(r"""charset\s*=\s*["']?([^"';\s]+)""", content_type, re.I)
    return encoding_for_label(m.group(1)) if m else None


def detect_encoding(data: bytes, content_type: str | None = None) -> str:
    """WHATWG order: BOM, then the Content-Type charset, then a <meta> in the first 1024 bytes, then UTF-8 if
    the bytes are valid UTF-8, else windows-1252 (the Italian locale's legacy default)."""
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8"
    if data.startswith(codecs.BOM_UTF16_LE):
        return "utf-16le"
    if data.startswith(codecs.BOM_UTF16_BE):
        return "utf-16be"
    ctype = (content_type or "").split(";")[0].strip().lower()
    if ctype in ("application/json", "text/json"):
        return "utf-8"  # RFC 8259: JSON between systems is UTF-8
    found = charset_from_content_type(content_type)
    if found:
        return found
    for meta in _META_RE.findall(data[:1024]):
        m = _CHARSET_ATTR_RE.search(meta)
        if not m:
            continue
        if b"charset" in meta.split(b"=", 1)[0].lower() or _HTTP_EQUIV_RE.search(meta):
            enc = encoding_for_label(m.group(1).decode("ascii", "replace"))
            if enc:
                # a meta cannot really announce UTF-16 (the bytes are ASCII-compatible); x-user-defined is 1252
                return "utf-8" if enc.startswith("utf-16") else enc
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        return "windows-1252"


def _cp1252_fallback(exc: UnicodeError) -> tuple[str, int]:
    """Error handler: bytes that are not valid in the declared encoding are read as windows-1252."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    bad = exc.object[exc.start:exc.end]
    return "".join(_cp1252_byte(b) for b in bad), exc.end


def _cp1252_byte(b: int) -> str:
    try:
        return bytes([b]).decode("cp1252")
    except UnicodeDecodeError:  # 0x81, 0x8D, 0x8F, 0x90, 0x9D: WHATWG maps them to the C1 control
        return chr(b)


codecs.register_error("arbitro-cp1252", _cp1252_fallback)

# A valid multi-byte UTF-8 sequence (RFC 3629 table), as copy-pasted UTF-8 text appears in a 1252 page.
_UTF8_SEQ = re.compile(
    rb"[\xC2-\xDF][\x80-\xBF]|\xE0[\xA0-\xBF][\x80-\xBF]|[\xE1-\xEC\xEE\xEF][\x80-\xBF]{2}"
    rb"|\xED[\x80-\x9F][\x80-\xBF]|\xF0[\x90-\xBF][\x80-\xBF]{2}|[\xF1-\xF3][\x80-\xBF]{3}"
    rb"|\xF4[\x80-\x8F][\x80-\xBF]{2}"
)


# Every match of _UTF8_SEQ starts so. sre finds a one-class prefix by a fast scan, but tries the alternation above
# at every byte: the candidates come from here, and _UTF8_SEQ only checks them (same matches as its finditer).
_UTF8_LEAD = re.compile(rb"[\xC2-\xF4][\x80-\xBF]")


_ASCII = bytes(range(128))


def _utf8_runs(data: bytes) -> Iterator[re.Match[bytes]]:
    """The non-overlapping matches of _UTF8_SEQ in `data`, left to right."""
    # A match is a run of non-ASCII bytes, so it survives deleting the ASCII ones (a C-speed pass): a plain 1252
    # page, with its accents between letters, has no candidate left and is not scanned byte by byte.
    if _UTF8_LEAD.search(data.translate(None, _ASCII)) is None:
        return
    lead, seq = _UTF8_LEAD.search, _UTF8_SEQ.match
    pos = 0
    while (c := lead(data, pos)) is not None:
        m = seq(data, c.start())
        if m is None:
            pos = c.start() + 1
            continue
        yield m
        pos = m.end()


def decode_text(data: bytes, encoding: str | None = None) -> str:
    """Decode page bytes, repairing mixed encodings: stray 1252 bytes in a UTF-8 page are read as 1252, and
    UTF-8 sequences pasted into a 1252 page (the `Ã¨` mojibake) are read as UTF-8."""
    enc = encoding or detect_encoding(data)
    if enc == "utf-8":
        return data.removeprefix(codecs.BOM_UTF8).decode("utf-8", errors="arbitro-cp1252")
    if enc == "windows-1252":
        out: list[str] = []
        pos = 0
        for m in _utf8_runs(data):
            out.append(data[pos:m.start()].decode("cp1252", errors="arbitro-cp1252"))
            out.append(m.group().decode("utf-8"))
            pos = m.end()
        out.append(data[pos:].decode("cp1252", errors="arbitro-cp1252"))
        return "".join(out)
    try:
        return data.decode(enc, errors="replace")
    except LookupError:
        return data.decode("windows-1252", errors="arbitro-cp1252")


__all__ = ["encoding_for_label", "charset_from_content_type", "detect_encoding", "decode_text"]
