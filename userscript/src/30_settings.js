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
