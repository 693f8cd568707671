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
