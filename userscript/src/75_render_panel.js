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
