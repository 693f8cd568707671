"""The service's configuration: defaults, then a TOML file, then `ARBITRO_*` environment variables."""
from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Mapping

from .errors import ServerError

ENV_PREFIX = "ARBITRO_"

# Forum hosts Arbitro reads by default (the platforms of DESIGN.md); phpBB boards are added per deployment.
DEFAULT_FORUM_HOSTS = [
    "*.forumfree.it", "*.forumcommunity.net", "*.forumfree.net", "*.blogfree.net",
    "*.forumattivo.com", "*.forumattivo.it", "*.forumotion.com", "*.forumotion.net", "*.forumactif.com",
    "*.forumactif.org", "*.actieforum.com", "*.forumieren.com",
]

DEFAULTS: dict[str, Any] = {
    # where the SQLite file and the fetch cache live; or a PostgreSQL URL (postgresql://user@host/db): several
    # service processes on one database, refresh jobs and the forums' politeness shared through it
    "database": ".arbitro/arbitro.sqlite3",
    "cache_dir": ".arbitro/cache",
    "database_pool": 16,  # PostgreSQL: connections per process at most
    "job_lease": 60.0,  # PostgreSQL: a refresh job not renewed for this long (its process died) is taken over
    "job_poll": 1.0,  # PostgreSQL: refresh workers and waiters look at the jobs at least this often
    # public URL of this service (userscript @connect/@updateURL, links); empty = taken from the request
    "service_url": "",
    "default_ruleset": "guida",
    # forum config file (TOML, docs/forum-config.md): per forum host its ruleset, per section id another one,
    # selectors, masters... Empty = none; the ruleset then comes from the request or `default_ruleset`.
    "forum_config": "",
    # fetching
    "allowed_hosts": list(DEFAULT_FORUM_HOSTS),
    "private_allowlist": [],  # the only private addresses fetched: "127.0.0.1:8123", "10.1.0.0/16:8080" (fetching.md)
    "obey_robots": True,
    "fetch_connect_timeout": 5.0,
    "fetch_read_timeout": 15.0,
    "fetch_max_bytes": 5_000_000,
    "fetch_retries": 2,
    "fetch_backoff": 1.0,  # first wait before a retry; doubles each time
    "fetch_min_interval": 1.0,  # seconds between two requests to one forum host
    "follow_sheets": True,
    # freshness: a stored thread older than this is refreshed in the background when read
    "refresh_after": 300.0,
    "refresh_workers": 2,
    # `GET /threads?url=…&create=1` on an unknown thread: wait this long for its first audit, then answer 202
    "create_wait": 5.0,
    # a thread that is not a fight (422 from the forum's page, or an audit with no fight in it) is not read
    # again for this long, however many readers open it
    "negative_ttl": 3600.0,
    "failure_backoff": 30.0,  # after a failed refresh, the forum is not asked again for this long
    "replay_cache": 32,  # engine audits kept in memory for incremental replays
    "response_cache": 256,  # encoded `/threads` answers kept in memory (whole audits and pages; ≤ 256 MB)
    # limits
    "max_body_bytes": 2_000_000,
    "max_pages": 60,
    "rate_limit_audits": 20,  # audit creations per client per window
    "rate_limit_window": 60.0,
    "trust_proxy": False,  # use X-Forwarded-For for the client address (only behind a trusted proxy)
    # CORS: origins of the forums whose pages may call the API from the page itself
    "cors_origins": ["https://*.forumfree.it", "https://*.forumcommunity.net", "https://*.forumattivo.com",
                     "https://*.forumotion.com"],
    "secret_key": "",
    "log_level": "INFO",
    # the bundled demo (`arbitro demo`)
    "demo": False,
    "demo_fixture": "",
    "demo_registry": "",  # the registry the demo fight is audited under ("" : the bundled fight's own)
}


class ConfigError(ServerError, ValueError):
    """A configuration file or variable with an unknown key or a value of the wrong kind."""


def _coerce(key: str, value: Any, default: Any, source: str) -> Any:
    kind = type(default)
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            return value.strip().lower() in ("1", "true", "yes", "on")
    elif isinstance(default, list):
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
    elif isinstance(default, (int, float)):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return kind(value)
        if isinstance(value, str):
            try:
                return kind(float(value)) if kind is float else int(value)
            except ValueError:
                pass
    elif isinstance(default, str):
        if isinstance(value, str):
            return value
    raise ConfigError(f"{source}: {key} deve essere {_KIND_WORDS.get(kind, kind.__name__)}, non {value!r}")


_KIND_WORDS = {bool: "vero o falso", int: "un numero intero", float: "un numero", str: "un testo",
               list: "un elenco di testi"}
# Keys that once existed: a file that still has one gets told what replaced it, not just "unknown".
_REMOVED = {"allow_private": "private_allowlist (gli indirizzi privati ammessi con la porta, es. \"127.0.0.1:8123\")"}


