"""The userscript build: reproducible output, a valid metadata block, sources that never write HTML."""
from __future__ import annotations

import importlib.util
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD_PY = ROOT / "userscript" / "build.py"


@pytest.fixture(scope="module")
def build():
    spec = importlib.util.spec_from_file_location("arbitro_userscript_build", BUILD_PY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def meta_fields(meta: str) -> list[tuple[str, str]]:
    assert meta.startswith("// ==UserScript==\n") and "// ==/UserScript==" in meta
    out = []
    for line in meta.splitlines()[1:-1]:
        m = re.match(r"^// @(\S+)(?:\s+(.*))?$", line)
        assert m, f"bad metadata line {line!r}"
        out.append((m.group(1), (m.group(2) or "").strip()))
    return out


def test_build_is_deterministic_and_dist_is_current(build):
    first = build.build()
    second = build.build()
    assert first == second
    script, meta = first
    assert script.startswith(meta)
    assert "\r" not in script
    assert (ROOT / "userscript/dist/arbitro.user.js").read_text(encoding="utf-8") == script, \
        "userscript/dist is stale: run python3 userscript/build.py"
    assert (ROOT / "userscript/dist/arbitro.meta.js").read_text(encoding="utf-8") == meta
    assert build.main(["--check"]) == 0


def test_metadata_block(build):
    _script, meta = build.build(version="9.8.7")
    fields = meta_fields(meta)
    keys = [k for k, _ in fields]
    values = dict(fields)
    for key in ("name", "namespace", "version", "match", "grant", "connect", "run-at", "updateURL", "downloadURL"):
        assert key in keys, key
    assert values["version"] == "9.8.7"
    assert values["run-at"] == "document-idle"
    assert values["connect"] == "__ARBITRO_SERVICE_HOST__"
    assert values["updateURL"] == "__ARBITRO_SERVICE_URL__/userscript/arbitro.meta.js"
    assert values["downloadURL"] == "__ARBITRO_SERVICE_URL__/userscript/arbitro.user.js"
    grants = {v for k, v in fields if k == "grant"}
    assert {"GM.xmlHttpRequest", "GM.getValue", "GM.setValue", "GM.registerMenuCommand"} <= grants
    assert {"GM_xmlhttpRequest", "GM_getValue", "GM_setValue", "GM_registerMenuCommand"} <= grants
    matches = [v for k, v in fields if k == "match"]
    for host in ("forumfree.it", "forumcommunity.net", "forumattivo.com", "forumotion.com"):
        assert f"*://*.{host}/*" in matches
    assert "*://*/viewtopic.php*" in matches
    for m in matches:  # valid match patterns: scheme://host/path with a wildcard only at the host's start
        assert re.fullmatch(r"\*://(\*|\*\.[a-z0-9.-]+)/.*", m), m


def test_version_comes_from_the_project(build):
    _script, meta = build.build()
    assert dict(meta_fields(meta))["version"] == build.project_version()
    script, _ = build.build()
    assert f'VERSION: "{build.project_version()}"' in script


def test_sources_never_write_html(build):
    for f in build.modules():
        code = f.read_text(encoding="utf-8")
        for banned in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
                       "DOMParser", "createContextualFragment"):
            assert banned not in code, f"{f.name} uses {banned}"


def test_modules_are_small_and_ranked(build):
    files = build.modules()
    assert [f.name for f in files] == sorted(f.name for f in files)
    names = {f.name for f in files}
    for expected in ("00_util.js", "20_gm.js", "30_settings.js", "41_platform_forumfree.js",
                     "42_platform_forumotion.js", "43_platform_phpbb.js", "50_api.js", "90_main.js"):
        assert expected in names
    for f in files:
        first = f.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("// "), f"{f.name} must open with a one-line comment saying what it is for"
        assert len(f.read_text(encoding="utf-8").splitlines()) < 400, f"{f.name} is not a small module"


def test_bad_sources_are_named_errors(build, tmp_path):
    with pytest.raises(build.BuildError):
        build.build(src=tmp_path / "missing")
    (tmp_path / "main.js").write_text("// x\n", encoding="utf-8")
    with pytest.raises(build.BuildError, match="two-digit rank"):
        build.build(src=tmp_path)
    (tmp_path / "main.js").unlink()
    (tmp_path / "10_x.js").write_text("// x\nconst h = '__ARBITRO_SERVICE_HOST__';\n", encoding="utf-8")
    with pytest.raises(build.BuildError, match="placeholder"):
        build.build(src=tmp_path, version="1.0.0")


def test_service_substitution_leaves_no_placeholder(build):
    from tests.plugins.browser import userscript_source

    text = userscript_source("https://arbitro.example.org:8443")
    assert "__ARBITRO_" not in text
    assert "// @connect        arbitro.example.org" in text
    assert 'DEFAULT_SERVICE: "https://arbitro.example.org:8443"' in text
