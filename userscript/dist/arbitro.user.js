// ==UserScript==
// @name           Arbitro
// @name:it        Arbitro — arbitro dei combattimenti GdR
// @namespace      arbitro-gdr
// @version        0.1.0
// @description    Verdicts, state and 'your turn' hints of play-by-forum fights, on the forum page
// @description:it Verdetti, stato dei personaggi e "Tocca a…" dei combattimenti GdR, sulla pagina del forum
// @author         Arbitro
// @license        MIT
// @match          *://*.forumfree.it/*
// @match          *://*.forumcommunity.net/*
// @match          *://*.blogfree.net/*
// @match          *://*.forumattivo.com/*
// @match          *://*.forumattivo.it/*
// @match          *://*.forumotion.com/*
// @match          *://*.forumotion.net/*
// @match          *://*.forumotion.org/*
// @match          *://*.forumactif.com/*
// @match          *://*.forumactif.org/*
// @match          *://*.forumactif.net/*
// @match          *://*.forumactif.fr/*
// @match          *://*.foroactivo.com/*
// @match          *://*.forumieren.com/*
// @match          *://*/viewtopic.php*
// @match          *://*/*/viewtopic.php*
// @grant          GM.xmlHttpRequest
// @grant          GM.getValue
// @grant          GM.setValue
// @grant          GM.registerMenuCommand
// @grant          GM.setClipboard
// @grant          GM_xmlhttpRequest
// @grant          GM_getValue
// @grant          GM_setValue
// @grant          GM_registerMenuCommand
// @grant          GM_setClipboard
// @connect        __ARBITRO_SERVICE_HOST__
// @run-at         document-idle
// @noframes
// @updateURL      __ARBITRO_SERVICE_URL__/userscript/arbitro.meta.js
// @downloadURL    __ARBITRO_SERVICE_URL__/userscript/arbitro.user.js
// @supportURL     __ARBITRO_SERVICE_URL__/
// ==/UserScript==

// Built by userscript/build.py from userscript/src/ (sources digest f5befa95695b). Do not edit by hand.
(function arbitroUserscript() {
"use strict";

// ---- 00_util.js ----
// util: constants, safe DOM building (text nodes only, no HTML parsing), small helpers shared by every module.

const ARBITRO = {
  VERSION: "0.1.0",
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

// ---- 05_i18n.js ----
// i18n: the overlay's own words in Italian (default) and English; verdict messages come from the service in Italian.

const STRINGS = {
  it: {
    title: "Arbitro",
    legal: "Turno regolare",
    errors: "errori",
    warnings: "avvisi",
    rulings: "serve una decisione del master",
    infos: "note",
    expected: "atteso",
    found: "trovato",
    rule: "Regola",
    assumption: "Ipotesi nostra",
    roll: "tiro n.",
    post: "Post",
    stateAfter: "Stato dopo il turno",
    nextTurn: "Tocca a",
    yourTurn: "Tocca a te",
    incoming: "Attacchi in arrivo",
    toBeat: "totale da battere",
    stats: "Statistiche attuali",
    stacks: "Stack attivi",
    registro: "Da scrivere nel Registro",
    diceTags: "Tag dei dadi",
    hints: "Suggerimenti",
    copy: "Copia",
    copied: "Copiato!",
    copyFailed: "Copia non riuscita",
    insert: "Inserisci",
    inserted: "Inserito",
    report: "Rapporto completo",
    settings: "Impostazioni",
    close: "Chiudi",
    collapse: "Riduci",
    expand: "Espandi",
    save: "Salva",
    cancel: "Annulla",
    serviceUrl: "Indirizzo del servizio",
    character: "Personaggio da seguire",
    language: "Lingua",
    enabledHere: "Attivo su questo forum",
    showStrips: "Mostra risorse (PV, PE, PF…) e Stack sotto ogni post",
    badServiceUrl: "Indirizzo del servizio non valido (serve http:// o https://)",
    saved: "Impostazioni salvate",
    loading: "Analisi del combattimento…",
    refreshing: "Audit in aggiornamento: i post più recenti potrebbero non essere ancora valutati.",
    analysing: "Analisi in corso: il servizio sta leggendo il combattimento per la prima volta…",
    analysisSlow: "L'analisi sta richiedendo più del previsto. Riprova tra poco.",
    provisional: "provvisorio — analisi completa in corso",
    changedAfterPublication: "modificato dopo la pubblicazione",
    readFirst: "letto",
    readAgain: "poi di nuovo",
    deletedPosts: "post eliminati dopo la lettura",
    pageOf: "pagina",
    of: "di",
    stale: "Questa pagina ha post che il servizio non ha ancora valutato.",
    fetchedAt: "aggiornato",
    at: "alle",
    on: "il",
    now: "adesso",
    minutesAgo: "min fa",
    hoursAgo: "h fa",
    daysAgo: "giorni fa",
    errNetwork: "Servizio Arbitro non raggiungibile. La pagina del forum funziona normalmente.",
    errTimeout: "Il servizio Arbitro non ha risposto in tempo. Riprova più tardi.",
    errHttp: "Il servizio Arbitro ha risposto con un errore",
    errBadResponse: "Risposta del servizio non valida.",
    errConfig: "Indirizzo del servizio non configurato: aprilo dalle impostazioni.",
    errInternal: "Errore interno dell'overlay (la pagina non è toccata).",
    retry: "Riprova",
    menuSettings: "Arbitro: impostazioni",
    menuToggle: "Arbitro: attiva/disattiva su questo forum",
    expires: "scade",
    remaining: "restanti",
    conditions: "Condizioni",
    noNext: "Nessun suggerimento per il prossimo turno.",
    replyBoxMissing: "Nessun riquadro di risposta in questa pagina",
  },
  en: {
    title: "Arbitro",
    legal: "Legal turn",
    errors: "errors",
    warnings: "warnings",
    rulings: "needs a master's ruling",
    infos: "notes",
    expected: "expected",
    found: "found",
    rule: "Rule",
    assumption: "Our assumption",
    roll: "roll #",
    post: "Post",
    stateAfter: "State after the turn",
    nextTurn: "Next to post:",
    yourTurn: "Your turn",
    incoming: "Incoming attacks",
    toBeat: "total to beat",
    stats: "Current stats",
    stacks: "Active Stacks",
    registro: "To write in the Registro",
    diceTags: "Dice tags",
    hints: "Hints",
    copy: "Copy",
    copied: "Copied!",
    copyFailed: "Copy failed",
    insert: "Insert",
    inserted: "Inserted",
    report: "Full report",
    settings: "Settings",
    close: "Close",
    collapse: "Collapse",
    expand: "Expand",
    save: "Save",
    cancel: "Cancel",
    serviceUrl: "Service URL",
    character: "Character to follow",
    language: "Language",
    enabledHere: "Enabled on this forum",
    showStrips: "Show resources (PV, PE, PF…) and Stacks on every post",
    badServiceUrl: "Invalid service URL (http:// or https:// needed)",
    saved: "Settings saved",
    loading: "Auditing the fight…",
    refreshing: "Audit being refreshed: the latest posts may not be checked yet.",
    analysing: "Analysis under way: the service is reading this fight for the first time…",
    analysisSlow: "The analysis is taking longer than expected. Try again shortly.",
    provisional: "provisional — full analysis under way",
    changedAfterPublication: "changed after publication",
    readFirst: "read",
    readAgain: "then again",
    deletedPosts: "posts deleted after reading",
    pageOf: "page",
    of: "of",
    stale: "This page has posts the service has not checked yet.",
    fetchedAt: "updated",
    at: "at",
    on: "on",
    now: "just now",
    minutesAgo: "min ago",
    hoursAgo: "h ago",
    daysAgo: "days ago",
    errNetwork: "Arbitro service unreachable. The forum page works as usual.",
    errTimeout: "The Arbitro service did not answer in time. Try again later.",
    errHttp: "The Arbitro service answered with an error",
    errBadResponse: "Invalid answer from the service.",
    errConfig: "Service URL not configured: set it in the settings.",
    errInternal: "Internal overlay error (the page is untouched).",
    retry: "Retry",
    menuSettings: "Arbitro: settings",
    menuToggle: "Arbitro: enable/disable on this forum",
    expires: "expires",
    remaining: "left",
    conditions: "Conditions",
    noNext: "No hint for the next turn.",
    replyBoxMissing: "No reply box on this page",
  },
};

let LANG = "it";

function t(key) {
  const table = STRINGS[LANG] || STRINGS.it;
  return key in table ? table[key] : STRINGS.it[key] || key;
}

// ---- 10_errors.js ----
// errors: one root (ArbitroError) with precise subclasses, so the panel can say what went wrong in plain words.

class ArbitroError extends Error {
  constructor(message, extra) {
    super(message);
    this.name = this.constructor.name;
    Object.assign(this, extra || {});
  }
  // Words for the panel.
  describe() {
    return t("errInternal");
  }
}

class ConfigError extends ArbitroError {
  describe() {
    return t("errConfig");
  }
}

class NetworkError extends ArbitroError {
  describe() {
    return t("errNetwork");
  }
}

class TimeoutError extends NetworkError {
  describe() {
    return t("errTimeout");
  }
}

class HttpError extends ArbitroError {
  // status: HTTP status; code/details: the service's {"error": {...}} body when there is one.
  describe() {
    const what = this.serviceMessage ? `: ${this.serviceMessage}` : "";
    return `${t("errHttp")} (${this.status})${what}`;
  }
  // Not a fight or not a forum the service reads: the page stays untouched.
  get silent() {
    return this.status === 403 || this.status === 422;
  }
}

class NotFoundError extends HttpError {}

class BadResponseError extends ArbitroError {
  describe() {
    return t("errBadResponse");
  }
}

// ---- 20_gm.js ----
// gm: the userscript-manager API, GM.* (Greasemonkey 4, Tampermonkey, Violentmonkey) with GM_* and plain-web fallbacks.

const gm = (() => {
  const G = typeof GM !== "undefined" && GM ? GM : {};
  // typeof on an undeclared name is safe: the GM_* functions are locals the manager's wrapper provides.
  /* global GM_xmlhttpRequest, GM_getValue, GM_setValue, GM_registerMenuCommand, GM_setClipboard */
  const gmXhr = G.xmlHttpRequest ? G.xmlHttpRequest.bind(G)
    : typeof GM_xmlhttpRequest === "function" ? GM_xmlhttpRequest : null;
  const gmGet = G.getValue ? G.getValue.bind(G)
    : typeof GM_getValue === "function" ? (k, d) => Promise.resolve(GM_getValue(k, d)) : null;
  const gmSet = G.setValue ? G.setValue.bind(G)
    : typeof GM_setValue === "function" ? (k, v) => Promise.resolve(GM_setValue(k, v)) : null;
  const gmMenu = G.registerMenuCommand ? G.registerMenuCommand.bind(G)
    : typeof GM_registerMenuCommand === "function" ? GM_registerMenuCommand : null;
  const gmClip = G.setClipboard ? G.setClipboard.bind(G)
    : typeof GM_setClipboard === "function" ? GM_setClipboard : null;

  return {
    // Resolves {status, text}; rejects NetworkError / TimeoutError. Without a manager, fetch() (needs the service's CORS).
    request({ method, url, body, timeout }) {
      const headers = { Accept: "application/json" };
      if (body !== undefined) headers["Content-Type"] = "application/json";
      const data = body === undefined ? undefined : JSON.stringify(body);
      if (gmXhr) {
        return new Promise((resolve, reject) => {
          let settled = false;
          const done = (fn, value) => {
            if (!settled) {
              settled = true;
              clearTimeout(timer);
              fn(value);
            }
          };
          // Our own timer too: some managers ignore `timeout`.
          const timer = setTimeout(() => done(reject, new TimeoutError(`timeout after ${timeout} ms`)), timeout + 250);
          try {
            gmXhr({
              method, url, headers, data, timeout,
              onload: (r) => done(resolve, { status: r.status, text: r.responseText }),
              onerror: (r) => done(reject, new NetworkError(`network error ${r && r.error ? r.error : ""}`.trim())),
              ontimeout: () => done(reject, new TimeoutError(`timeout after ${timeout} ms`)),
              onabort: () => done(reject, new NetworkError("aborted")),
            });
          } catch (e) {
            done(reject, new NetworkError(String(e && e.message ? e.message : e)));
          }
        });
      }
      const ctl = new AbortController();
      const timer = setTimeout(() => ctl.abort(), timeout);
      return fetch(url, { method, headers, body: data, signal: ctl.signal, credentials: "omit" })
        .then(async (r) => ({ status: r.status, text: await r.text() }))
        .catch((e) => {
          throw ctl.signal.aborted ? new TimeoutError(`timeout after ${timeout} ms`) : new NetworkError(String(e));
        })
        .finally(() => clearTimeout(timer));
    },
    async getValue(key, fallback) {
      try {
        if (gmGet) return await gmGet(key, fallback);
        const raw = localStorage.getItem(`arbitro:${key}`);
        return raw === null ? fallback : JSON.parse(raw);
      } catch (_e) {
        return fallback;
      }
    },
    async setValue(key, value) {
      if (gmSet) return gmSet(key, value);
      localStorage.setItem(`arbitro:${key}`, JSON.stringify(value));
      return undefined;
    },
    menu(label, fn) {
      try {
        if (gmMenu) gmMenu(label, fn);
      } catch (_e) {
        // a manager without menus: the gear in the panel is enough
      }
    },
    async copy(text) {
      try {
        if (navigator.clipboard && window.isSecureContext) {
          await navigator.clipboard.writeText(text);
          return true;
        }
      } catch (_e) {
        // fall through to the manager's clipboard
      }
      if (gmClip) {
        gmClip(text, "text");
        return true;
      }
      const ta = document.createElement("textarea");
      ta.value = text;
      ta.setAttribute("readonly", "");
      ta.style.cssText = "position:fixed;left:-9999px;top:0;opacity:0";
      document.body.appendChild(ta);
      ta.select();
      let ok = false;
      try {
        ok = document.execCommand("copy");
      } finally {
        ta.remove();
      }
      return ok;
    },
  };
})();

// ---- 30_settings.js ----
// settings: what the reader chooses (service URL, character to follow, language, on/off per forum), kept in GM storage.

const SETTINGS_KEY = "settings";

const DEFAULT_SETTINGS = {
  serviceUrl: "",          // "" = the service this script was installed from
  character: "",           // character to follow: its turn opens the "Tocca a" panel
  language: "it",
  disabledHosts: [],       // forums where the overlay stays off
  showStrips: true,
  timeoutMs: 8000,
  cacheSeconds: 600,
};

function serviceUrlOf(settings) {
  const raw = (settings.serviceUrl || ARBITRO.DEFAULT_SERVICE || "").trim().replace(/\/+$/, "");
  if (!raw || raw.includes("__ARB" + "ITRO_")) return null; // still the placeholder: not served by a service
  return safeHttpUrl(raw) ? raw : null;
}

function normaliseSettings(raw) {
  const out = { ...DEFAULT_SETTINGS };
  let value = raw;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch (_e) {
      value = {};
    }
  }
  if (!isPlainObject(value)) return out;
  if (typeof value.serviceUrl === "string") out.serviceUrl = value.serviceUrl.trim();
  if (typeof value.character === "string") out.character = value.character.trim();
  if (value.language === "it" || value.language === "en") out.language = value.language;
  if (Array.isArray(value.disabledHosts)) out.disabledHosts = value.disabledHosts.filter((x) => typeof x === "string");
  if (typeof value.showStrips === "boolean") out.showStrips = value.showStrips;
  if (Number.isFinite(value.timeoutMs) && value.timeoutMs >= 500) out.timeoutMs = Math.min(value.timeoutMs, 60000);
  if (Number.isFinite(value.cacheSeconds) && value.cacheSeconds >= 0) out.cacheSeconds = value.cacheSeconds;
  return out;
}

async function loadSettings() {
  return normaliseSettings(await gm.getValue(SETTINGS_KEY, null));
}

// Stored as a JSON string: every manager stores strings the same way.
async function saveSettings(settings) {
  const clean = normaliseSettings(settings);
  await gm.setValue(SETTINGS_KEY, JSON.stringify(clean));
  return clean;
}

function isEnabledHere(settings, host) {
  return !settings.disabledHosts.includes(lowerKey(host));
}

function withHostEnabled(settings, host, enabled) {
  const key = lowerKey(host);
  const rest = settings.disabledHosts.filter((x) => x !== key);
  return { ...settings, disabledHosts: enabled ? rest : rest.concat([key]) };
}

// ---- 40_platform_base.js ----
// platform base: the contract every forum adapter fulfils, and helpers for finding posts, authors and rolls.
//
// An adapter is {id, detect(doc, loc) -> score, skin(doc), posts(doc) -> [PostRef], threadUrl(doc, loc),
// rolls(postRef, allPostRefs) -> [RollPlace], replyBox(doc)}. PostRef = {id, el, authorEl, author}.
// RollPlace = {after: Node} (marker goes after that node) or {text: Text, end: offset} (after that character).

const PLATFORMS = [];

function registerPlatform(adapter) {
  PLATFORMS.push(adapter);
  return adapter;
}

// Elements whose id is prefix+digits, outermost first, ignoring nested duplicates.
function postsByIdPrefix(doc, prefix, selector) {
  const re = new RegExp(`^${prefix}(\\d+)$`);
  const seen = new Set();
  const out = [];
  for (const el of doc.querySelectorAll(selector || `[id^="${prefix}"]`)) {
    const m = re.exec(el.id);
    if (!m || seen.has(m[1])) continue;
    seen.add(m[1]);
    out.push({ id: m[1], el });
  }
  return out;
}

function firstMatch(root, selectors) {
  for (const sel of selectors) {
    const el = root.querySelector(sel);
    if (el && textOf(el)) return el;
  }
  return null;
}

// The first selector (in order of preference, not document order) that matches: the post's body.
function bodyOf(root, selectors) {
  for (const sel of selectors) {
    const el = root.querySelector(sel);
    if (el) return el;
  }
  return root;
}

// An element's text as the scraper reads a name or a date (htmltext.inline_text): whitespace runs (zero-width
// spaces too) as one space, trimmed, without control characters.
function plainText(el) {
  if (!el) return "";
  return (el.textContent || "").replace(/[\s\u200b]+/g, " ").replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, "").trim();
}

// A post the page gives no id: `h` + FNV-1a (32 bit, hex) of its author and its date as written, `-2`, `-3`…
// for a repeat on the page (`seen`, updated), as the scraper's base.content_post_id makes it.
function contentPostId(author, dateText, seen) {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(`${author.trim()}\n${dateText.trim()}`)) {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  }
  const base = `h${hash.toString(16).padStart(8, "0")}`;
  let id = base;
  for (let n = 2; seen.has(id); n += 1) id = `${base}-${n}`;
  seen.add(id);
  return id;
}

