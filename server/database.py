"""Opens the configured database: a path (or `sqlite:///path`) is SQLite, a `postgresql://` URL PostgreSQL."""
from __future__ import annotations

from typing import Any

from .pg import PostgresStorage
from .storage import SQLiteStorage, Storage, StorageError


def is_postgresql_url(value: str) -> bool:
    return value.startswith(("postgresql://", "postgres://"))


def open_storage(url_or_path: str, **options: Any) -> Storage:
    """Open the configured database: a path (or `sqlite:///path`) is SQLite, a `postgresql://` URL PostgreSQL
    (`options`: its pool size); other schemes are refused."""
    if url_or_path.startswith("sqlite:///"):
        return SQLiteStorage(url_or_path[len("sqlite:///"):])
    if is_postgresql_url(url_or_path):
        return PostgresStorage(url_or_path, **options)
    if "://" in url_or_path:
        scheme = url_or_path.split("://", 1)[0]
        raise StorageError(f"database non supportato: {scheme}:// (un file SQLite, sqlite:///percorso, "
                           f"o postgresql://utente@host/database)")
    return SQLiteStorage(url_or_path)


__all__ = ["is_postgresql_url", "open_storage"]
