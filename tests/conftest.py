"""Shared pytest fixtures. Each area keeps its fixtures in tests/plugins/<area>.py, loaded here."""
from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

pytest_plugins = [
    "tests.plugins.common",
    "tests.plugins.scraper",
    "tests.plugins.engine",
    "tests.plugins.stories",
    "tests.plugins.server",
    "tests.plugins.postgres",
    "tests.plugins.browser",
]
