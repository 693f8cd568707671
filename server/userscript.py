"""Serves the built userscript with this service's URL in `@connect`/`@updateURL`, so installing it is one click."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from flask import Blueprint, Response, current_app, request

from .errors import NotFound, ServiceError

bp = Blueprint("userscript", __name__, url_prefix="/userscript")

DIST = Path(__file__).resolve().parent.parent / "userscript" / "dist"
URL_PLACEHOLDER = "__ARBITRO_SERVICE_URL__"
HOST_PLACEHOLDER = "__ARBITRO_SERVICE_HOST__"


LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


class ServiceUrlNotConfigured(ServiceError):
    status = 503
    code = "service_url_not_configured"
    default_message = ("service_url non configurato: il userscript non può essere servito con un indirizzo preso "
                       "dalla richiesta (intestazione Host) fuori da localhost")


def service_url() -> str:
    """The public URL of this service: configured; without one, the request's own URL only on loopback —
    a Host header is the client's word, and a userscript (cached, installed by others) must not carry it."""
    cfg = current_app.config["ARBITRO"]
    if cfg.get("service_url"):
        return str(cfg["service_url"]).rstrip("/")
    host = urlsplit(request.host_url).hostname or ""
    if host not in LOOPBACK_HOSTS:
        raise ServiceUrlNotConfigured(details={"config_key": "service_url", "host": host})
    return request.host_url.rstrip("/")


def render_userscript(name: str, base_url: str) -> str:
    path = DIST / name
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFound("userscript non ancora compilato: esegui python3 userscript/build.py",
                       code="userscript_not_built", details={"file": f"userscript/dist/{name}"}) from None
    host = urlsplit(base_url).hostname or "localhost"
    return text.replace(URL_PLACEHOLDER, base_url).replace(HOST_PLACEHOLDER, host)


def _serve(name: str) -> Response:
    resp = Response(render_userscript(name, service_url()), mimetype="text/javascript")
    resp.headers["Cache-Control"] = "no-cache"
    return resp


@bp.get("/arbitro.user.js")
def user_js() -> Response:
    return _serve("arbitro.user.js")


@bp.get("/arbitro.meta.js")
def meta_js() -> Response:
    return _serve("arbitro.meta.js")
