"""Platform adapters: one module per forum platform, the shared Page/Platform in base, the forum config."""
from __future__ import annotations

from scraper.platforms.base import Page, Platform
from scraper.platforms.detect import detect_platform, get_platform
from scraper.platforms.config import ForumConfig, ForumConfigSet, ForumConfigError, load_config

__all__ = ["Page", "Platform", "detect_platform", "get_platform", "ForumConfig", "ForumConfigSet",
           "ForumConfigError", "load_config"]