function withAuthor(ref, selectors) {
  const authorEl = firstMatch(ref.el, selectors);
  return { ...ref, authorEl, author: textOf(authorEl) };
}

// Rolls recognised in text the way the scraper's tolerant fallback reads them: "1d12+6 … 7 … 13".
const TEXT_ROLL_RE = /\b\d{0,3}d\d{1,3}(?:\s*[+-]\s*\d+)*\b/gi;

function textRollPlaces(root) {
  const places = [];
  if (!root) return places;
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode(node) {
      const parent = node.parentElement;
      // quotes and code are not the poster's rolls (older ForumFree pages: div#quote, div#code)
      if (!parent || parent.closest("script,style,textarea,blockquote,.quote,.quote_top,#quote,cite,code,.codebox,#code,[data-arbitro]")) {
        return NodeFilter.FILTER_REJECT;
      }
      return NodeFilter.FILTER_ACCEPT;
    },
  });
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    TEXT_ROLL_RE.lastIndex = 0;
    for (let m = TEXT_ROLL_RE.exec(node.data); m; m = TEXT_ROLL_RE.exec(node.data)) {
      places.push({ text: node, end: m.index + m[0].length });
    }
  }
  return places;
}

// Rolls the forum's roller rendered as elements, else the text fallback.
function elementOrTextRolls(root, selectors) {
  if (!root) return [];
  const found = [];
  for (const el of root.querySelectorAll(selectors.join(","))) {
    if (el.closest("blockquote,.quote,#quote,cite")) continue;
    if (found.some((f) => f.contains(el))) continue;
    found.push(el);
  }
  if (found.length) return found.map((el) => ({ after: el }));
  return textRollPlaces(root);
}

function isInlineEl(el) {
  return /^inline/.test(getComputedStyle(el).display);
}

// Where a zero-size marker can join an existing line at the end of `el`: the deepest last block whose last
// content is inline. A marker placed after a block, or after a block's last block child, would open a new line.
function lineEndContainer(el) {
  if (isInlineEl(el)) return null; // inline: the marker goes right after it
  let target = el;
  for (;;) {
    let last = target.lastChild;
    while (last && ((last.nodeType === 3 && !last.data.trim()) || last.nodeType === 8)) last = last.previousSibling;
    if (!last || last.nodeType !== 1 || isInlineEl(last) || last.tagName === "BR") return target;
    target = last;
  }
}

