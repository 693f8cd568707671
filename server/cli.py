"""The `arbitro` command line: one entry point, one module per subcommand in server/commands/."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import sys
from typing import Any, NoReturn

from . import commands


# argparse's own messages, in Italian: (English pattern, Italian text). argparse has no per-parser catalogue and
# patching its module-wide gettext would change every parser in the process; so the parser says them itself.
_MESSAGES = [
    (r"the following arguments are required: (?P<a>.+)", "mancano gli argomenti obbligatori: {a}"),
    (r"unrecognized arguments: (?P<a>.+)", "argomenti non riconosciuti: {a}"),
    (r"argument (?P<n>\S+): invalid choice: (?P<v>.+?) \(choose from (?P<c>.+)\)",
     "argomento {n}: scelta non valida: {v} (scegli tra {c})"),
    (r"argument (?P<n>\S+): invalid (?P<t>\S+) value: (?P<v>.+)", "argomento {n}: valore non valido: {v}"),
    (r"argument (?P<n>\S+): expected one argument", "argomento {n}: manca il valore"),
    (r"argument (?P<n>\S+): expected at most one argument", "argomento {n}: al più un valore"),
    (r"argument (?P<n>\S+): expected at least one argument", "argomento {n}: almeno un valore"),
    (r"argument (?P<n>\S+): expected (?P<k>\d+) arguments?", "argomento {n}: {k} valori attesi"),
    (r"argument (?P<n>\S+): not allowed with argument (?P<m>.+)", "argomento {n}: non ammesso insieme a {m}"),
    (r"argument (?P<n>\S+): ignored explicit argument (?P<v>.+)", "argomento {n}: valore {v} non ammesso"),
    (r"ambiguous option: (?P<o>\S+) could match (?P<m>.+)", "opzione ambigua: {o} può essere {m}"),
    (r"one of the arguments (?P<a>.+) is required", "serve uno degli argomenti {a}"),
    (r"argument (?P<n>\S+): (?P<rest>.+)", "argomento {n}: {rest}"),  # our own ArgumentTypeError texts
]


def italian(message: str) -> str:
    for pattern, text in _MESSAGES:
        m = re.fullmatch(pattern, message, re.DOTALL)
        if m:
            return text.format(**m.groupdict())
    return message


class _Formatter(argparse.HelpFormatter):
    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, "uso: " if prefix is None else prefix)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that speaks Italian: usage, help titles and errors (subcommands get the same class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        add_help = kwargs.pop("add_help", True)
        super().__init__(*args, add_help=False, **kwargs)
        self._positionals.title = "argomenti"
        self._optionals.title = "opzioni"
        if add_help:
            self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS,
                              help="mostra questo aiuto ed esce")

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: errore: {italian(message)}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="arbitro", description="Arbitro: arbitro di combattimento per GdR play-by-forum.")
    sub = parser.add_subparsers(dest="command", metavar="COMANDO", required=True, title="comandi")
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