def _unknown(key: str, where: str) -> ConfigError:
    if key in _REMOVED:
        return ConfigError(f"{where}: la chiave {key!r} non esiste più, usa {_REMOVED[key]}")
    return ConfigError(f"{where}: chiave sconosciuta {key!r}")


def load_config(overrides: Mapping[str, Any] | None = None, *, environ: Mapping[str, str] | None = None,
                config_file: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Defaults < TOML file (`config_file`, else `ARBITRO_CONFIG`) < `ARBITRO_*` variables < `overrides`."""
    env = os.environ if environ is None else environ
    cfg = dict(DEFAULTS)
    path = config_file or (overrides or {}).get("config_file") or env.get(ENV_PREFIX + "CONFIG")
    if path:
        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except OSError as exc:
            from scraper.errors import os_error_text

            raise ConfigError("file di configurazione non leggibile: " + os_error_text(exc, path)) from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"file di configurazione {path}: TOML non valido: {exc}") from None
        # a [arbitro] table or top-level keys
        data = data.get("arbitro", data)
        for key, value in data.items():
            if key not in DEFAULTS:
                raise _unknown(key, f"file di configurazione {path}")
            cfg[key] = _coerce(key, value, DEFAULTS[key], str(path))
        base = Path(path).resolve().parent
        for key in ("database", "cache_dir", "forum_config"):  # relative paths in a file are relative to the file
            value = cfg[key]
            if key == "database" and value.startswith("sqlite:///"):
                value = value[len("sqlite:///"):]
            elif key == "database" and "://" in value:
                continue  # a database URL (postgresql://…) is no path
            if key in data and value and not Path(value).is_absolute():
                cfg[key] = str(base / value)
    for name, value in env.items():
        if not name.startswith(ENV_PREFIX) or name == ENV_PREFIX + "CONFIG" or name == ENV_PREFIX + "CHROMIUM":
            continue
        key = name[len(ENV_PREFIX):].lower()
        if key in _REMOVED:
            raise _unknown(key, f"variabile {name}")
        if key in DEFAULTS:
            cfg[key] = _coerce(key, value, DEFAULTS[key], name)
    for key, value in (overrides or {}).items():
        if key == "config_file":
            continue
        if key not in DEFAULTS:
            raise _unknown(key, "configurazione")
        cfg[key] = _coerce(key, value, DEFAULTS[key], "config")
    return cfg


def public_config(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The configuration without secrets (the secret key, a database URL's password), for logs and diagnostics."""
    out = {k: ("***" if k == "secret_key" and v else v) for k, v in cfg.items()}
    if isinstance(out.get("database"), str) and "://" in out["database"]:
        from .pg import safe_url

        out["database"] = safe_url(out["database"])
    return out


# --- forum configs: which ruleset a forum (or one of its sections) plays ----------------------------------

def load_forum_configs(path: str | os.PathLike[str] | None) -> Any:
    """The forum config file named by the service config (`forum_config`), or None when none is set.

    Unknown keys and rulesets are a ConfigError at start-up, not a surprise on the first audit."""
    if not path:
        return None
    from scraper.platforms.config import ForumConfigError, load_config as load_forums

    try:
        forums = load_forums(Path(path))
    except ForumConfigError as exc:
        raise ConfigError(f"forum_config {path}: {exc}") from None
    import engine

    known = set(engine.available_rulesets())
    for fc in [forums.default, *forums.forums.values()]:
        for rid in [fc.ruleset, *fc.sections.values()]:
            if rid is not None and rid not in known:
                where = fc.host or "[default]"
                raise ConfigError(f"forum_config {path}: {where}: regolamento sconosciuto {rid!r} "
                                  f"(noti: {', '.join(sorted(known))})")
    return forums


def section_from_url(url: str | None) -> str | None:
    """The section (forum) id a thread URL carries itself: phpBB's and ForumFree's `f=` parameter."""
    from urllib.parse import parse_qsl, urlsplit

    if not url:
        return None
    try:
        query = urlsplit(url).query
    except ValueError:
        return None
    for key, value in parse_qsl(query):
        if key == "f" and value.strip().isdigit():
            return value.strip()
    return None


def host_of(url: str | None) -> str | None:
    from urllib.parse import urlsplit

    try:
        return (urlsplit(url or "").hostname or None) if url else None
    except ValueError:
        return None


def forum_has_sections(forums: Any, host: str | None) -> bool:
    return forums is not None and bool(forums.for_host(host).sections)


def forum_ruleset(forums: Any, host: str | None, section: str | None = None) -> str | None:
    """The ruleset the forum config gives a host (and section), or None when it says nothing."""
    if forums is None:
        return None
    return forums.for_host(host).ruleset_for(section)
