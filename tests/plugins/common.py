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
