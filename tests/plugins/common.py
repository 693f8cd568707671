"""Fixtures every area uses: paths to the repository, the fixtures and the build folder."""
from __future__ import annotations

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
BUILD = ROOT / "build"


@pytest.fixture(scope="session")
def fixtures_dir() -> pathlib.Path:
    return FIXTURES


@pytest.fixture(scope="session")
def build_dir() -> pathlib.Path:
    BUILD.mkdir(exist_ok=True)
    return BUILD


# Real pages of live forums and the platforms' own templates (../shared/real/, with provenance in its SOURCES.md).
# CI has the folder; a checkout without it skips the tests that read it, saying why.
REAL = ROOT.parent / "shared" / "real"


@pytest.fixture(scope="session")
def real_dir() -> pathlib.Path:
    if not REAL.is_dir():
        pytest.skip(f"nessuna pagina reale: la cartella {REAL} non c'è (CI la ha; vedi DEVELOPERS, 'Real pages first')")
    return REAL
