"""Builds the userscript: concatenates userscript/src/*.js behind the metadata block into userscript/dist/."""
from __future__ import annotations

import argparse
import hashlib
import pathlib
import sys
import tomllib

HERE = pathlib.Path(__file__).resolve().parent
SRC = HERE / "src"
DIST = HERE / "dist"
PYPROJECT = HERE.parent / "pyproject.toml"

SERVICE_URL = "__ARBITRO_SERVICE_URL__"  # the service substitutes these when it serves the script
SERVICE_HOST = "__ARBITRO_SERVICE_HOST__"

# Forum hosts we know; other phpBB boards match on their viewtopic.php path.
MATCHES = (
    "*://*.forumfree.it/*",
    "*://*.forumcommunity.net/*",
    "*://*.blogfree.net/*",
    "*://*.forumattivo.com/*",
    "*://*.forumattivo.it/*",
    "*://*.forumotion.com/*",
    "*://*.forumotion.net/*",
    "*://*.forumotion.org/*",
    "*://*.forumactif.com/*",
    "*://*.forumactif.org/*",
    "*://*.forumactif.net/*",
    "*://*.forumactif.fr/*",
    "*://*.foroactivo.com/*",
    "*://*.forumieren.com/*",
    "*://*/viewtopic.php*",
    "*://*/*/viewtopic.php*",
)

GRANTS = (
    "GM.xmlHttpRequest", "GM.getValue", "GM.setValue", "GM.registerMenuCommand", "GM.setClipboard",
    "GM_xmlhttpRequest", "GM_getValue", "GM_setValue", "GM_registerMenuCommand", "GM_setClipboard",
)


class BuildError(Exception):
    """The sources cannot be built (missing folder, bad module name, placeholder misuse)."""


def project_version() -> str:
    with PYPROJECT.open("rb") as fh:
        return tomllib.load(fh)["project"]["version"]


def modules(src: pathlib.Path = SRC) -> list[pathlib.Path]:
    """Source modules in build order: their names start with a two-digit rank (00_util.js, 90_main.js)."""
    if not src.is_dir():
        raise BuildError(f"no sources in {src}")
    files = sorted(src.glob("*.js"))
    for f in files:
        if not (len(f.name) > 3 and f.name[:2].isdigit() and f.name[2] == "_"):
            raise BuildError(f"{f.name}: module names start with a two-digit rank, e.g. 40_platform_x.js")
    if not files:
        raise BuildError(f"no .js modules in {src}")
    return files


def metadata(version: str) -> str:
    lines = [
        ("name", "Arbitro"),
        ("name:it", "Arbitro — arbitro dei combattimenti GdR"),
        ("namespace", "arbitro-gdr"),  # a plain name: Arbitro has no public home page to point at
        ("version", version),
        ("description", "Verdicts, state and 'your turn' hints of play-by-forum fights, on the forum page"),
        ("description:it", "Verdetti, stato dei personaggi e \"Tocca a…\" dei combattimenti GdR, sulla pagina del forum"),
        ("author", "Arbitro"),
        ("license", "MIT"),
        *(("match", m) for m in MATCHES),
        *(("grant", g) for g in GRANTS),
        ("connect", SERVICE_HOST),
        ("run-at", "document-idle"),
        ("noframes", None),
        ("updateURL", f"{SERVICE_URL}/userscript/arbitro.meta.js"),
        ("downloadURL", f"{SERVICE_URL}/userscript/arbitro.user.js"),
        ("supportURL", f"{SERVICE_URL}/"),
    ]
    width = max(len(k) for k, _ in lines) + 1
    body = [f"// @{k}" if v is None else f"// @{k.ljust(width)}{v}" for k, v in lines]
    return "\n".join(["// ==UserScript==", *body, "// ==/UserScript==", ""])


def build(src: pathlib.Path = SRC, version: str | None = None) -> tuple[str, str]:
    """(user.js, meta.js) as text. Same sources, same bytes: no dates, sorted modules, LF newlines."""
    version = version or project_version()
    meta = metadata(version)
    parts = []
    for f in modules(src):
        code = f.read_text(encoding="utf-8").replace("\r\n", "\n").rstrip("\n")
        if "__ARBITRO_SERVICE_HOST__" in code:
            raise BuildError(f"{f.name}: the service host placeholder belongs in the metadata only")
        parts.append(f"// ---- {f.name} ----\n{code}\n")
    body = "\n".join(parts).replace("__ARBITRO_VERSION__", version)
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()[:12]
    script = (
        f"{meta}\n"
        f"// Built by userscript/build.py from userscript/src/ (sources digest {digest}). Do not edit by hand.\n"
        "(function arbitroUserscript() {\n"
        '"use strict";\n\n'
        f"{body}"
        "})();\n"
    )
    return script, meta


def write(dist: pathlib.Path = DIST) -> list[pathlib.Path]:
    script, meta = build()
    dist.mkdir(parents=True, exist_ok=True)
    out = [dist / "arbitro.user.js", dist / "arbitro.meta.js"]
    for path, text in zip(out, (script, meta)):
        path.write_bytes(text.encode("utf-8"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="fail if dist/ is not what the sources build to")
    args = ap.parse_args(argv)
    try:
        if args.check:
            script, meta = build()
            stale = [p.name for p, text in ((DIST / "arbitro.user.js", script), (DIST / "arbitro.meta.js", meta))
                     if not p.exists() or p.read_bytes() != text.encode("utf-8")]
            if stale:
                print(f"userscript/dist is stale ({', '.join(stale)}): run python3 userscript/build.py", file=sys.stderr)
                return 1
            return 0
        for p in write():
            print(p.relative_to(HERE.parent))
    except BuildError as e:
        print(f"build failed: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
