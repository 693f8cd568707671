// util: constants, safe DOM building (text nodes only, no HTML parsing), small helpers shared by every module.

const ARBITRO = {
  VERSION: "__ARBITRO_VERSION__",
  DEFAULT_SERVICE: "__ARBITRO_SERVICE_URL__",
  ATTR: "data-arbitro",
};

// The one way this script builds DOM: children are nodes or strings, strings always become text nodes.
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") el.className = String(value);
      else if (key === "text") el.textContent = String(value);
      else if (key === "href") {
        const safe = safeHttpUrl(value);
        if (safe) el.setAttribute("href", safe);
      } else if (key.startsWith("on") && typeof value === "function") {
        el.addEventListener(key.slice(2), value);
      } else if (/^(on|srcdoc|src$|style$)/i.test(key)) {
        continue; // never from data: handlers, sources and inline styles are set by code, not by attrs
      } else el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  appendChildren(el, children);
  return el;
}

function appendChildren(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// Only absolute http(s) URLs become links: javascript:, data: and the rest are dropped.
function safeHttpUrl(value, base) {
  if (value === null || value === undefined) return null;
  try {
    const url = new URL(String(value), base || location.href);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch (_e) {
    return null;
  }
}

function isPlainObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function asArray(v) {
  if (Array.isArray(v)) return v;
  if (v === null || v === undefined) return [];
  return [v];
}

// A JSON value as short readable text (numbers compared, stats, durations).
function fmtValue(v) {
  if (v === null || v === undefined) return "—";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(Math.round(v * 100) / 100);
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return v ? "sì" : "no";
  if (Array.isArray(v)) return v.map(fmtValue).join(", ");
  if (isPlainObject(v)) return Object.entries(v).map(([k, x]) => `${k}: ${fmtValue(x)}`).join(", ");
  return String(v);
}

// When an audit was made, as a reader says it: "alle 22:30 (3 min fa)", "il 1/12 alle 22:30 (2 giorni fa)"
// (the reader's own clock and zone; an unreadable time as it is).
function fmtWhen(iso, now) {
  const d = new Date(iso);
  if (typeof iso !== "string" || isNaN(d.getTime())) return fmtValue(iso);
  now = now || new Date();
  const hm = `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
  const sameDay = d.toDateString() === now.toDateString();
  const day = sameDay ? "" : `${t("on")} ${d.getDate()}/${d.getMonth() + 1}${d.getFullYear() !== now.getFullYear() ? "/" + d.getFullYear() : ""} `;
  const mins = Math.max(0, Math.floor((now.getTime() - d.getTime()) / 60000));
  const ago = mins < 1 ? t("now") : mins < 60 ? `${mins} ${t("minutesAgo")}`
    : mins < 1440 ? `${Math.floor(mins / 60)} ${t("hoursAgo")}` : `${Math.floor(mins / 1440)} ${t("daysAgo")}`;
  return `${day}${t("at")} ${hm} (${ago})`;
}

// Post ids as the scraper gives them: the digits ("ee123" and "p123" on the page are "123" in the audit).
function normPostId(id) {
  if (id === null || id === undefined) return "";
  const m = String(id).match(/(\d+)\s*$/);
  return m ? m[1] : String(id);
}

function textOf(el) {
  return el ? (el.textContent || "").replace(/\s+/g, " ").trim() : "";
}

function lowerKey(s) {
  return String(s || "").trim().toLowerCase();
}
