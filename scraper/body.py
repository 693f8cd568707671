"""A response body streamed under the size cap, gzip/deflate decoded here so that a cut-short stream shows."""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any, Iterable

import requests

from .errors import FetchFailed, PageTooLarge

CHUNK = 64 * 1024


@dataclass(frozen=True)
class SizeCap:
    """At most `limit` bytes of a body, after decoding. Past it: PageTooLarge, or with `truncate` the first `limit`
    bytes (robots.txt, error pages). A declared Content-Length over the limit fails before any byte is read. Unless
    `lenient` (error pages), a compressed body whose stream did not end is FetchFailed."""

    limit: int
    truncate: bool = False
    lenient: bool = False

    def read(self, response: requests.Response, url: str) -> bytes:
        limit = self.limit
        declared = (response.headers.get("Content-Length") or "").strip()
        # ASCII digits only: str.isdigit() alone also takes "¹" and "٣"
        if not self.truncate and declared.isascii() and declared.isdigit() and int(declared) > limit:
            raise PageTooLarge(f"pagina troppo grande: {url} dichiara {int(declared)} byte (limite {limit})")
        decoder = _Decoder(response.headers.get("Content-Encoding", ""))
        buf = bytearray()
        try:
            for chunk in response.raw.stream(CHUNK, decode_content=False):
                for piece in decoder.feed(chunk):
                    buf += piece
                    if len(buf) > limit:
                        if self.truncate:
                            return bytes(buf[:limit])
                        raise PageTooLarge(f"pagina troppo grande: {url} supera {limit} byte")
        except zlib.error as exc:
            if self.lenient:
                return bytes(buf)
            raise FetchFailed(f"corpo della risposta non decodificabile per {url} ({exc})", url=url) from None
        if not self.lenient and not decoder.complete():
            raise FetchFailed(f"risposta incompleta per {url}: il contenuto compresso "
                              f"({decoder.names}) si interrompe prima della fine", url=url)
        return bytes(buf)


class _Inflate:
    """One gzip or deflate layer that knows whether its stream ended (urllib3's decoders do not say)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.obj = self._new(zlib.MAX_WBITS)
        self.fed = False  # any byte seen: an empty body is complete
        self.started = False  # some output or a whole member decoded: a bad zlib header is no longer retried
        self.members = 0
        self.swallow = False

    def _new(self, wbits: int) -> Any:
        return zlib.decompressobj(16 + wbits if self.kind == "gzip" else wbits)

    def feed(self, data: bytes) -> Iterable[bytes]:
        while data and not self.swallow:
            self.fed = True
            if self.obj.eof:
                self.members += 1
                if self.kind != "gzip":
                    self.swallow = True  # bytes after a deflate stream: ignored, as urllib3 does
                    return
                self.obj = self._new(zlib.MAX_WBITS)  # another gzip member
            try:
                out = self.obj.decompress(data, CHUNK)
            except zlib.error:
                if self.kind == "deflate" and not self.started:
                    self.started = True  # a raw deflate stream without the zlib header, as urllib3 accepts
                    self.obj = self._new(-zlib.MAX_WBITS)
                    continue
                if self.members:  # garbage after a complete gzip member: ignored, as urllib3 does
                    self.swallow = True
                    return
                raise
            self.started = True
            if out:
                yield out
            while len(out) == CHUNK and not self.obj.eof:  # output held back by the limit
                out = self.obj.decompress(self.obj.unconsumed_tail, CHUNK)
                if out:
                    yield out
            data = self.obj.unused_data if self.obj.eof else self.obj.unconsumed_tail

    def complete(self) -> bool:
        return not self.fed or self.swallow or self.obj.eof


class _Decoder:
    """Content-Encoding decoding (gzip, x-gzip, deflate; others passed through as urllib3 does)."""

    def __init__(self, header: str) -> None:
        names = [n.strip().lower() for n in header.split(",")]
        self.names = ", ".join(n for n in names if n in ("gzip", "x-gzip", "deflate"))
        self.layers = [_Inflate("deflate" if n == "deflate" else "gzip")
                       for n in reversed(names) if n in ("gzip", "x-gzip", "deflate")]

    def feed(self, data: bytes) -> Iterable[bytes]:
        pieces: Iterable[bytes] = (data,)
        for layer in self.layers:
            pieces = _through(layer, pieces)
        return pieces

    def complete(self) -> bool:
        return all(layer.complete() for layer in self.layers)


def _through(layer: _Inflate, pieces: Iterable[bytes]) -> Iterable[bytes]:
    for piece in pieces:
        yield from layer.feed(piece)


__all__ = ["CHUNK", "SizeCap"]
