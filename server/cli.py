"""The `arbitro` command line: one entry point, one module per subcommand in server/commands/."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from . import commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arbitro", description="Arbitro: arbitro di combattimento per GdR play-by-forum.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for mod in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if mod.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{mod.name}")
        module.add_parser(sub)  # each sets `func` on its parser
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrotto", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
