"""The service's named errors and their JSON rendering `{"error": {"code", "message", "details"}}`."""
from __future__ import annotations

from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException


class ServerError(Exception):
    """Root of every error of the `server` package (HTTP-facing, storage, configuration, demo)."""


class ServiceError(ServerError):
    """An error answered to a client: an HTTP status, a stable code and an Italian message."""

    status: int = 500
    code: str = "internal"
    default_message: str = "errore interno del servizio"

    def __init__(self, message: str | None = None, *, code: str | None = None, details: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.message = message or self.default_message
        if code:
            self.code = code
        self.details = details or {}
        self.headers = headers or {}
        super().__init__(self.message)

    def to_dict(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


class BadRequest(ServiceError):
    status = 400
    code = "bad_request"
    default_message = "richiesta non valida"


class Forbidden(ServiceError):
    status = 403
    code = "host_not_allowed"
    default_message = "forum non consentito"


class NotFound(ServiceError):
    status = 404
    code = "not_found"
    default_message = "risorsa non trovata"


class TooLarge(ServiceError):
    status = 413
    code = "too_large"
    default_message = "richiesta troppo grande"


class Unprocessable(ServiceError):
    status = 422
    code = "unprocessable"
    default_message = "contenuto non interpretabile"


class RateLimited(ServiceError):
    status = 429
    code = "rate_limited"
    default_message = "troppe richieste: riprova più tardi"


class ForumFailed(ServiceError):
    status = 502
    code = "fetch_failed"
    default_message = "il forum non ha risposto correttamente"


class ForumTimeout(ServiceError):
    status = 504
    code = "fetch_timeout"
    default_message = "il forum non ha risposto in tempo"


def from_scrape_error(exc: Exception) -> ServiceError:
    """Map a scraper error (by class, then by `.code`) to the service error with the right status."""
    from scraper import errors as se
    from scraper.crawl import BadSource

    code = getattr(exc, "code", None) or "scrape_error"
    message = getattr(exc, "message", None) or str(exc)
    details: dict[str, Any] = {}
    status = getattr(exc, "status", None)
    if status is not None:
        details["forum_status"] = status
    url = getattr(exc, "url", None)
    if url:
        details["url"] = url
    for attr in ("line", "column"):
        if getattr(exc, attr, None) is not None:
            details[attr] = getattr(exc, attr)
    if isinstance(exc, se.FetchTimeout):
        cls: type[ServiceError] = ForumTimeout
    elif isinstance(exc, se.FetchFailed):
        cls = ForumFailed
    elif isinstance(exc, (se.HostNotAllowed, se.BlockedByRobots)):
        cls = Forbidden
    elif isinstance(exc, se.PageTooLarge):
        # the forum's page, not the client's request, is too large: still 413 so the client sees why
        cls = TooLarge
    elif isinstance(exc, (se.NotAThread, se.UnsupportedPlatform, se.ParseError)):
        cls = Unprocessable
    elif isinstance(exc, BadSource):  # the client's sources (bad_source, not_found, bad_saved_at): its input
        cls = BadRequest
    else:
        cls = ForumFailed
    return cls(message, code=code, details=details)


_WERKZEUG_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "too_large",
                   415: "unsupported_media_type", 429: "rate_limited"}
_WERKZEUG_MESSAGES = {400: "richiesta non valida", 404: "risorsa non trovata", 405: "metodo non consentito",
                      413: "richiesta troppo grande", 415: "tipo di contenuto non supportato"}


def json_error(err: ServiceError) -> Response:
    resp = jsonify(err.to_dict())
    resp.status_code = err.status
    for k, v in err.headers.items():
        resp.headers[k] = v
    return resp


def _wants_json() -> bool:
    return request.path.startswith("/api/")


def install(app: Flask) -> None:
    """Register handlers: /api always answers JSON; pages get an Italian HTML page; never a traceback."""
    from flask import render_template

    def render(err: ServiceError) -> Response:
        if _wants_json():
            return json_error(err)
        html = render_template("error.html", error=err)
        resp = app.make_response((html, err.status))
        for k, v in err.headers.items():
            resp.headers[k] = v
        return resp

    @app.errorhandler(ServiceError)
    def _service_error(exc: ServiceError):  # type: ignore[no-untyped-def]
        if exc.status >= 500:
            app.logger.warning("%s %s -> %s %s", request.method, request.path, exc.status, exc.code)
        return render(exc)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException):  # type: ignore[no-untyped-def]
        status = exc.code or 500
        err = ServiceError(_WERKZEUG_MESSAGES.get(status, exc.name), code=_WERKZEUG_CODES.get(status, exc.name.lower().replace(" ", "_")))
        err.status = status
        valid = getattr(exc, "valid_methods", None)
        if status == 405 and valid:
            err.details = {"allowed": sorted(valid)}
        return render(err)

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):  # type: ignore[no-untyped-def]
        # logged with its traceback on the server side only; the client gets a named error
        app.logger.exception("errore inatteso su %s %s", request.method, request.path)
        return render(ServiceError())
