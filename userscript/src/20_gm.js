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