// SCEditor (Forumotion's editor, also on some phpBB/MyBB boards) hides the forum's textarea behind its own: a
// textarea of its own in source mode, an iframe's body in WYSIWYG mode. It writes either back into the forum's
// textarea when the form is sent, so text put straight into the hidden one would be overwritten.
function replyTarget(box) {
  const scope = box.form || box.parentElement;
  const sce = scope ? scope.querySelector(".sceditor-container") : null;
  if (!sce) return { kind: "textarea", el: box };
  const source = sce.querySelector("textarea");
  const frame = sce.querySelector("iframe");
  const shown = (el) => !!el && getComputedStyle(el).display !== "none";
  const sourceMode = sce.classList.contains("sourceMode") ||
    (!sce.classList.contains("wysiwygMode") && shown(source) && !shown(frame));
  if (sourceMode && source) return { kind: "textarea", el: source };
  let body = null;
  try {
    body = frame && frame.contentDocument ? frame.contentDocument.body : null;
  } catch (_e) {
    body = null; // a cross-origin frame: not an editor we can write into
  }
  if (body && body.isContentEditable) return { kind: "rich", el: body };
  return { kind: "textarea", el: source || box };
}

function replyBoxFrom(doc, selectors) {
  for (const sel of selectors) {
    const el = doc.querySelector(sel);
    if (el && el.tagName === "TEXTAREA" && !el.disabled && !el.readOnly) return el;
  }
  return null;
}

function queryParam(urlLike, name) {
  try {
    return new URL(urlLike, location.href).searchParams.get(name);
  } catch (_e) {
    return null;
  }
}

function detectPlatform(doc, loc) {
  let best = null;
  let bestScore = 0;
  for (const p of PLATFORMS) {
    let score = 0;
    try {
      score = p.detect(doc, loc);
    } catch (_e) {
      score = 0;
    }
    if (score > bestScore) {
      best = p;
      bestScore = score;
    }
  }
  return best;
}

// ---- 41_platform_forumfree.js ----
// platform forumfree: ForumFree / ForumCommunity, current skin (li.post#ee<id>) and classic table skins.

// The posts are found as the scraper finds them (scraper/platforms/forumfree.py), with the same ids: the
// service's verdicts are keyed by them.
const FF_ENTRY_RE = /^entry(\d+)$/;
const FF_ENTRY_HREF_RE = /#entry(\d+)$/;
// The header's date text: "Inviato il: 11/2/2009, 20:27", an English-interface forum's "Posted on 3/4/2015, 18:58".
const FF_POSTED_RE = /(?:Inviato il|Posted on|Posted)\s*:?\s*(.+?)\s*$/;

function ffEntryId(a) {
  const m = FF_ENTRY_RE.exec(a.id || a.getAttribute("name") || "");
  return m ? m[1] : null;
}

// The element just before `el` (a comment there is no anchor, as for lxml's getprevious()).
function ffPrevious(el) {
  let n = el.previousSibling;
  while (n && n.nodeType === 3) n = n.previousSibling;
  return n && n.nodeType === 1 ? n : null;
}

// The post's date as written: the `title` of its `#entry<id>` link (`11/2/2009, 20:27:00`), else the text after
// "Inviato il:" in a header link, else in the header.
function ffHeadDate(head) {
  if (!head) return null;
  for (const a of head.querySelectorAll('a[href*="#entry"]')) {
    if (a.getAttribute("title")) return a.getAttribute("title");
  }
  for (const a of head.querySelectorAll("a")) {
    const m = FF_POSTED_RE.exec(plainText(a));
    if (m) return m[1];
  }
  const m = FF_POSTED_RE.exec(plainText(head));
  return m ? m[1] : null;
}

// A classic table post's id: `table#ee<id>`, else its header's `#entry<id>` link, else the `entry<id>` anchor
// just before the table, else (the 2009 skin page gives none) the id made from its author and date.
function ffTablePostId(table, cell, seen) {
  const ee = /^ee(\d+)$/.exec(table.id);
  if (ee) return ee[1];
  const head = cell.querySelector("td.right_top");
  for (const a of (head || cell).querySelectorAll('a[href*="#entry"]')) {
    const m = FF_ENTRY_HREF_RE.exec(a.getAttribute("href"));
    if (m) return m[1];
  }
  const prev = ffPrevious(table);
  if (prev) {
    for (const a of [prev, ...prev.querySelectorAll("a")]) {
      const id = a.tagName === "A" ? ffEntryId(a) : null;
      if (id) return id;
    }
  }
  return contentPostId(plainText(cell.querySelector("td.left_top .nick, .nick")), ffHeadDate(head) || "", seen);
}

// Classic table skins (the real pages: `table#ee<id>` > `td.post`, or a `td.post` in a table without an id):
// each td.post holding a nick, not inside another (a post quoting a page's markup); the post is its table.
function ffTablePosts(doc) {
  const seen = new Set();
  const out = [];
  for (const cell of doc.querySelectorAll("td.post")) {
    if (cell.parentElement.closest("td.post") || !cell.querySelector(".nick")) continue;
    const table = cell.closest("table");
    if (table) out.push({ id: ffTablePostId(table, cell, seen), el: table });
  }
  return out;
}

// IPB-style classic pages: the table holding the a[name=entry<id>] anchor.
function ffAnchorPosts(doc) {
  const seen = new Set();
  const out = [];
  for (const a of doc.querySelectorAll('a[name^="entry"], a[id^="entry"]')) {
    const id = ffEntryId(a);
    const el = id && (a.closest("table.maintable") || a.closest("table") || a.closest("div.post"));
    if (!el || seen.has(id)) continue;
    seen.add(id);
    out.push({ id, el });
  }
  return out;
}

registerPlatform({
  id: "forumfree",
  hostRe: /(^|\.)(forumfree\.it|forumfree\.net|forumcommunity\.net|forumcommunity\.it|blogfree\.net)$/i,
  detect(doc, loc) {
    const posts = this.rawPosts(doc);
    if (!posts.length) return 0;
    let score = 2;
    if (this.hostRe.test(loc.hostname)) score += 3;
    if (doc.body && doc.body.id === "topic") score += 2;
    if (doc.querySelector('a[id^="entry"], a[name^="entry"], td.post .nick')) score += 1;
    return score;
  },
  skin(doc) {
    return doc.querySelector('li.post[id^="ee"]') ? "ff-current" : "ff-classic";
  },
  // The first layout the page has: li.post#ee<id> (current), td.post tables (classic), entry anchors (IPB-style).
  rawPosts(doc) {
    const current = postsByIdPrefix(doc, "ee", 'li.post[id^="ee"]');
    if (current.length) return current;
    const tables = ffTablePosts(doc);
    return tables.length ? tables : ffAnchorPosts(doc);
  },
  posts(doc) {
    return this.rawPosts(doc).map((ref) => withAuthor(ref, [
      "td.left_top .nick a", "td.left_top .nick", ".nick a", ".normalname a", ".nick", ".normalname",
      'a[href*="act=Profile"]', ".author a", ".name a",
    ]));
  },
  threadUrl(doc, loc) {
    let tid = queryParam(loc.href, "t");
    if (!tid) {
      const input = doc.querySelector('input[name="t"]');
      if (input && /^\d+$/.test(input.value)) tid = input.value;
    }
    if (!tid || !/^\d+$/.test(tid)) return null;
    return `${loc.origin}/?t=${tid}`;
  },
  rolls(ref) {
    const body = bodyOf(ref.el, [
      "td.right div.color", "td.right.Item table.color", ".postcolor", "table.color", ".color", ".post_content",
      "td.right",
    ]);
    return elementOrTextRolls(body, [".dice_roll", ".dice", ".dado", ".dadi", "[class*='dice']", "[class*='roll']"]);
  },
  replyBox(doc) {
    return replyBoxFrom(doc, ['textarea[name="Post"]', "textarea#Post", "form#send textarea", "form[name='REPLIER'] textarea"]);
  },
});

// ---- 42_platform_forumotion.js ----
// platform forumotion: Forumotion / forumattivo (phpbb2, phpbb3, invision, modernbb templates); dice come in a Game-Master post.

const FORUMOTION_HOST_RE = /(^|\.)(forumattivo\.com|forumattivo\.it|forumotion\.com|forumotion\.net|forumotion\.org|forumactif\.com|forumactif\.org|forumactif\.net|forumactif\.fr|foroactivo\.com|forumieren\.com)$/i;
// The message's frame line, "Il membro 'X' ha effettuato la seguente azione : <the admin's wording>", and its
// translations: a tolerance for dice messages whose faces are not images.
const FORUMOTION_DICE_RE = /(effettuato la seguente azione|a effectu[ée] l'action suivante|has done the following action|realizó la siguiente acción)/i;

// A die line: "#1 'Attacco (d12)' :" followed by the face images (what the scraper reads, scraper/platforms/forumotion.py).
const FORUMOTION_DIE_LINE_RE = /^\s*(#\d+\s*)?'[^']+'\s*:\s*$/;
// Each version's post loop (Etana/template viewtopic_body.tpl): where {POSTER_NAME} sits alone, then fallbacks.
const FORUMOTION_AUTHORS = [
  ".postprofile-name a[href^='/u']", "span.name a[href^='/u']", "p.author a[href^='/u']",
  ".postprofile dt a[href^='/u']", ".postprofile-details dt a[href^='/u']", ".postprofile-name", ".postprofile dt strong",
  "span.name strong", "p.author strong", ".postprofile-details dt", "h4.author a", "h4.author strong",
  "a[href^='/u']",
];

// The die lines of a post: text "'Name' :" whose next element on the line is an image.
function forumotionDieLines(root) {
  const out = [];
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!FORUMOTION_DIE_LINE_RE.test(node.data) || node.parentElement.closest("[data-arbitro],blockquote,cite")) continue;
    let sib = node.nextSibling;
    while (sib && sib.nodeType === 3 && !sib.data.trim()) sib = sib.nextSibling;
    if (sib && sib.nodeName === "IMG") out.push(node);
  }
  return out;
}

