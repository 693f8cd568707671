// api: the one request per page view to the Arbitro service (GET the stored thread, else POST an audit), session-cached.

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

// {thread_id, fetched_at, refreshing, audit} whichever endpoint answered.
async function requestThread(service, threadUrl, timeout) {
  const getUrl = `${service}/api/v1/threads?url=${encodeURIComponent(threadUrl)}`;
  let r = await gm.request({ method: "GET", url: getUrl, timeout });
  if (r.status === 404) {
    r = await gm.request({ method: "POST", url: `${service}/api/v1/audits`, body: { url: threadUrl }, timeout });
    if (r.status < 200 || r.status >= 300) throw httpErrorFrom(r);
    const audit = checkAudit(parseJsonBody(r.text));
    return { thread_id: null, fetched_at: audit.thread && audit.thread.fetched_at, refreshing: false, audit };
  }
  if (r.status < 200 || r.status >= 300) throw httpErrorFrom(r);
  const body = parseJsonBody(r.text);
  if (!isPlainObject(body)) throw new BadResponseError("not JSON");
  checkAudit(body.audit);
  return { thread_id: body.thread_id, fetched_at: body.fetched_at, refreshing: !!body.refreshing, audit: body.audit };
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
function auditIsBehind(audit, pageIds) {
  const known = new Set(audit.posts.map((p) => normPostId(p.id)));
  const last = audit.posts.length ? Number(normPostId(audit.posts[audit.posts.length - 1].id)) : -1;
  return pageIds.some((id) => !known.has(id) && Number(id) > last);
}

async function loadAudit(settings, threadUrl, pageIds) {
  const service = serviceUrlOf(settings);
  if (!service) throw new ConfigError("service URL not set");
  const key = cacheKey(service, threadUrl);
  const cached = readCache(key, settings.cacheSeconds * 1000);
  if (cached && !cached.refreshing && !auditIsBehind(cached.audit, pageIds)) return { ...cached, fromCache: true };
  const fresh = await requestThread(service, threadUrl, settings.timeoutMs);
  if (!fresh.refreshing) writeCache(key, fresh);
  return { ...fresh, fromCache: false };
}

function auditReportUrl(settings, threadUrl) {
  const service = serviceUrlOf(settings);
  return service ? `${service}/audit?url=${encodeURIComponent(threadUrl)}` : null;
}
