"""The Flask application factory: config, storage, refresher, limits and the blueprints wired together."""
from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from typing import Any, Callable

from flask import Flask

from . import errors, security
from .config import load_config, public_config
from .refresh import Refresher
from .security import RateLimiter
from .database import open_storage
from .storage import Storage


@dataclass
class Services:
    """What the blueprints use, kept on `app.extensions["arbitro"]`."""

    cfg: dict[str, Any]
    storage: Storage
    refresher: Refresher
    limiter: Any  # security.RateLimiter, or pg.DbRateLimiter on a shared database (same `hit(key)`)

    def close(self) -> None:
        self.refresher.close()
        self.storage.close()


def create_app(config: dict[str, Any] | None = None, *, fetcher_factory: Callable[[], Any] | None = None) -> Flask:
    """Build the service. `config` overrides the file (`ARBITRO_CONFIG`) and the `ARBITRO_*` variables.

    `fetcher_factory` builds the scraper Fetcher (default: from the config's fetch settings)."""
    cfg = load_config(config)
    app = Flask(__name__)
    app.config["ARBITRO"] = cfg
    app.config["MAX_CONTENT_LENGTH"] = int(cfg["max_body_bytes"])
    app.config["SECRET_KEY"] = cfg["secret_key"] or secrets.token_hex(32)
    app.config["JSON_SORT_KEYS"] = False
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.logger.setLevel(getattr(logging, str(cfg["log_level"]).upper(), logging.INFO))

    app.logger.debug("configurazione: %s", public_config(cfg))  # secrets masked
    storage = open_storage(cfg["database"], pool_size=int(cfg["database_pool"]))
    refresher = Refresher(storage, cfg, fetcher_factory=fetcher_factory)
    # several processes on one database count a client's audit creations there, else this process does
    limit, window = int(cfg["rate_limit_audits"]), float(cfg["rate_limit_window"])
    limiter = storage.rate_limiter(limit, window) if storage.shared else RateLimiter(limit, window)
    app.extensions["arbitro"] = Services(cfg, storage, refresher, limiter)

    from .api import bp as api_bp
    from .apidocs import bp as apidocs_bp
    from .demo import bp as demo_bp
    from .pages import bp as pages_bp
    from .userscript import bp as userscript_bp

    app.register_blueprint(api_bp)
    app.register_blueprint(pages_bp)
    app.register_blueprint(userscript_bp)
    app.register_blueprint(demo_bp)
    app.register_blueprint(apidocs_bp)
    errors.install(app)
    security.install(app)
    return app
