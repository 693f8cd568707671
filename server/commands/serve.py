"""`arbitro serve`: the service on waitress (production WSGI server), or `--workers N` processes under gunicorn
(POSIX) on one PostgreSQL database; Flask's dev server only with --debug."""
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
    p.add_argument("--threads", type=int, default=8, help="thread di waitress (predefiniti 8); con --workers, per processo")
    p.add_argument("--workers", type=int, metavar="N",
                   help="N processi del servizio sotto gunicorn (solo Linux/macOS) sullo stesso database PostgreSQL; "
                        "senza: un processo solo, con waitress")
    p.add_argument("--debug", action="store_true", help="server di sviluppo di Flask con ricaricamento (mai in produzione)")
    p.set_defaults(func=run)


def build_app(config_file: str | None, overrides: dict[str, Any] | None = None) -> Any:
    from server.app import create_app
    from server.errors import ServerError

    from server.storage import StorageError

    cfg = dict(overrides or {})
    if config_file:
        cfg["config_file"] = config_file
    try:
        return create_app(cfg)
    except StorageError as exc:  # database unreachable, newer than this Arbitro, unsupported
        print(f"arbitro serve: {exc}", file=sys.stderr)
        return None
    except ServerError as exc:  # bad config
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


def _preflight(config_file: str | None) -> str | None:
    """What `create_app` would refuse, checked once before any worker starts — the configuration, the forum config,
    the allowlists, the database reached and migrated — without starting the service's threads (nothing of it may
    cross the fork). The database setting, or None after printing why not."""
    from server.config import ConfigError, load_config, load_forum_configs
    from server.errors import ServerError
    from server.security import net_policy
    from server.database import open_storage
    from server.storage import StorageError

    from scraper.netguard import AllowlistError

    try:
        cfg = load_config({"config_file": config_file} if config_file else None)
        load_forum_configs(cfg.get("forum_config"))
        try:
            net_policy(cfg)
        except AllowlistError as exc:
            raise ConfigError(f"allowed_hosts/private_allowlist: {exc}") from None
        open_storage(cfg["database"], pool_size=2).close()
    except StorageError as exc:
        print(f"arbitro serve: {exc}", file=sys.stderr)
        return None
    except ServerError as exc:
        print(f"arbitro serve: configurazione non valida: {exc}", file=sys.stderr)
        return None
    return str(cfg["database"])


def serve_workers(config_file: str | None, host: str, port: int, workers: int, threads: int = 8) -> int:
    """`workers` processes of the service under gunicorn (gthread workers, `threads` each, the app built in each
    worker after the fork). They share one PostgreSQL database: refresh jobs, the forums' politeness and the
    rate limit are in it; caches stay per process. The configuration and the database are checked once, here,
    before any worker starts, so a bad file or an unreachable database is one message, not N tracebacks."""
    if workers < 1:
        print("arbitro serve: --workers vuole un numero di processi da 1 in su", file=sys.stderr)
        return 2
    if sys.platform == "win32":
        print("arbitro serve: --workers usa gunicorn, che su Windows non funziona: avvia più `arbitro serve "
              "--port …` sullo stesso database PostgreSQL dietro un proxy (docs/service.md, \"Deploying for many "
              "forums\")", file=sys.stderr)
        return 2
    try:
        from gunicorn.app.base import BaseApplication
    except ImportError:
        print("arbitro serve: --workers richiede gunicorn: pip install 'arbitro[postgresql]'", file=sys.stderr)
        return 2
    from server.database import is_postgresql_url

    database = _preflight(config_file)
    if database is None:
        return 2
    if workers > 1 and not is_postgresql_url(database):
        print(f"arbitro serve: --workers {workers} richiede un database PostgreSQL (database = "
              "\"postgresql://utente@host/database\"): con SQLite la cortesia verso i forum e gli aggiornamenti "
              "valgono dentro un processo solo", file=sys.stderr)
        return 2
    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def when_ready(server: Any) -> None:
        sock_host, sock_port = server.LISTENERS[0].sock.getsockname()[:2]
        shown = f"[{sock_host}]" if ":" in sock_host else sock_host
        print(f"Arbitro in ascolto su http://{shown}:{sock_port} ({workers} processi gunicorn)", flush=True)

    def worker_exit(server: Any, worker: Any) -> None:
        app = getattr(worker, "wsgi", None)
        services = getattr(app, "extensions", {}).get("arbitro") if app is not None else None
        if services is not None:
            services.close()

    class ArbitroGunicorn(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            for key, value in {
                "bind": [bind], "workers": workers, "worker_class": "gthread", "threads": max(1, threads),
                "timeout": 120, "graceful_timeout": 15, "keepalive": 5, "proc_name": "arbitro",
                "accesslog": None, "errorlog": "-", "loglevel": "warning", "preload_app": False,
                "when_ready": when_ready, "worker_exit": worker_exit,
            }.items():
                self.cfg.set(key, value)

        def load(self) -> Any:
            from engine.gcpause import set_pausing

            set_pausing(threads <= 1)  # as waitress: never paused under other request threads
            app = build_app(config_file)
            if app is None:
                sys.exit(2)
            return app

    ArbitroGunicorn().run()
    return 0


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.workers is not None and not args.debug:
        return serve_workers(args.config, args.host, args.port, args.workers, args.threads)
    app = build_app(args.config)
    if app is None:
        return 2
    if args.debug:
        app.run(host=args.host, port=args.port, debug=True, use_reloader=False)
        return 0
    return serve_forever(app, args.host, args.port, args.threads)
