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
