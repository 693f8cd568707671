// style: the overlay's CSS, scoped inside shadow roots so the forum's CSS and ours never meet; light and dark themes.

// Inline, no box of its own: an inline-block in the author's line moved a real template's offset anchor
// (Forumotion subsilver's `position:relative; top:-30px`) by its height.
const HOST_STYLE = "all:initial !important;display:inline !important;position:relative !important;" +
  "font-size:0 !important;line-height:0 !important;margin:0 !important;padding:0 !important;border:0 !important;" +
  "vertical-align:baseline !important;z-index:2147483000 !important;";

const LAYER_STYLE = "all:initial !important;position:fixed !important;left:0 !important;top:0 !important;" +
  "width:0 !important;height:0 !important;overflow:visible !important;z-index:2147483600 !important;";

const BASE_CSS = `
:host { --bg:#ffffff; --fg:#1b1f24; --muted:#57606a; --border:#8c959f; --ok:#116329; --okbg:#dafbe1;
  --warn:#7d4e00; --warnbg:#fff1c2; --err:#a40e26; --errbg:#ffe0e3; --info:#0a3069; --infobg:#ddf4ff;
  --shadow:0 4px 16px rgba(0,0,0,.25); }
:host([data-theme="dark"]) { --bg:#161b22; --fg:#e6edf3; --muted:#9ea7b3; --border:#57606a; --ok:#7ee2a0;
  --okbg:#0f2d1a; --warn:#f2cc60; --warnbg:#3a2a05; --err:#ff9ba8; --errbg:#3d0c14; --info:#a5d6ff;
  --infobg:#0c2d4a; --shadow:0 4px 16px rgba(0,0,0,.6); }
* { box-sizing:border-box; }
.wrap { position:absolute; left:6px; bottom:-4px; display:flex; gap:4px; align-items:center; white-space:nowrap;
  font:600 11px/16px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif; }
.wrap.flip { left:auto; right:0; }
.badge { all:unset; cursor:pointer; display:inline-flex; align-items:center; gap:3px; padding:0 6px; height:18px;
  border-radius:9px; border:1px solid currentColor; font:inherit; }
.ico-i { display:inline-block; width:11px; height:11px; border:1.5px solid currentColor; border-radius:50%;
  font:700 9px/9px Georgia,"DejaVu Serif",serif; text-align:center; font-style:italic; vertical-align:-1px; }
.n { margin-right:2px; }
.badge:focus-visible { outline:2px solid var(--info); outline-offset:1px; }
.sev-ok { color:var(--ok); background:var(--okbg); }
.sev-warning { color:var(--warn); background:var(--warnbg); }
.sev-error { color:var(--err); background:var(--errbg); }
.sev-info, .sev-ruling { color:var(--info); background:var(--infobg); }
.badge.provisional { border-style:dashed; opacity:.8; }
.tamper { display:inline-block; height:18px; padding:0 6px; border-radius:9px; border:1px solid currentColor;
  font-weight:700; max-width:360px; overflow:hidden; text-overflow:ellipsis; }
.strip { display:inline-block; height:18px; padding:0 6px; border-radius:9px; color:var(--fg); background:var(--bg);
  border:1px solid var(--border); font-weight:500; max-width:420px; overflow:hidden; text-overflow:ellipsis; }
.mark { position:absolute; left:0; bottom:7px; display:inline-block; min-width:15px; height:15px; padding:0 2px;
  border-radius:8px; border:1px solid currentColor; font:700 10px/13px system-ui,Arial,sans-serif; text-align:center; cursor:pointer; }
.tip, .panel { color:var(--fg); background:var(--bg); border:1px solid var(--border); border-radius:8px;
  box-shadow:var(--shadow); font:13px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif; }
.tip { position:fixed; max-width:min(460px, calc(100vw - 16px)); max-height:min(70vh, 560px); overflow:auto;
  padding:8px 10px; pointer-events:auto; }
.tip[hidden], .panel [hidden] { display:none !important; }
.tip h3, .panel h3 { margin:0 0 4px; font-size:13px; }
.tip ul, .panel ul { margin:0; padding:0 0 0 16px; }
.tip li, .panel li { margin:2px 0; }
.v { list-style:none; margin:0 0 6px -16px !important; padding:4px 6px; border-radius:6px; border-left:4px solid currentColor; }
.v .msg { color:var(--fg); }
.v .nums, .v .rule, .v .code { display:block; color:var(--muted); font-size:12px; }
.panel { position:fixed; right:12px; bottom:12px; width:min(380px, calc(100vw - 24px)); max-height:min(70vh, 640px);
  overflow:auto; padding:0; }
.panel header { position:sticky; top:0; display:flex; align-items:center; gap:6px; padding:6px 8px; background:var(--bg);
  border-bottom:1px solid var(--border); }
.panel header .name { font-weight:700; flex:1; }
.panel section { padding:6px 10px; border-bottom:1px solid var(--border); }
.panel section:last-child { border-bottom:0; }
.panel .status { color:var(--muted); }
.panel .status.error { color:var(--err); background:var(--errbg); font-weight:600; }
.panel .next { font-size:15px; font-weight:700; }
.panel .mine { color:var(--ok); }
.panel code { font:12px/1.4 ui-monospace,Menlo,Consolas,monospace; background:var(--infobg); color:var(--fg);
  padding:1px 4px; border-radius:4px; word-break:break-all; }
.panel .tag { display:flex; flex-wrap:wrap; gap:4px; align-items:center; margin:4px 0; }
.panel .tag .label { flex-basis:100%; font-weight:600; }
.btn { all:unset; cursor:pointer; padding:2px 8px; border-radius:6px; border:1px solid var(--border); color:var(--fg);
  background:var(--bg); font:600 12px/18px system-ui,Arial,sans-serif; }
.btn:hover, .btn:focus-visible { border-color:var(--info); color:var(--info); }
.btn[disabled] { opacity:.5; cursor:default; }
.icon { padding:0 6px; font-size:14px; }
.panel a { color:var(--info); }
.panel label { display:block; margin:6px 0 2px; font-weight:600; }
.panel input[type=text], .panel input[type=url], .panel select { width:100%; padding:4px; color:var(--fg);
  background:var(--bg); border:1px solid var(--border); border-radius:4px; font:inherit; }
.panel .check { display:flex; gap:6px; align-items:center; font-weight:400; }
.panel .row { display:flex; gap:6px; margin-top:8px; }
.panel.collapsed section { display:none; }
`;

let SHARED_SHEET = null;

// One constructed stylesheet shared by every shadow root (parsed once); a <style> where that is not possible.
function adoptStyles(root) {
  try {
    if (!SHARED_SHEET) {
      SHARED_SHEET = new CSSStyleSheet();
      SHARED_SHEET.replaceSync(BASE_CSS);
    }
    root.adoptedStyleSheets = [SHARED_SHEET];
    return;
  } catch (_e) {
    SHARED_SHEET = null; // e.g. a sandbox whose sheets the page's shadow roots refuse
  }
  const s = document.createElement("style");
  s.textContent = BASE_CSS;
  root.appendChild(s);
}

// Dark or light from the forum's own background behind `el` (walks up to the first opaque background).
function themeFor(el) {
  for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
    const bg = getComputedStyle(node).backgroundColor;
    const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(bg || "");
    if (!m || (m[4] !== undefined && Number(m[4]) < 0.5)) continue;
    const lum = (0.2126 * m[1] + 0.7152 * m[2] + 0.0722 * m[3]) / 255;
    return lum < 0.45 ? "dark" : "light";
  }
  return "light";
}
