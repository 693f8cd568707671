"""A throwaway PostgreSQL cluster for the tests: Debian's `postgresql` binaries, `initdb` into a temporary folder as a
non-root user (`postgres` when the tests run as root), started on a free loopback port with its unix socket in that
folder, stopped and removed at the end of the session.

    pg_cluster      session: the running cluster (a `Cluster`), with one database for the tests
    pg_url          a fresh, empty schema of that database per test (its `postgresql://` URL selects it with
                    `options=-csearch_path=…`: a new schema costs a millisecond, a new database a second), dropped
                    afterwards

Without PostgreSQL (no `initdb` on PATH nor under /usr/lib/postgresql/<ver>/bin) the tests that need it are
skipped with the reason when the environment variable CI is unset, and fail when it is set: CI runs everything
(scripts/test.sh installs Debian's `postgresql`). `Cluster` is also what `bench/bench_api.py --database temp`
starts.
"""
from __future__ import annotations

import glob
import itertools
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
from typing import Iterator

import pytest

SUPERUSER = "arbitro"


def find_bin(name: str) -> str | None:
    """A PostgreSQL server binary: on PATH, else the newest under /usr/lib/postgresql/<ver>/bin (Debian)."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                        key=lambda p: [int(x) if x.isdigit() else x for x in pathlib.Path(p).parts[-3].split(".")])
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """initdb + pg_ctl start in a temporary folder; `url(db)`, `create_database()`, `stop()`."""

    def __init__(self) -> None:
        self.initdb = find_bin("initdb")
        self.pg_ctl = find_bin("pg_ctl")
        if not self.initdb or not self.pg_ctl:
            raise FileNotFoundError("PostgreSQL non installato: initdb/pg_ctl non trovati (né nel PATH né in "
                                    "/usr/lib/postgresql/<versione>/bin); scripts/test.sh installa il pacchetto "
                                    "Debian `postgresql`")
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="arbitro-pg-"))
        self.data = self.root / "data"
        self.sockets = self.root
        self.port = _free_port()
        self._names = itertools.count(1)
        self._as: list[str] = []
        if os.geteuid() == 0:
            # PostgreSQL refuses to run as root: the cluster belongs to the `postgres` user Debian's package creates
            import pwd

            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                raise FileNotFoundError("utente `postgres` assente: installa il pacchetto Debian `postgresql`") from None
            os.chown(self.root, user.pw_uid, user.pw_gid)
            os.chmod(self.root, 0o700)
            self._as = ["runuser", "-u", "postgres", "--"]
        self.log = self.root / "server.log"

    def _run(self, *args: str) -> None:
        proc = subprocess.run([*self._as, *args], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(args[:2])} failed ({proc.returncode}): {proc.stderr[-2000:]} {log}")

    def start(self) -> Cluster:
        self._run(self.initdb, "-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8",
                  "--locale=C", "--no-sync")
        opts = (f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200 "
                "-c shared_buffers=64MB")
        self._run(self.pg_ctl, "-D", str(self.data), "-l", str(self.log), "-o", opts, "-w", "-t", "60", "start")
        return self

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{db}"

    def _admin(self, sql: str, db: str = "postgres") -> None:
        import psycopg

        with psycopg.connect(self.url(db), autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql)

    def create_database(self) -> str:
        name = f"arbitro_test_{os.getpid()}_{next(self._names)}"
        self._admin(f'CREATE DATABASE "{name}"')
        return name

    def drop_database(self, name: str) -> None:
        self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def schema_url(self, db: str, schema: str) -> str:
        """The URL of `db` whose sessions work in `schema` (created here)."""
        self._admin(f'CREATE SCHEMA "{schema}"', db)
        return f"{self.url(db)}?options=-csearch_path%3D{schema}"

    def drop_schema(self, db: str, schema: str) -> None:
        self._admin(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE', db)

    def stop(self) -> None:
        try:
            if self.data.exists():
                subprocess.run([*self._as, self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop"],
                               capture_output=True, timeout=60)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def _missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"PostgreSQL richiesto in CI: {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL non disponibile ({reason}); in CI questi test falliscono invece di essere saltati")


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _missing("manca psycopg: pip install -e '.[test]'")
    try:
        cluster = Cluster()
    except FileNotFoundError as exc:
        _missing(str(exc))
    try:
        cluster.start()
        cluster.test_db = cluster.create_database()
    except Exception:
        cluster.stop()
        raise
    try:
        yield cluster
    finally:
        cluster.stop()


_schemas = itertools.count(1)


@pytest.fixture()
def pg_url(pg_cluster: Cluster) -> Iterator[str]:
    schema = f"t{next(_schemas)}"
    url = pg_cluster.schema_url(pg_cluster.test_db, schema)
    try:
        yield url
    finally:
        pg_cluster.drop_schema(pg_cluster.test_db, schema)


__all__ = ["Cluster", "find_bin"]
