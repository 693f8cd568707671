"""Subcommands of `arbitro`: each module defines add_parser(subparsers) and sets `func`."""
