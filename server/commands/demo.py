"""`arbitro demo`: the service on the bundled demo fight, with a temporary database; prints the URL to open."""
from __future__ import annotations

import argparse
import logging
import shutil
import sys
import tempfile
from typing import Any


def add_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="avvia il servizio sul combattimento dimostrativo",
                       description="Avvia il servizio su un database temporaneo con il combattimento di prova "
                                   "già analizzato e stampa l'indirizzo da aprire.")
    p.add_argument("--port", type=int, default=None,
                   help="porta (predefinita 8000, o una libera se è occupata; 0 = una libera)")
    p.add_argument("--host", default="127.0.0.1", help="indirizzo di ascolto (predefinito 127.0.0.1)")
    p.add_argument("--fixture", metavar="DIR", default="", help="pagine HTML di un'altra discussione da mostrare")
    p.add_argument("--registry", metavar="FILE", default="",
                   help="registro (TOML) dei personaggi e delle tecniche di quella discussione")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from server.app import create_app
    from server.demo import DemoError, seed_demo

    from .serve import serve_forever

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    tmp = tempfile.mkdtemp(prefix="arbitro-demo-")
    try:
        app = create_app({
            "database": f"{tmp}/demo.sqlite3", "cache_dir": f"{tmp}/cache", "demo": True,
            "demo_fixture": args.fixture, "demo_registry": args.registry,
            # the demo thread is stored at start-up and never fetched: it lives on a made-up forum host
            "refresh_after": 10.0 ** 9,
        })
        try:
            info = seed_demo(app)
        except (DemoError, ImportError) as exc:
            print(f"arbitro demo: {exc}", file=sys.stderr)
            return 2
        except Exception as exc:  # a fixture the parser or engine cannot read: named, without traceback
            print(f"arbitro demo: il combattimento dimostrativo non è leggibile: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            return 2
        banner = ("Arbitro demo pronto.\n"
                  "  Apri:   {url}/demo\n"
                  "  Report: {url}/audit/" + str(info["thread_id"]) + "\n"
                  "  API:    {url}/api/v1/threads/" + str(info["thread_id"]) + "\n"
                  "Ctrl+C per fermare.")
        port = 8000 if args.port is None else args.port
        return serve_forever(app, args.host, port, banner=banner, any_port_if_busy=args.port is None)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
