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