registerPlatform({
  id: "forumotion",
  detect(doc, loc) {
    const posts = this.posts(doc, true);
    if (!posts.length) return 0;
    let score = 1;
    if (FORUMOTION_HOST_RE.test(loc.hostname)) score += 4;
    if (/^\/t\d+(p\d+)?-/.test(loc.pathname)) score += 3;
    if (doc.querySelector('[class*="post--"]')) score += 2;
    if (doc.querySelector('script[src*="illiweb.com"], link[href*="illiweb.com"]')) score += 2;
    if (doc.querySelector('a[href^="/u"]')) score += 1;
    return score;
  },
  skin(doc) {
    if (doc.querySelector("table.forumline")) return "phpbb2";
    if (doc.querySelector("body#modernbb, .post .post-head")) return "modernbb";
    if (doc.querySelector(".post .post-entry, #ipbwrapper")) return "invision";
    return "phpbb3";
  },
  posts(doc, quick) {
    const byId = postsByIdPrefix(doc, "p");
    const known = new Set(byId.map((r) => r.id));
    for (const el of doc.querySelectorAll('[class*="post--"]')) {
      const m = /(?:^|\s)post--(\d+)(?:\s|$)/.exec(el.className);
      if (m && !known.has(m[1])) {
        known.add(m[1]);
        byId.push({ id: m[1], el });
      }
    }
    if (quick) return byId;
    byId.sort((a, b) => (a.el.compareDocumentPosition(b.el) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
    return byId.map((ref) => withAuthor(ref, FORUMOTION_AUTHORS));
  },
  threadUrl(doc, loc) {
    const m = /^\/t(\d+)(?:p\d+)?(-[^/?#]*)?/.exec(loc.pathname);
    if (!m) return null;
    return `${loc.origin}/t${m[1]}${m[2] || ""}`;
  },
  // Known by its content, whoever posts it (the founder by default, or any account the admin sets, renamed or not).
  isDicePost(ref) {
    return forumotionDieLines(ref.el).length > 0 || FORUMOTION_DICE_RE.test(textOf(ref.el));
  },
  // The player's rolls are in the Game-Master post that follows it: one line per roll ("#1 'Attacco (d12)' : <img>…").
  rolls(ref, all) {
    const i = all.findIndex((r) => r.id === ref.id);
    const next = i >= 0 ? all[i + 1] : null;
    if (!next || !this.isDicePost(next)) return [];
    const places = [];
    const walker = document.createTreeWalker(next.el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!/^\s*(#\d+\s*)?'[^']+'\s*:/.test(node.data) || node.parentElement.closest("[data-arbitro]")) continue;
      // The marker goes after the line's last die image, before the <br> that ends the line.
      let last = node;
      for (let sib = node.nextSibling; sib && sib.nodeName !== "BR"; sib = sib.nextSibling) last = sib;
      places.push({ after: last });
    }
    return places;
  },
  replyBox(doc) {
    return replyBoxFrom(doc, ["textarea#text_editor_textarea", 'textarea[name="message"]', "form#quick_reply textarea"]);
  },
});

// ---- 43_platform_phpbb.js ----
// platform phpbb: phpBB 3.x prosilver, as its viewtopic_body.html renders a post; fancydice's div.dicebox rolls.

// The template's postrow: div#p<id>.post.has-profile > div.inner > dl.postprofile#profile<id> (dt: the author as
// get_username_string writes it, a.username or a.username-coloured; a guest's name in <strong>), then
// div.postbody > div#post_content<id> > h3, p.author (by <strong>name</strong> » <time>), div.content.
const PHPBB_POSTS = 'div.post[id^="p"], div[id^="p"].post';
// The badge goes beside the name in p.author (the post's own header line), else in the mini-profile.
const PHPBB_AUTHOR = [
  "p.author a.username", "p.author a.username-coloured",
  "dl.postprofile dt a.username", "dl.postprofile dt a.username-coloured",
  "p.author .username", "p.author .username-coloured", "dl.postprofile dt .username",
  "dl.postprofile dt .username-coloured", "p.author strong", "dl.postprofile dt strong",
];

registerPlatform({
  id: "phpbb",
  detect(doc, loc) {
    const posts = postsByIdPrefix(doc, "p", PHPBB_POSTS);
    if (!posts.length) return 0;
    let score = 1;
    if (/viewtopic\.php$/i.test(loc.pathname)) score += 4;
    if (doc.body && doc.body.id === "phpbb") score += 3;
    if (posts.some((p) => p.el.querySelector(`dl.postprofile#profile${p.id}`))) score += 1;
    if (doc.querySelector('a[href*="memberlist.php?mode=viewprofile"]')) score += 1;
    return score;
  },
  skin() {
    return "prosilver";
  },
  posts(doc) {
    return postsByIdPrefix(doc, "p", PHPBB_POSTS).map((ref) => withAuthor(ref, PHPBB_AUTHOR));
  },
  threadUrl(doc, loc) {
    let tid = queryParam(loc.href, "t");
    if (!tid) {
      const link = doc.querySelector('h2.topic-title a[href*="t="], h2 a[href*="viewtopic.php"][href*="t="], input[name="t"]');
      if (link) tid = link.tagName === "INPUT" ? link.value : queryParam(link.getAttribute("href"), "t");
    }
    if (!tid || !/^\d+$/.test(tid)) return null;
    return `${loc.origin}${loc.pathname}?t=${tid}`;
  },
  rolls(ref) {
    // the post's own content: fancydice boxes there (never in a quote), else rolls written in its text
    const body = bodyOf(ref.el, [`#post_content${ref.id} div.content`, "div.content", ".postbody"]);
    return elementOrTextRolls(body, [".dicebox", ".dice", "[class*='dice']"]);
  },
  replyBox(doc) {
    return replyBoxFrom(doc, ["textarea#message", 'textarea[name="message"]']);
  },
});

// ---- 50_api.js ----
// api: the one request per page view to the Arbitro service (GET the thread, created on first view), session-cached.

const CACHE_PREFIX = "arbitro.audit.v1|";

function parseJsonBody(text) {
  try {
    return JSON.parse(text);
  } catch (_e) {
    return undefined;
  }
}

function httpErrorFrom(response) {
  const body = parseJsonBody(response.text);
  const err = isPlainObject(body) && isPlainObject(body.error) ? body.error : {};
  const Cls = response.status === 404 ? NotFoundError : HttpError;
  return new Cls(`HTTP ${response.status}`, {
    status: response.status,
    code: typeof err.code === "string" ? err.code : null,
    serviceMessage: typeof err.message === "string" ? err.message.slice(0, 300) : null,
    details: err.details,
  });
}

function checkAudit(doc) {
  if (!isPlainObject(doc) || doc.format !== "arbitro.audit/1" || !Array.isArray(doc.posts)) {
    throw new BadResponseError("not an arbitro.audit/1 document");
  }
  return doc;
}

// One GET: the stored audit, or (create=1) the first audit of a thread the service has not seen yet.
// {thread_id, fetched_at, refreshing, audit}, or {pending: true, retryAfter} when the first audit takes longer
// than the service waits (202): the caller says "analisi in corso" and asks again after retryAfter seconds.
// `posts`: the page's post ids — the answer carries those posts only (plus the fighters' state and the next turn),
// so a page view costs a page, not the whole thread.
async function requestThread(service, threadUrl, timeout, posts) {
  const only = posts && posts.length ? `&posts=${encodeURIComponent(posts.join(","))}` : "";
  const getUrl = `${service}/api/v1/threads?url=${encodeURIComponent(threadUrl)}&create=1${only}`;
  const r = await gm.request({ method: "GET", url: getUrl, timeout });
  if (r.status === 202) {
    const body = parseJsonBody(r.text);
    const retry = isPlainObject(body) && Number.isFinite(body.retry_after) ? body.retry_after : 3;
    return { pending: true, retryAfter: Math.min(Math.max(retry, 1), 30), audit: null,
      thread_id: isPlainObject(body) ? body.thread_id : null };
  }
  if (r.status < 200 || r.status >= 300) throw httpErrorFrom(r);
  const body = parseJsonBody(r.text);
  if (!isPlainObject(body)) throw new BadResponseError("not JSON");
  checkAudit(body.audit);
  return { thread_id: body.thread_id, fetched_at: body.fetched_at, refreshing: !!body.refreshing, audit: body.audit };
}

// The page's posts as the service reads them for a provisional audit: each post element's own markup, with what is
// no part of a post taken out (forms, fields, scripts: a reply box's tokens, the page's user data), nothing else.
const NOT_POST_MARKUP = "script, style, form, input, textarea, select, button, iframe, object, noscript";

function postMarkup(refs) {
  const serializer = new XMLSerializer(); // serialises, never parses: nothing of the page is ever written as HTML
  return refs.map((ref) => {
    const copy = ref.el.cloneNode(true);
    for (const el of copy.querySelectorAll(NOT_POST_MARKUP)) el.remove();
    return serializer.serializeToString(copy);
  });
}

// The open page audited at once (POST /threads/provisional) while the service reads the whole thread:
// {audit, retryAfter, thread_id}. Its verdicts are the ones the page alone can tell; the full audit follows.
async function requestProvisional(settings, pageUrl, refs) {
  const service = serviceUrlOf(settings);
  if (!service) throw new ConfigError("service URL not set");
  const r = await gm.request({ method: "POST", url: `${service}/api/v1/threads/provisional`,
    body: { url: pageUrl, posts: postMarkup(refs) }, timeout: settings.timeoutMs });
  if (r.status < 200 || r.status >= 300) throw httpErrorFrom(r);
  const audit = checkAudit(parseJsonBody(r.text));
  const prov = isPlainObject(audit.provisional) ? audit.provisional : {};
  const retry = Number.isFinite(prov.retry_after) ? prov.retry_after : 3;
  return { audit, retryAfter: Math.min(Math.max(retry, 1), 60), thread_id: prov.thread_id, provisional: prov };
}

function cacheKey(service, threadUrl) {
  return `${CACHE_PREFIX}${service}|${threadUrl}`;
}

function readCache(key, maxAgeMs) {
  try {
    const raw = sessionStorage.getItem(key);
    if (!raw) return null;
    const entry = JSON.parse(raw);
    if (!entry || typeof entry.t !== "number" || Date.now() - entry.t > maxAgeMs) return null;
    checkAudit(entry.data && entry.data.audit);
    return entry.data;
  } catch (_e) {
    return null;
  }
}

function writeCache(key, data) {
  try {
    sessionStorage.setItem(key, JSON.stringify({ t: Date.now(), data }));
  } catch (_e) {
    // storage full or disabled: no cache, still one request per view
  }
}

// Posts on this page the audit does not know yet and that come after its last post: the audit is behind.
// The audit's last post: its own when the answer is a page's slice (page_of), else the last one it carries.
function lastPostOf(audit) {
  if (isPlainObject(audit.page_of) && audit.page_of.last_post !== undefined) {
    return audit.page_of.last_post === null ? null : normPostId(audit.page_of.last_post);
  }
  return audit.posts.length ? normPostId(audit.posts[audit.posts.length - 1].id) : null;
}

function auditIsBehind(audit, pageIds) {
  const known = new Set(audit.posts.map((p) => normPostId(p.id)));
  const lastId = lastPostOf(audit);
  const last = lastId === null ? -1 : Number(lastId);
  return pageIds.some((id) => !known.has(id) && Number(id) > last);
}

// "Not a fight here" (403/422) remembered for the session: such a page is not asked about again.
function readNegative(key, maxAgeMs) {
  try {
    const entry = JSON.parse(sessionStorage.getItem(`${key}|no`) || "null");
    if (!entry || typeof entry.t !== "number" || Date.now() - entry.t > maxAgeMs) return null;
    return new HttpError(`HTTP ${entry.status}`, { status: entry.status, code: entry.code, cached: true });
  } catch (_e) {
    return null;
  }
}

function writeNegative(key, err) {
  try {
    sessionStorage.setItem(`${key}|no`, JSON.stringify({ t: Date.now(), status: err.status, code: err.code }));
  } catch (_e) {
    // no session storage: the service remembers it too
  }
}

// `pageIds`: the players' posts of the page (is the audit behind?); `askIds`: every post the page shows, a
// Game-Master dice post included, whose slice of the audit is asked for.
async function loadAudit(settings, threadUrl, pageIds, askIds = pageIds) {
  const service = serviceUrlOf(settings);
  if (!service) throw new ConfigError("service URL not set");
  const key = cacheKey(service, threadUrl) + "|" + askIds.join(",");  // one page's slice
  const maxAge = settings.cacheSeconds * 1000;
  const negative = readNegative(key, maxAge);
  if (negative) throw negative;
  const cached = readCache(key, maxAge);
  if (cached && !cached.refreshing && !auditIsBehind(cached.audit, pageIds)) return { ...cached, fromCache: true };
  let fresh;
  try {
    fresh = await requestThread(service, threadUrl, settings.timeoutMs, askIds);
  } catch (e) {
    if (e instanceof HttpError && e.silent) writeNegative(key, e);
    throw e;
  }
  if (!fresh.refreshing && !fresh.pending) writeCache(key, fresh);
  return { ...fresh, fromCache: false };
}

function auditReportUrl(settings, threadUrl) {
  const service = serviceUrlOf(settings);
  return service ? `${service}/audit?url=${encodeURIComponent(threadUrl)}` : null;
}

// ---- 60_style.js ----
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

// ---- 70_render_post.js ----
// render post: per-post badge and state strip next to the author, roll markers, and the verdict tooltip.

// Everything the overlay added, so a settings change can take it all away again.
const OVERLAY = { nodes: [], splitParents: new Set(), layer: null, root: null, tip: null, tipFor: null, pinned: false, hideTimer: 0 };

function sevOf(v) {
  if (v.severity === "error") return "error";
  if (v.severity === "warning") return "warning";
  if (/ruling/i.test(String(v.code || ""))) return "ruling";
  return "info";
}

function summarise(verdicts) {
  const s = { error: 0, warning: 0, ruling: 0, info: 0 };
  for (const v of verdicts) s[sevOf(v)] += 1;
  s.worst = s.error ? "error" : s.warning ? "warning" : s.ruling ? "ruling" : "ok";
  return s;
}

const SEV_ICON = { error: "✗", warning: "⚠", ruling: "ⓘ", info: "ⓘ", ok: "✓" };

// ⓘ is missing from many fonts: drawn as a circled "i" (the word is in the title and aria-label).
function iconEl(sev) {
  if (sev === "ruling" || sev === "info") return h("span", { class: "ico-i", "aria-hidden": "true" }, "i");
  return h("span", { class: "ico", "aria-hidden": "true" }, SEV_ICON[sev] || SEV_ICON.ok);
}

function badgeLabel(s) {
  if (s.worst === "ok") return [iconEl("ok")];
  const parts = [];
  for (const k of ["error", "warning", "ruling"]) if (s[k]) parts.push(iconEl(k), h("span", { class: `n n-${k}` }, String(s[k])));
  return parts;
}

function badgeTitle(s) {
  if (s.worst === "ok") return t("legal");
  const parts = [];
  if (s.error) parts.push(`${s.error} ${t("errors")}`);
  if (s.warning) parts.push(`${s.warning} ${t("warnings")}`);
  if (s.ruling) parts.push(`${s.ruling}: ${t("rulings")}`);
  return parts.join(", ");
}

// `expiry` (optional): {name: "fine del turno N di X"} when the counts come as a plain {name: count} map.
function stacksList(stacks, expiry) {
  const out = [];
  if (Array.isArray(stacks)) {
    for (const s of stacks) {
      if (typeof s === "string") out.push({ name: s });
      else if (isPlainObject(s)) out.push({ ...s, name: s.name || s.stack || s.type || "?" });
    }
  } else if (isPlainObject(stacks)) {
    for (const [name, v] of Object.entries(stacks)) {
      const expires = isPlainObject(expiry) && expiry[name] !== undefined ? expiry[name] : undefined;
      if (typeof v === "number") out.push(expires === undefined ? { name, count: v } : { name, count: v, expires });
      else if (isPlainObject(v)) out.push({ ...v, name });
      else out.push({ name, count: v });
    }
  }
  return out;
}

function fmtStack(s) {
  let text = String(s.name);
  if (s.count !== undefined && s.count !== null && s.count !== 1) text += ` ×${fmtValue(s.count)}`;
  if (s.remaining !== undefined && s.remaining !== null) text += ` (${fmtValue(s.remaining)} ${t("remaining")})`;
  else if (s.expires !== undefined && s.expires !== null) text += ` (${t("expires")}: ${fmtValue(s.expires)})`;
  return text;
}

// Pools with a maximum (pv/pv_max, pe/pe_max, cosmo/cosmo_max, …) and short numeric resources, in the order the
// service gives (each ruleset's own: PV/PE, PV/Cosmo, PF/PD/Slot, PS/PF/PR); named as the engine's reports name them.
function resourcesText(st) {
  const out = [];
  for (const [key, val] of Object.entries(st)) {
    if (/_max$/.test(key)) continue;
    const label = key.length <= 3 ? key.toUpperCase() : key.charAt(0).toUpperCase() + key.slice(1);
    if (typeof val === "number") {
      const max = st[`${key}_max`];
      if (typeof max === "number") out.push(`${label} ${fmtValue(val)}/${fmtValue(max)}`);
      else if (key.length <= 3) out.push(`${label} ${fmtValue(val)}`);
    } else if (isPlainObject(val) && typeof val.current === "number") {
      out.push(typeof val.max === "number" ? `${label} ${val.current}/${val.max}` : `${label} ${val.current}`);
    }
  }
  return out;
}

function stateFor(states, name) {
  if (!isPlainObject(states) || !name) return null;
  if (isPlainObject(states[name])) return states[name];
  const key = lowerKey(name);
  for (const [k, v] of Object.entries(states)) if (lowerKey(k) === key && isPlainObject(v)) return v;
  return null;
}

function stripText(st) {
  const parts = resourcesText(st).concat(stacksList(st.stacks, st.stacks_expiry).map(fmtStack));
  for (const c of asArray(st.conditions)) parts.push(typeof c === "string" ? c : fmtValue(c));
  return parts.join(" · ");
}

function makeHost(tag, kind, data) {
  const host = document.createElement(tag);
  host.setAttribute(ARBITRO.ATTR, kind);
  for (const [k, v] of Object.entries(data || {})) host.setAttribute(`data-${k}`, String(v));
  host.style.cssText = HOST_STYLE; // CSSOM, not a style attribute: allowed under a strict CSP
  const root = host.attachShadow({ mode: "open" });
  adoptStyles(root);
  OVERLAY.nodes.push(host);
  return { host, root };
}

function verdictItem(v) {
  const sev = sevOf(v);
  const nums = [];
  // an info verdict's message tells what happened: "atteso/trovato" would read as a mismatch
  const compared = v.severity !== "info";
  if (compared && v.expected !== undefined && v.expected !== null) nums.push(`${t("expected")}: ${fmtValue(v.expected)}`);
  if (compared && v.found !== undefined && v.found !== null) nums.push(`${t("found")}: ${fmtValue(v.found)}`);
  if (Number.isInteger(v.roll)) nums.push(`${t("roll")} ${v.roll + 1}`);
  return h("li", { class: `v sev-${sev}`, "data-code": v.code || "" },
    h("span", { class: "msg" }, iconEl(sev), ` ${v.message || v.code || ""}`),
    nums.length ? h("span", { class: "nums" }, nums.join(" · ")) : null,
    v.rule ? h("span", { class: "rule" }, `${t("rule")}: ${v.rule}`) : null,
    v.assumption ? h("span", { class: "rule" }, `${t("assumption")}: ${v.assumption}`) : null,
    v.code ? h("span", { class: "code" }, v.code) : null);
}

function tipContent(postAudit) {
  const who = postAudit.character && postAudit.character !== postAudit.author
    ? `${postAudit.author} (${postAudit.character})` : postAudit.author || "";
  const rank = { error: 0, warning: 1, ruling: 2, info: 3 };
  // Worst first; the service's order within a severity (Array.prototype.sort is stable).
  const verdicts = asArray(postAudit.verdicts).filter(isPlainObject).sort((a, b) => rank[sevOf(a)] - rank[sevOf(b)]);
  const st = stateFor(postAudit.state, postAudit.character || postAudit.author);
  return [
    h("h3", null, `${t("post")} #${normPostId(postAudit.id)} — ${who}`),
    verdicts.length ? h("ul", { class: "verdicts" }, verdicts.map(verdictItem)) : h("p", { class: "ok" }, iconEl("ok"), ` ${t("legal")}`),
    st ? h("p", { class: "state" }, `${t("stateAfter")}: ${stripText(st)}`) : null,
  ];
}

function placeTip(anchor) {
  const tip = OVERLAY.tip;
  const r = anchor.getBoundingClientRect();
  tip.style.left = "0px";
  tip.style.top = "0px";
  const w = tip.offsetWidth;
  const hgt = tip.offsetHeight;
  const vw = document.documentElement.clientWidth;
  const vh = document.documentElement.clientHeight;
  const left = Math.max(8, Math.min(r.left, vw - w - 8));
  const top = r.bottom + 4 + hgt > vh && r.top - 4 - hgt > 0 ? r.top - 4 - hgt : r.bottom + 4;
  tip.style.left = `${Math.round(left)}px`;
  tip.style.top = `${Math.round(top)}px`;
}

function showTip(postAudit, anchor, pin) {
  clearTimeout(OVERLAY.hideTimer);
  const tip = OVERLAY.tip;
  if (!tip) return;
  if (OVERLAY.tipFor !== postAudit) {
    tip.replaceChildren(...tipContent(postAudit));
    OVERLAY.tipFor = postAudit;
  }
  tip.setAttribute("data-post", normPostId(postAudit.id));
  tip.hidden = false;
  OVERLAY.tipAnchor = anchor;
  if (pin !== undefined) OVERLAY.pinned = pin;
  placeTip(anchor);
}

function hideTip(force) {
  if (!OVERLAY.tip || (OVERLAY.pinned && !force)) return;
  OVERLAY.tip.hidden = true;
  OVERLAY.pinned = false;
  OVERLAY.tipFor = null;
}

function scheduleHide() {
  clearTimeout(OVERLAY.hideTimer);
  OVERLAY.hideTimer = setTimeout(() => hideTip(false), 250);
}

// Rolls or schema changed between two readings of the service (engine.evidence): a tag beside the badge with
// both reading times, so a reader sees it without opening the tooltip.
const CHANGED_CODES = new Set(["dice.changed_after_publication", "schema.changed_after_publication"]);

function tamperTag(verdicts) {
  const changed = verdicts.filter((v) => CHANGED_CODES.has(v.code));
  if (!changed.length) return null;
  const d = isPlainObject(changed[0].details) ? changed[0].details : {};
  const before = isPlainObject(d.before) ? d.before.fetched_at : null;
  const after = isPlainObject(d.after) ? d.after.fetched_at : null;
  const times = before && after ? `${t("readFirst")} ${fmtWhen(before)}, ${t("readAgain")} ${fmtWhen(after)}` : "";
  const sev = changed.some((v) => v.severity === "error") ? "error" : "warning";
  const label = t("changedAfterPublication");
  return h("span", { class: `tamper sev-${sev}`, title: times ? `${label}: ${times}` : label, "data-code": changed[0].code },
    times ? `${label} (${times})` : label);
}

// `provisional`: a page-local audit's badge, drawn dashed and titled as such until the full audit replaces it.
function renderBadge(ref, postAudit, settings, theme, provisional) {
  const verdicts = asArray(postAudit.verdicts).filter(isPlainObject);
  const s = summarise(verdicts);
  const { host, root } = makeHost("arbitro-badge", "badge", {
    post: ref.id, severity: s.worst, errors: s.error, warnings: s.warning, rulings: s.ruling, infos: s.info,
  });
  host.setAttribute("data-theme", theme);
  if (provisional) host.setAttribute("data-provisional", "1");
  const title = provisional ? `${badgeTitle(s)} (${t("provisional")})` : badgeTitle(s);
  const badge = h("button", { class: `badge sev-${s.worst}${provisional ? " provisional" : ""}`, type: "button",
    title, "aria-label": title }, badgeLabel(s));
  badge.addEventListener("mouseenter", () => showTip(postAudit, badge));
  badge.addEventListener("mouseleave", () => scheduleHide());
  badge.addEventListener("click", (e) => {
    e.preventDefault();
    e.stopPropagation();
    if (OVERLAY.pinned && OVERLAY.tipFor === postAudit) hideTip(true);
    else showTip(postAudit, badge, true);
  });
  const st = settings.showStrips ? stateFor(postAudit.state, postAudit.character || postAudit.author) : null;
  const text = st ? stripText(st) : "";
  const wrap = h("div", { class: "wrap" }, badge, tamperTag(verdicts),
    text ? h("span", { class: "strip", title: text }, text) : null);
  root.appendChild(wrap);
  // Next to the author's name, as a zero-size box: the forum's own layout does not move.
  const at = ref.authorEl;
  if (at && at.tagName === "A") at.after(host);
  else if (at) at.appendChild(host);
  else ref.el.insertBefore(host, ref.el.firstChild);
  return wrap;
}

// Near the right edge a pill opens leftwards instead of spilling out of the page. All reads, then all writes:
// one layout for the whole page.
function flipNearEdge(wraps) {
  const limit = document.documentElement.clientWidth - 4;
  const flips = wraps.filter((w) => w.getBoundingClientRect().right > limit);
  for (const w of flips) w.classList.add("flip");
}

function renderRollMarks(ref, postAudit, places, theme) {
  const byRoll = new Map();
  for (const v of asArray(postAudit.verdicts)) {
    // Marks are for what is wrong or open; a plain outcome note ("colpito", "difeso") stays in the tooltip.
    if (!isPlainObject(v) || !Number.isInteger(v.roll) || v.roll < 0 || sevOf(v) === "info") continue;
    if (!byRoll.has(v.roll)) byRoll.set(v.roll, []);
    byRoll.get(v.roll).push(v);
  }
  // Later places first: splitting a text node must not move the offsets still to come.
  const order = [...byRoll.keys()].filter((i) => places[i]).sort((a, b) => b - a);
  for (const i of order) {
    const vs = byRoll.get(i);
    const s = summarise(vs);
    const sev = s.worst === "ok" ? "info" : s.worst;
    const { host, root } = makeHost("arbitro-mark", "roll", { post: ref.id, roll: i, severity: sev });
    host.setAttribute("data-theme", theme);
    const title = vs.map((v) => `${SEV_ICON[sevOf(v)]} ${v.message || v.code}`).join("\n");
    const mark = h("span", { class: `mark sev-${sev}`, title, role: "img", "aria-label": title }, iconEl(sev));
    mark.addEventListener("click", (e) => {
      e.stopPropagation();
      showTip(postAudit, mark, true);
    });
    root.appendChild(mark);
    const place = places[i];
    // After a block (a dicebox) a zero-size box would still open a line of its own: go inside, at its end.
    if (place.into) {
      place.into.appendChild(host);
    } else if (place.after) place.after.after(host);
    else {
      place.text.splitText(place.end);
      OVERLAY.splitParents.add(place.text.parentNode);
      place.text.after(host);
    }
  }
}

function teardownOverlay() {
  for (const node of OVERLAY.nodes) node.remove();
  for (const parent of OVERLAY.splitParents) parent.normalize();
  OVERLAY.nodes = [];
  OVERLAY.splitParents = new Set();
  OVERLAY.layer = null;
  OVERLAY.root = null;
  OVERLAY.tip = null;
  OVERLAY.tipFor = null;
  OVERLAY.pinned = false;
}

// ---- 75_render_panel.js ----
// render panel: the fixed corner panel (status and errors, "Tocca a …", dice tags to copy or insert, report link, settings).

const PANEL = { el: null, status: null, turn: null, form: null, links: null, ctx: null };

function ensureLayer(theme) {
  if (OVERLAY.layer && OVERLAY.layer.isConnected) {
    if (theme) OVERLAY.layer.setAttribute("data-theme", theme);
    return OVERLAY.root;
  }
  const host = document.createElement("arbitro-layer");
  host.setAttribute(ARBITRO.ATTR, "layer");
  host.style.cssText = LAYER_STYLE;
  host.setAttribute("data-theme", theme || "light");
  const root = host.attachShadow({ mode: "open" });
  adoptStyles(root);
  const tip = h("div", { class: "tip", role: "tooltip", "data-arbitro-part": "tip" });
  tip.hidden = true;
  tip.addEventListener("mouseenter", () => clearTimeout(OVERLAY.hideTimer));
  tip.addEventListener("mouseleave", () => scheduleHide());
  root.appendChild(tip);
  (document.body || document.documentElement).appendChild(host);
  OVERLAY.nodes.push(host);
  listenOnce();
  OVERLAY.layer = host;
  OVERLAY.root = root;
  OVERLAY.tip = tip;
  PANEL.el = null;
  return root;
}

// Page-wide listeners, added once per page: Escape or a click elsewhere closes a pinned tooltip, and the
// tooltip follows its badge when the page scrolls. Passive, never preventDefault: the forum's handlers run as before.
let LISTENING = false;

function listenOnce() {
  if (LISTENING) return;
  LISTENING = true;
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && OVERLAY.tip && !OVERLAY.tip.hidden) hideTip(true);
  });
  document.addEventListener("click", (e) => {
    if (!OVERLAY.tip || OVERLAY.tip.hidden) return;
    const path = e.composedPath ? e.composedPath() : [];
    if (!path.some((n) => n && n.nodeType === 1 && n.hasAttribute && n.hasAttribute(ARBITRO.ATTR))) hideTip(true);
  }, { passive: true });
  window.addEventListener("scroll", () => {
    if (OVERLAY.tip && !OVERLAY.tip.hidden && OVERLAY.tipAnchor && OVERLAY.tipAnchor.isConnected) placeTip(OVERLAY.tipAnchor);
  }, { passive: true });
}

function ensurePanel(ctx, theme) {
  const root = ensureLayer(theme);
  PANEL.ctx = ctx;
  if (PANEL.el && PANEL.el.isConnected) return PANEL;
  const collapse = h("button", { class: "btn icon", type: "button", title: t("collapse"), "aria-label": t("collapse"), "data-action": "collapse" }, "▾");
  collapse.addEventListener("click", () => {
    const c = PANEL.el.classList.toggle("collapsed");
    collapse.textContent = c ? "▴" : "▾";
    collapse.title = c ? t("expand") : t("collapse");
  });
  const gear = h("button", { class: "btn icon", type: "button", title: t("settings"), "aria-label": t("settings"), "data-action": "settings" }, "⚙");
  gear.addEventListener("click", () => (PANEL.form.hidden ? openSettings() : closeSettings()));
  PANEL.status = h("section", { class: "status", "aria-live": "polite" });
  PANEL.status.hidden = true;
  PANEL.turn = h("section", { class: "turn" });
  PANEL.turn.hidden = true;
  PANEL.form = h("section", { class: "settings" });
  PANEL.form.hidden = true;
  PANEL.links = h("section", { class: "links" });
  PANEL.links.hidden = true;
  PANEL.el = h("div", { class: "panel", role: "complementary", "aria-label": t("title") },
    h("header", null, h("span", { class: "name" }, t("title")), gear, collapse),
    PANEL.status, PANEL.turn, PANEL.form, PANEL.links);
  root.appendChild(PANEL.el);
  return PANEL;
}

function setStatus(text, kind, retry) {
  const s = PANEL.status;
  s.replaceChildren(h("span", null, text));
  s.className = `status${kind ? ` ${kind}` : ""}`;
  s.setAttribute("data-kind", kind || "info");
  if (retry) {
    const b = h("button", { class: "btn", type: "button", "data-action": "retry" }, t("retry"));
    b.addEventListener("click", retry);
    s.append(" ", b);
  }
  s.hidden = !text;
}

function listSection(title, items, cls) {
  if (!items.length) return null;
  return h("div", { class: cls }, h("h3", null, title), h("ul", null, items.map((x) => h("li", null, x))));
}

function isEmpty(x) {
  return x === null || x === undefined || x === "" || (Array.isArray(x) && !x.length) || (isPlainObject(x) && !Object.keys(x).length);
}

function statText(name, v) {
  if (isPlainObject(v) && v.total !== undefined) {
    const rest = Object.entries(v).filter(([k, x]) => k !== "total" && !isEmpty(x)).map(([k, x]) => `${k} ${fmtValue(x)}`);
    return `${name}: ${fmtValue(v.total)}${rest.length ? ` (${rest.join(", ")})` : ""}`;
  }
  return `${name}: ${fmtValue(v)}`;
}

function lineText(x) {
  if (typeof x === "string") return x;
  if (isPlainObject(x)) return x.line || x.text || x.message || fmtValue(x);
  return fmtValue(x);
}

function flash(button, text, ms) {
  const old = button.getAttribute("data-label") || button.textContent;
  button.setAttribute("data-label", old);
  button.textContent = text;
  setTimeout(() => {
    button.textContent = old;
  }, ms || 1500);
}

function copyButton(text) {
  const b = h("button", { class: "btn", type: "button", "data-action": "copy" }, t("copy"));
  b.addEventListener("click", async () => {
    let ok = false;
    try {
      ok = await gm.copy(text);
    } catch (_e) {
      ok = false;
    }
    b.setAttribute("data-done", ok ? "copied" : "failed");
    flash(b, ok ? t("copied") : t("copyFailed"));
  });
  return b;
}

function insertIntoReply(reply, text) {
  const target = replyTarget(reply);
  if (target.kind === "rich") insertIntoRich(target.el, text);
  else insertIntoTextarea(target.el, text);
}

// A line of its own at the end of a WYSIWYG editor's body, as text (never markup): the editor turns the block into
// a line break of the BBCode it sends, and the [dice] tag stays literal text for the forum to read.
function insertIntoRich(body, text) {
  const doc = body.ownerDocument;
  const empty = !body.textContent.trim() && !body.querySelector("img,iframe,video,object,table");
  if (empty) while (body.firstChild) body.removeChild(body.firstChild); // only the editor's placeholder <p><br></p>
  const line = doc.createElement("div");
  line.textContent = text;
  body.appendChild(line);
  body.focus({ preventScroll: true });
  body.dispatchEvent(new Event("input", { bubbles: true }));
  body.dispatchEvent(new Event("keyup", { bubbles: true })); // older SCEditors note changes on keyup
}

const INSERTED = new WeakSet(); // reply boxes we wrote into: from then on their caret is where our text ended

function insertIntoTextarea(box, text) {
  const len = box.value.length;
  let start = box.selectionStart ?? len;
  let end = box.selectionEnd ?? len;
  // a box never clicked into has its caret at 0: the tag goes after what is already written, not before it
  if (start === 0 && end === 0 && len && !INSERTED.has(box)) start = end = len;
  const before = box.value.slice(0, start);
  const after = box.value.slice(end);
  const sep = before && !/\n$/.test(before) ? "\n" : "";
  const tail = after && !/^\n/.test(after) ? "\n" : ""; // a tag on a line of its own
  box.focus({ preventScroll: true });
  box.setRangeText(sep + text + tail, start, end, "end");
  INSERTED.add(box);
  box.dispatchEvent(new Event("input", { bubbles: true }));
  box.dispatchEvent(new Event("change", { bubbles: true }));
}

function insertButton(text, box) {
  const b = h("button", { class: "btn", type: "button", "data-action": "insert" }, t("insert"));
  b.addEventListener("click", () => {
    insertIntoReply(box, text);
    b.setAttribute("data-done", "inserted");
    flash(b, t("inserted"));
  });
  return b;
}

function renderTurn(next, ctx) {
  const sec = PANEL.turn;
  sec.replaceChildren();
  if (!isPlainObject(next) || !next.character) {
    sec.append(h("p", { class: "status" }, t("noNext")));
    sec.hidden = false;
    return;
  }
  const mine = ctx.settings.character && lowerKey(ctx.settings.character) === lowerKey(next.character);
  sec.append(h("p", { class: `next${mine ? " mine" : ""}`, "data-character": next.character },
    mine ? `${t("yourTurn")} (${next.character})` : `${t("nextTurn")} ${next.character}`));

  const incoming = asArray(next.incoming).filter(isPlainObject).map((a) => {
    const what = [a.action, a.technique ? `«${a.technique}»` : null].filter(Boolean).join(" ");
    const total = a.total !== undefined && a.total !== null ? ` — ${t("toBeat")}: ${fmtValue(a.total)}` : "";
    const where = a.post ? ` (${t("post")} #${normPostId(a.post)})` : "";
    return `${a.from || "?"}: ${what}${total}${where}`;
  });
  const stats = Array.isArray(next.stats)
    ? next.stats.map(lineText)
    : isPlainObject(next.stats) ? Object.entries(next.stats).map(([k, v]) => statText(k, v)) : [];
  const stacks = stacksList(next.stacks).map((s) => {
    const effect = s.effect || s.effects || s.description;
    return effect ? `${fmtStack(s)} — ${fmtValue(effect)}` : fmtStack(s);
  });
  const registro = asArray(next.registro).map(lineText).filter(Boolean);
  const hints = asArray(next.hints).map(lineText).filter(Boolean);

  sec.append(...[
    listSection(t("incoming"), incoming, "incoming"),
    listSection(t("stats"), stats, "stats"),
    listSection(t("stacks"), stacks, "stacks"),
  ].filter(Boolean));
  if (registro.length) {
    const block = listSection(t("registro"), registro, "registro");
    block.append(h("div", { class: "row" }, copyButton(registro.join("\n"))));
    sec.append(block);
  }
  // `dice_tags: [{label, tag}]`, or the engine's `dice: [{phase, action, tag}]`.
  const tags = asArray(next.dice_tags).concat(asArray(next.dice))
    .filter((d) => isPlainObject(d) && typeof d.tag === "string" && d.tag)
    .map((d) => ({ tag: d.tag, label: d.label || [d.action, d.phase ? `(${d.phase})` : null].filter(Boolean).join(" ") }));
  if (tags.length) {
    const box = ctx.platform.replyBox(document);
    const block = h("div", { class: "dice" }, h("h3", null, t("diceTags")));
    for (const d of tags) {
      block.append(h("div", { class: "tag" },
        d.label ? h("span", { class: "label" }, String(d.label)) : null,
        h("code", null, d.tag),
        copyButton(d.tag),
        box ? insertButton(d.tag, box) : null));
    }
    if (!box) block.append(h("p", { class: "status" }, t("replyBoxMissing")));
    sec.append(block);
  }
  if (hints.length) sec.append(listSection(t("hints"), hints, "hints"));
  sec.hidden = false;
}

function renderLinks(ctx, result) {
  const sec = PANEL.links;
  sec.replaceChildren();
  const report = auditReportUrl(ctx.settings, ctx.threadUrl);
  if (report) sec.append(h("a", { href: report, target: "_blank", rel: "noopener noreferrer", "data-action": "report" }, t("report")));
  const when = result && (result.fetched_at || (result.audit.thread && result.audit.thread.fetched_at));
  if (when) sec.append(h("span", { class: "status", title: String(when) }, ` · ${t("fetchedAt")} ${fmtWhen(when)}`));
  // Posts the service read earlier and the forum no longer shows (post.deleted): named here, they have no badge.
  const gone = asArray(result && result.audit && result.audit.deleted_posts).filter(isPlainObject);
  if (gone.length) {
    const title = gone.map((v) => v.message || v.code).join("\n");
    sec.append(h("span", { class: "tamper sev-warning", title, "data-part": "deleted" },
      ` · ${gone.length} ${t("deletedPosts")}`));
  }
  sec.hidden = !sec.firstChild;
}

function closeSettings() {
  PANEL.form.hidden = true;
  PANEL.form.replaceChildren();
}

function openSettings() {
  const ctx = PANEL.ctx;
  const s = ctx.settings;
  const host = ctx.host;
  PANEL.el.classList.remove("collapsed");
  const url = h("input", { type: "url", name: "serviceUrl", placeholder: serviceUrlOf({ serviceUrl: "" }) || "https://…" });
  url.value = s.serviceUrl;
  const ch = h("input", { type: "text", name: "character" });
  ch.value = s.character;
  const lang = h("select", { name: "language" }, h("option", { value: "it" }, "Italiano"), h("option", { value: "en" }, "English"));
  lang.value = s.language;
  const on = h("input", { type: "checkbox", name: "enabledHere" });
  on.checked = isEnabledHere(s, host);
  const strips = h("input", { type: "checkbox", name: "showStrips" });
  strips.checked = s.showStrips;
  const msg = h("p", { class: "status", "data-part": "message" });
  const save = h("button", { class: "btn", type: "button", "data-action": "save" }, t("save"));
  const cancel = h("button", { class: "btn", type: "button", "data-action": "cancel" }, t("cancel"));
  cancel.addEventListener("click", closeSettings);
  save.addEventListener("click", async () => {
    const raw = url.value.trim();
    if (raw && !safeHttpUrl(raw)) {
      msg.className = "status error";
      msg.textContent = t("badServiceUrl");
      return;
    }
    let next = { ...s, serviceUrl: raw.replace(/\/+$/, ""), character: ch.value.trim(), language: lang.value, showStrips: strips.checked };
    next = withHostEnabled(next, host, on.checked);
    const saved = await saveSettings(next);
    closeSettings();
    await ctx.restart(saved, t("saved"));
  });
  PANEL.form.replaceChildren(
    h("h3", null, t("settings")),
    h("label", null, t("serviceUrl"), url),
    h("label", null, t("character"), ch),
    h("label", null, t("language"), lang),
    h("label", { class: "check" }, on, t("enabledHere")),
    h("label", { class: "check" }, strips, t("showStrips")),
    msg,
    h("div", { class: "row" }, save, cancel));
  PANEL.form.hidden = false;
}

// ---- 90_main.js ----
// main: find the platform and its posts, ask the service once, draw badges, strips, roll marks and the panel.

function isFight(audit) {
  if (isPlainObject(audit.characters) && Object.keys(audit.characters).length) return true;
  return audit.posts.some((p) => isPlainObject(p) && ((Array.isArray(p.verdicts) && p.verdicts.length) ||
    (isPlainObject(p.state) && Object.keys(p.state).length)));
}

function pageContext(settings) {
  const platform = detectPlatform(document, location);
  if (!platform) return null;
  const posts = platform.posts(document);
  if (!posts.length) return null;
  const threadUrl = platform.threadUrl(document, location);
  if (!threadUrl) return null;
  return { settings, platform, posts, threadUrl, host: location.hostname, restart };
}

// The players' posts: a Forumotion Game-Master dice post belongs to the post it answers.
function pagePostIds(ctx) {
  const dice = ctx.platform.isDicePost ? (r) => ctx.platform.isDicePost(r) : () => false;
  return ctx.posts.filter((r) => !dice(r)).map((r) => r.id);
}

function drawAudit(ctx, result) {
  const audit = result.audit;
  const byId = new Map();
  for (const p of audit.posts) if (isPlainObject(p)) byId.set(normPostId(p.id), p);
  const theme = themeFor(ctx.posts[0].el);
  const panel = ensurePanel(ctx, theme);
  // Reads first (roll places, their display), then writes: no forced style or layout per post.
  const work = [];
  for (const ref of ctx.posts) {
    const pa = byId.get(ref.id);
    if (!pa) continue;
    try {
      const places = asArray(pa.verdicts).some((v) => isPlainObject(v) && Number.isInteger(v.roll))
        ? ctx.platform.rolls(ref, ctx.posts) : [];
      for (const place of places) {
        if (place.after && place.after.nodeType === 1) place.into = lineEndContainer(place.after);
      }
      work.push({ ref, pa, places });
    } catch (e) {
      console.warn("[arbitro] post", ref.id, e); // one odd post must not cost the others their badge
    }
  }
  const wraps = [];
  for (const { ref, pa, places } of work) {
    try {
      renderRollMarks(ref, pa, places, theme);
      wraps.push(renderBadge(ref, pa, ctx.settings, theme, !!result.provisional));
    } catch (e) {
      console.warn("[arbitro] post", ref.id, e);
    }
  }
  // Measured after the browser's own next layout and paint, not forced now.
  requestAnimationFrame(() => setTimeout(() => flipNearEdge(wraps), 0));
  // The "Tocca a" panel belongs to the page that shows the audit's last post.
  const last = lastPostOf(audit);
  const onLastPage = last !== null && ctx.posts.some((r) => r.id === last);
  if (onLastPage && !result.provisional) renderTurn(audit.next, ctx); // a provisional audit has no state yet
  renderLinks(ctx, result);
  const pageIds = pagePostIds(ctx);
  if (result.refreshing) setStatus(t("refreshing"), "info");
  else if (auditIsBehind(audit, pageIds)) setStatus(t("stale"), "info");
  else setStatus("", null);
  const followed = ctx.settings.character;
  const theirTurn = followed && isPlainObject(audit.next) && lowerKey(audit.next.character) === lowerKey(followed);
  // On a narrow screen the open panel would cover the page: a bar there, opened by its toggle.
  const narrow = typeof window.matchMedia === "function" && window.matchMedia("(max-width: 480px)").matches;
  if (!onLastPage || (followed && !theirTurn) || narrow) panel.el.classList.add("collapsed");
  OVERLAY.layer.setAttribute("data-state", "ready");
}

let RUNNING = null;
// The first audit of a thread is being made (202): asked again after the service's Retry-After, a few times.
const MAX_PENDING = 10;
let PENDING_TRIES = 0;
let PENDING_TIMER = null;
// The provisional audit of this page, asked once per page view while the first full audit is being made.
let PROVISIONAL = null;
// A first view whose GET has not answered after this long (the service is reading a thread it never saw) shows the
// open page's provisional audit meanwhile; a stored audit answers well before.
const PROVISIONAL_AFTER_MS = 200;
const SLOW = Symbol("slow");

// User-timing marks (free when nobody reads them): bench/bench_userscript.py measures the drawing with them.
function mark(name) {
  try {
    performance.mark(name);
  } catch (_e) {
    // no User Timing: nothing to measure with
  }
}

// What happened, told to whoever listens (the tests, the service's demo page) by an "arbitro:done" event.
function announce(outcome) {
  try {
    document.dispatchEvent(new CustomEvent("arbitro:done", { detail: outcome }));
  } catch (_e) {
    // an event is a courtesy, never a requirement
  }
  return outcome;
}

async function run(settings, notice) {
  LANG = settings.language;
  if (!isEnabledHere(settings, location.hostname)) return announce("disabled");
  const ctx = pageContext(settings);
  if (!ctx) return announce("not-a-thread"); // nothing on the page changes
  let result;
  const asked = loadAudit(settings, ctx.threadUrl, pagePostIds(ctx), ctx.posts.map((r) => r.id));
  const slow = new Promise((resolve) => setTimeout(() => resolve(SLOW), PROVISIONAL_AFTER_MS));
  if ((await Promise.race([asked.then(() => null, () => null), slow])) === SLOW) {
    await drawProvisional(ctx, settings); // the reader sees the page's own findings while the GET waits
  }
  try {
    result = await asked;
  } catch (e) {
    // The thread cannot be audited after all: the provisional findings go with it (the service vouches for none)
    if (PROVISIONAL && PROVISIONAL.drawn) {
      teardownOverlay();
      PROVISIONAL.drawn = false;
    }
    // Not a fight, or a forum the service does not read: the page stays as it is.
    if (e instanceof HttpError && e.silent) {
      PENDING_TRIES = 0;
      return announce("untouched");
    }
    const err = e instanceof ArbitroError ? e : new ArbitroError(String(e));
    ensurePanel(ctx, themeFor(ctx.posts[0].el));
    setStatus(err.describe(), "error", () => restart(settings));
    renderLinks(ctx, null);
    OVERLAY.layer.setAttribute("data-state", "error");
    OVERLAY.layer.setAttribute("data-error", err.name);
    return announce("error");
  }
  if (result.pending) return showProvisional(ctx, settings, result.retryAfter);
  PENDING_TRIES = 0;
  if (PROVISIONAL && PROVISIONAL.drawn) teardownOverlay(); // the full audit replaces the provisional one
  PROVISIONAL = null;
  if (!isFight(result.audit)) return announce("untouched"); // a thread with no fight in it stays as it is
  mark("arbitro:draw-start");
  drawAudit(ctx, result);
  mark("arbitro:draw-end");
  if (notice) setStatus(notice, "info");
  return announce("drawn");
}

// The open page's provisional audit (asked once per page view), drawn and marked as such; false when the service
// gives none (an older service without the route, or an error: the page then waits as before).
async function drawProvisional(ctx, settings) {
  const pageUrl = location.href.split("#")[0];
  if (!PROVISIONAL || PROVISIONAL.url !== pageUrl) {
    try {
      const refs = ctx.platform.isDicePost ? ctx.posts.filter((r) => !ctx.platform.isDicePost(r)) : ctx.posts;
      PROVISIONAL = { url: pageUrl, result: await requestProvisional(settings, pageUrl, refs), drawn: false };
    } catch (e) {
      console.warn("[arbitro] provisional", e);
      PROVISIONAL = { url: pageUrl, result: null, drawn: false };
    }
  }
  const prov = PROVISIONAL.result;
  if (!prov) return false;
  // badges only where the page alone found something: a clean mark now could be contradicted by the full audit
  const found = prov.audit.posts.filter((p) => isPlainObject(p) && asArray(p.verdicts).length);
  mark("arbitro:draw-start");
  drawAudit(ctx, { audit: { ...prov.audit, posts: found }, refreshing: false, provisional: true });
  mark("arbitro:draw-end");
  PROVISIONAL.drawn = true;
  OVERLAY.layer.setAttribute("data-provisional", "1");
  const info = prov.provisional;
  const where = Number.isInteger(info.page)
    ? ` (${t("pageOf")} ${info.page}${Number.isInteger(info.pages) ? ` ${t("of")} ${info.pages}` : ""})` : "";
  setStatus(t("provisional") + where, "info");
  announce("provisional");
  return true;
}

// A thread never audited whose first audit is still being made (202): the provisional page meanwhile, then the
// full audit asked again at the service's Retry-After; without one, "analisi in corso" as before.
async function showProvisional(ctx, settings, retryAfter) {
  if (!(PROVISIONAL && PROVISIONAL.drawn) && !(await drawProvisional(ctx, settings))) {
    return waitForFirstAudit(ctx, settings, retryAfter);
  }
  const prov = PROVISIONAL.result;
  PENDING_TRIES += 1;
  if (PENDING_TRIES > MAX_PENDING) {
    PENDING_TRIES = 0;
    setStatus(t("analysisSlow"), "error", () => restart(settings));
    return announce("error");
  }
  const wait = Math.max(retryAfter, prov.retryAfter);
  PENDING_TIMER = setTimeout(() => restart(settings), wait * 1000);
  return "provisional";
}

// "Analisi in corso" in our panel only; if the thread turns out not to be a fight, restart() takes the panel away.
function waitForFirstAudit(ctx, settings, retryAfter) {
  ensurePanel(ctx, themeFor(ctx.posts[0].el));
  OVERLAY.layer.setAttribute("data-state", "pending");
  PENDING_TRIES += 1;
  if (PENDING_TRIES > MAX_PENDING) {
    PENDING_TRIES = 0;
    setStatus(t("analysisSlow"), "error", () => restart(settings));
    return announce("error");
  }
  setStatus(t("analysing"), "info");
  PENDING_TIMER = setTimeout(() => restart(settings), retryAfter * 1000);
  return announce("pending");
}

async function restart(settings, notice) {
  clearTimeout(PENDING_TIMER);
  teardownOverlay();
  if (PROVISIONAL) PROVISIONAL.drawn = false; // its badges went with the overlay: drawn again while still waiting
  const s = settings || (await loadSettings());
  RUNNING = run(s, notice).catch(reportInternal);
  return RUNNING;
}

function reportInternal(e) {
  // Our bug, not the forum's: say so in our panel only.
  console.error("[arbitro]", e);
  announce("internal-error");
  try {
    if (PANEL.el && PANEL.el.isConnected) setStatus(t("errInternal"), "error");
  } catch (_e) {
    // nothing more we can do without touching the page
  }
}

async function openSettingsFromMenu() {
  const settings = await loadSettings();
  LANG = settings.language;
  const ctx = pageContext(settings) ||
    { settings, platform: { replyBox: () => null }, posts: [], threadUrl: location.href, host: location.hostname, restart };
  ctx.settings = settings;
  ensurePanel(ctx, "light");
  openSettings();
}

async function toggleHere() {
  const settings = await loadSettings();
  const saved = await saveSettings(withHostEnabled(settings, location.hostname, !isEnabledHere(settings, location.hostname)));
  await restart(saved);
}

async function boot() {
  const settings = await loadSettings();
  LANG = settings.language;
  gm.menu(t("menuSettings"), () => openSettingsFromMenu().catch(reportInternal));
  gm.menu(t("menuToggle"), () => toggleHere().catch(reportInternal));
  RUNNING = run(settings).catch(reportInternal);
  return RUNNING;
}

boot().catch(reportInternal);
})();
