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
