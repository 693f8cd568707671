"""`arbitro serve`: the service on waitress (production WSGI server); Flask's dev server only with --debug."""
from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
from typing import Any


def add_parser(sub: Any) -> None:
    p = sub.add_parser("serve", help="avvia il servizio (API, report, userscript)",
                       description="Avvia il servizio Arbitro con waitress. Configurazione: valori predefiniti, "
                                   "poi il file TOML (--config o ARBITRO_CONFIG), poi le variabili ARBITRO_*.")
    p.add_argument("--host", default="127.0.0.1", help="indirizzo di ascolto (predefinito 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="porta (predefinita 8000)")
    p.add_argument("--config", metavar="FILE", help="file di configurazione TOML")
    p.add_argument("--threads", type=int, default=8, help="thread di waitress (predefiniti 8)")
    p.add_argument("--debug", action="store_true", help="server di sviluppo di Flask con ricaricamento (mai in produzione)")
    p.set_defaults(func=run)


def build_app(config_file: str | None, overrides: dict[str, Any] | None = None) -> Any:
    from server.app import create_app
    from server.errors import ServerError

    cfg = dict(overrides or {})
    if config_file:
        cfg["config_file"] = config_file
    try:
        return create_app(cfg)
    except ServerError as exc:  # bad config, database newer than this Arbitro, unsupported database
        print(f"arbitro serve: configurazione non valida: {exc}", file=sys.stderr)
        return None


# What waitress refuses itself, before the app sees the request, in the service's JSON error format
_WAITRESS_ERRORS = {
    400: ("bad_request", "richiesta HTTP non valida"),
    413: ("too_large", "richiesta troppo grande"),
    431: ("headers_too_large", "intestazioni della richiesta troppo grandi"),
    501: ("not_implemented", "codifica della richiesta non supportata"),
}


def _json_error_channel() -> type:
    """waitress's HTTP channel whose own error answers (body over the cap, malformed chunks, huge headers) are
    `{"error": {"code", "message", "details"}}` like every other error, not waitress's text page."""
    from waitress.channel import HTTPChannel
    from waitress.task import ErrorTask

    from server.errors import ServiceError

    class JsonErrorTask(ErrorTask):
        def execute(self) -> None:
            error = self.request.error
            status = int(getattr(error, "code", 500))
            code, message = _WAITRESS_ERRORS.get(status, ("internal", "errore interno del servizio"))
            details = {"max_bytes": self.channel.adj.max_request_body_size - 1} if status == 413 else {}
            body = json.dumps(ServiceError(message, code=code, details=details).to_dict(), ensure_ascii=False,
                              separators=(",", ":")).encode("utf-8")
            self.status = f"{status} {error.reason}"
            self.response_headers.append(("Content-Type", "application/json"))
            self.set_close_on_finish()
            self.content_length = len(body)
            self.write(body)

    class JsonErrorChannel(HTTPChannel):
        error_task_class = JsonErrorTask

    return JsonErrorChannel


def make_server(app: Any, host: str, port: int, threads: int = 8) -> Any:
    """The waitress server of `app`. Its body cap is the service's `max_body_bytes` (waitress's own default is
    1 GB, all of it buffered before the app is asked), and what it refuses is answered in the JSON format."""
    from waitress.server import create_server

    cap = int(app.config["MAX_CONTENT_LENGTH"])
    # +1: waitress refuses a body of exactly its limit, the app accepts exactly max_body_bytes
    server = create_server(app, host=host, port=port, threads=threads, ident="Arbitro",
                           max_request_body_size=cap + 1)
    server.channel_class = _json_error_channel()
    return server


def serve_forever(app: Any, host: str, port: int, threads: int = 8, *, banner: str | None = None,
                  any_port_if_busy: bool = False) -> int:
    from engine.gcpause import set_pausing

    set_pausing(threads <= 1)  # the collector is process-wide: never paused under the other request threads
    try:
        server = make_server(app, host, port, threads)
    except OSError as exc:
        if not any_port_if_busy:
            from scraper.errors import os_error_text

            print(f"arbitro: impossibile ascoltare su {host}:{port}: " + os_error_text(exc), file=sys.stderr)
            app.extensions["arbitro"].close()
            return 3
        server = make_server(app, host, 0, threads)
    url = f"http://{host if ':' not in host else '[' + host + ']'}:{server.effective_port}"

    def _terminate(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # SIGTERM stops like Ctrl+C: storage closed, demo files removed

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    print(banner.format(url=url) if banner else f"Arbitro in ascolto su {url}", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        app.extensions["arbitro"].close()
    return 0


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = build_app(args.config)
    if app is None:
        return 2
    if args.debug:
        app.run(host=args.host, port=args.port, debug=True, use_reloader=False)
        return 0
    return serve_forever(app, args.host, args.port, args.threads)
