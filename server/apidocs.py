"""`GET /api/v1/docs`: the OpenAPI document (server/openapi.json) as an Italian HTML page made by the service itself.

`build_docs(doc)` is a pure function from the OpenAPI dict to the page's view model (every `$ref` resolved, texts
split into plain and `code` pieces so the template escapes everything); the route renders it under the pages' CSP
(no script, styles from /static only)."""
from __future__ import annotations

import json
import re
from typing import Any

from flask import Blueprint, Response, render_template

bp = Blueprint("apidocs", __name__)

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
WHERE = {"query": "query", "path": "percorso", "header": "intestazione", "cookie": "cookie"}
TYPE_WORDS = {"string": "stringa", "integer": "intero", "number": "numero", "boolean": "booleano", "object": "oggetto",
              "array": "array", "null": "null"}
STATUS_TEXT = {
    "200": "OK", "201": "Creato", "202": "Accettata", "204": "Nessun contenuto", "304": "Non modificata",
    "400": "Richiesta non valida", "401": "Non autenticato", "403": "Vietato", "404": "Non trovato",
    "405": "Metodo non consentito", "409": "Conflitto", "413": "Troppo grande", "415": "Tipo di contenuto non supportato",
    "422": "Non elaborabile", "429": "Troppe richieste", "431": "Intestazioni troppo grandi", "500": "Errore interno",
    "501": "Non implementato", "502": "Errore del forum", "503": "Servizio non disponibile", "504": "Tempo scaduto",
    "default": "Altri errori",
}
MAX_NESTING = 8  # inline (non-$ref) schemas nested deeper than this are shown by type only
_CODE = re.compile(r"`([^`]+)`")


# --- texts --------------------------------------------------------------------------------------

def rich(text: Any) -> list[list[dict[str, Any]]]:
    """A description as paragraphs (blank-line separated) of pieces `{text, code}`: `backticks` become code."""
    if not isinstance(text, str) or not text.strip():
        return []
    paragraphs = []
    for para in re.split(r"\n\s*\n", text.strip()):
        pieces: list[dict[str, Any]] = []
        pos = 0
        for m in _CODE.finditer(para):
            if m.start() > pos:
                pieces.append({"text": para[pos:m.start()], "code": False})
            pieces.append({"text": m.group(1), "code": True})
            pos = m.end()
        if pos < len(para):
            pieces.append({"text": para[pos:], "code": False})
        paragraphs.append(pieces)
    return paragraphs


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "x"


# --- $ref resolution ----------------------------------------------------------------------------

class Resolver:
    """Local `$ref`s (`#/components/...`) of one document."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc

    def lookup(self, ref: str) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return None
        node: Any = self.doc
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node

    def deref(self, node: Any, limit: int = 16) -> tuple[Any, str | None, dict[str, Any]]:
        """(target, last ref followed or None, the Reference Object's own summary/description overrides)."""
        ref = None
        overrides: dict[str, Any] = {}
        while isinstance(node, dict) and "$ref" in node and limit > 0:
            for key in ("summary", "description"):
                if key in node and key not in overrides:
                    overrides[key] = node[key]
            ref = node["$ref"]
            node = self.lookup(ref)
            limit -= 1
        return node, ref, overrides


def ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def ref_anchor(ref: str) -> str:
    kind = {"schemas": "schema", "responses": "risposta", "parameters": "parametro", "headers": "intestazione"}
    parts = ref[2:].split("/") if ref.startswith("#/") else [ref]
    prefix = kind.get(parts[1], "rif") if len(parts) >= 3 and parts[0] == "components" else "rif"
    return f"{prefix}-{slug(parts[-1])}"


def _link(ref: str, known: bool = True) -> dict[str, Any]:
    return {"name": ref_name(ref), "anchor": ref_anchor(ref), "known": known}


# --- schemas ------------------------------------------------------------------------------------

def _type_label(schema: dict[str, Any]) -> str:
    if "const" in schema:
        return "costante"
    t = schema.get("type")
    types = t if isinstance(t, list) else [t] if isinstance(t, str) else []
    if not types:
        if "enum" in schema:
            return "valore"
        if "properties" in schema:
            return "oggetto"
        if "items" in schema:
            return "array"
        return "qualsiasi"
    label = " | ".join(TYPE_WORDS.get(x, str(x)) for x in types)
    if isinstance(schema.get("format"), str):
        label += f" ({schema['format']})"
    return label


def _notes(schema: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Constraints as short Italian pieces: allowed values, limits, format."""
    out: list[list[dict[str, Any]]] = []

    def values(word: str, vals: list[Any]) -> None:
        pieces: list[dict[str, Any]] = [{"text": word + " ", "code": False}]
        for i, v in enumerate(vals):
            if i:
                pieces.append({"text": ", ", "code": False})
            pieces.append({"text": _literal(v), "code": True})
        out.append(pieces)

    if "const" in schema:
        values("sempre", [schema["const"]])
    if isinstance(schema.get("enum"), list):
        values("valori ammessi:", schema["enum"])
    for key, word in (("minimum", "minimo"), ("maximum", "massimo"), ("minLength", "lunghezza minima"),
                      ("maxLength", "lunghezza massima"), ("minItems", "elementi minimi"),
                      ("maxItems", "elementi massimi")):
        if isinstance(schema.get(key), (int, float)) and not isinstance(schema.get(key), bool):
            out.append([{"text": f"{word}: {schema[key]:,}".replace(",", "."), "code": False}])
    if "default" in schema:
        values("predefinito:", [schema["default"]])
    if schema.get("additionalProperties") is False:
        out.append([{"text": "nessun altro campo ammesso", "code": False}])
    return out


def _examples_of_schema(schema: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    if "example" in schema:
        found.append({"name": None, "summary": [], "json": _json_text(schema["example"])})
    if isinstance(schema.get("examples"), list):
        found.extend({"name": None, "summary": [], "json": _json_text(v)} for v in schema["examples"])
    return found


def schema_view(r: Resolver, schema: Any, *, expand: bool = True, depth: int = 0) -> dict[str, Any]:
    """One schema for the template: `label` (type in Italian), `ref` (a link when it names a component),
    `fields` (object properties, each with its own view), `element` (an array's items), `variants` (oneOf/anyOf/allOf).

    A `$ref` is resolved and its fields listed when `expand` (the top of a body or a response, a component's own
    section); deeper `$ref`s are links to their component, so nothing is shown twice and no cycle is followed."""
    view: dict[str, Any] = {"label": "qualsiasi", "ref": None, "description": [], "notes": [], "fields": [],
                            "element": None, "variants": [], "variant_word": None, "examples": []}
    if isinstance(schema, dict) and "$ref" in schema:
        target, ref, overrides = r.deref(schema)
        if ref is None or not isinstance(target, dict):
            view["label"] = "riferimento non risolto"
            view["ref"] = _link(str(schema.get("$ref")), known=False)
            return view
        view["ref"] = _link(ref)
        if not expand:
            view["label"] = ref_name(ref)
            view["description"] = rich(overrides.get("description"))
            return view
        inner = schema_view(r, target, expand=False, depth=depth)
        inner["ref"] = view["ref"]
        if overrides.get("description"):
            inner["description"] = rich(overrides["description"])
        return inner
    if not isinstance(schema, dict):
        return view
    view["label"] = _type_label(schema)
    view["description"] = rich(schema.get("description"))
    view["notes"] = _notes(schema)
    view["examples"] = _examples_of_schema(schema)
    if depth >= MAX_NESTING:
        return view
    props = schema.get("properties")
    if isinstance(props, dict):
        required = set(schema.get("required") or ())
        view["fields"] = [{"name": name, "required": name in required,
                           "schema": schema_view(r, sub, expand=False, depth=depth + 1)}
                          for name, sub in props.items()]
    items = schema.get("items")
    if isinstance(items, dict):
        item_view = schema_view(r, items, expand=False, depth=depth + 1)
        view["element"] = item_view
        inner = item_view["ref"]["name"] if item_view["ref"] else item_view["label"]
        view["label"] = "array di " + (f"({inner})" if item_view["variants"] and not item_view["ref"] else inner)
    for word, key in (("uno tra", "oneOf"), ("almeno uno tra", "anyOf"), ("tutti insieme", "allOf")):
        if isinstance(schema.get(key), list):
            view["variant_word"] = word
            view["variants"] = [schema_view(r, sub, expand=False, depth=depth + 1) for sub in schema[key]]
            if view["label"] == "qualsiasi":
                view["label"] = " | ".join(v["ref"]["name"] if v["ref"] else v["label"] for v in view["variants"])
            break
    return view


def has_detail(view: dict[str, Any] | None) -> bool:
    """Whether a schema view has anything below its one-line summary (fields, element schema, variants)."""
    if not view:
        return False
    return bool(view["fields"] or view["variants"] or (view["element"] and has_detail(view["element"])))


# --- operations ---------------------------------------------------------------------------------

def _examples(media: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    if "example" in media:
        out.append({"name": None, "summary": [], "json": _json_text(media["example"])})
    if isinstance(media.get("examples"), dict):
        for name, ex in media["examples"].items():
            if isinstance(ex, dict) and "value" in ex:  # externalValue (another URL) is not fetched nor linked
                out.append({"name": name, "summary": rich(ex.get("summary")), "json": _json_text(ex["value"])})
    return out


def _contents(r: Resolver, content: Any, *, expand: bool = True) -> list[dict[str, Any]]:
    if not isinstance(content, dict):
        return []
    return [{"media_type": mt, "schema": schema_view(r, (media or {}).get("schema"), expand=expand),
             "examples": _examples(media or {})} for mt, media in content.items() if isinstance(media, dict)]


def _parameter(r: Resolver, node: Any) -> dict[str, Any] | None:
    p, ref, overrides = r.deref(node)
    if not isinstance(p, dict) or "name" not in p:
        return None
    schema = schema_view(r, p.get("schema"), expand=False)
    notes = list(schema["notes"])
    if "example" in p:
        notes.append([{"text": "esempio: ", "code": False}, {"text": _literal(p["example"]), "code": True}])
    return {"name": str(p["name"]), "where": WHERE.get(p.get("in"), str(p.get("in"))), "in": p.get("in"),
            "required": bool(p.get("required")), "schema": schema,
            "description": rich(overrides.get("description", p.get("description"))), "notes": notes}


def _headers(r: Resolver, headers: Any) -> list[dict[str, Any]]:
    out = []
    for name, node in (headers or {}).items() if isinstance(headers, dict) else ():
        h, _, overrides = r.deref(node)
        if isinstance(h, dict):
            out.append({"name": name, "schema": schema_view(r, h.get("schema"), expand=False),
                        "description": rich(overrides.get("description", h.get("description")))})
    return out


def error_examples(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The examples of a response (every media type, `example` and `examples`) that are API errors:
    `{code, summary, status}`, `status` being the example's own `x-status` when it says one (a `default` answer)."""
    out: list[dict[str, Any]] = []
    for media in (response.get("content") or {}).values():
        if not isinstance(media, dict):
            continue
        found = [{"value": media["example"]}] if "example" in media else []
        found += [ex for ex in (media.get("examples") or {}).values() if isinstance(ex, dict)]
        for ex in found:
            value = ex.get("value")
            err = value.get("error") if isinstance(value, dict) else None
            if isinstance(err, dict) and isinstance(err.get("code"), str):
                out.append({"code": err["code"], "summary": ex.get("summary"), "status": ex.get("x-status")})
    return out


def error_codes_of(response: dict[str, Any]) -> list[str]:
    """The `error.code`s of a response's examples, in order, once each."""
    return list(dict.fromkeys(ex["code"] for ex in error_examples(response)))


def _response(r: Resolver, status: str, node: Any) -> dict[str, Any]:
    resp, ref, overrides = r.deref(node)
    resp = resp if isinstance(resp, dict) else {}
    component = _link(ref) if ref else None
    codes = error_codes_of(resp)
    if ref and overrides.get("description"):
        # an operation that says which of a shared response's codes it answers: those, not all of them
        named = set(_CODE.findall(overrides["description"]))
        codes = [c for c in codes if c in named] or codes
    return {
        "status": status, "status_text": STATUS_TEXT.get(status, ""), "klass": f"s{status[0]}" if status[:1].isdigit() else "sx",
        "description": rich(overrides.get("description", resp.get("description"))),
        "component": component, "codes": codes,
        "headers": _headers(r, resp.get("headers")),
        # a shared (component) response is shown in full in its own section; here, its schema by name
        "contents": _contents(r, resp.get("content"), expand=component is None),
    }


def _status_key(status: str) -> tuple[int, str]:
    return (int(status), "") if status.isdigit() else (1000, status)


def _operation(r: Resolver, path: str, method: str, op: dict[str, Any], common: list[Any]) -> dict[str, Any]:
    params = {}
    for node in list(common) + list(op.get("parameters") or []):
        p = _parameter(r, node)
        if p:
            params[(p["name"], p["in"])] = p  # an operation's parameter replaces the path's one of the same name
    body = None
    rb, _, overrides = r.deref(op.get("requestBody"))
    if isinstance(rb, dict):
        body = {"required": bool(rb.get("required")), "description": rich(overrides.get("description", rb.get("description"))),
                "contents": _contents(r, rb.get("content"))}
    responses = op.get("responses") if isinstance(op.get("responses"), dict) else {}
    op_id = op.get("operationId")
    return {
        "anchor": "op-" + slug(op_id if isinstance(op_id, str) else f"{method}-{path}"),
        "method": method.upper(), "method_class": method.lower(), "path": path, "operation_id": op_id,
        "summary": rich(op.get("summary")),
        "description": rich(op.get("description")), "deprecated": bool(op.get("deprecated")),
        "parameters": list(params.values()), "body": body,
        "responses": [_response(r, str(s), responses[s]) for s in sorted(map(str, responses), key=_status_key)],
    }


def _error_table(r: Resolver, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every error code the document names (its responses' examples): the statuses it comes with, what it means
    and the section that shows it. A `default` response's examples say their status with `x-status`."""
    rows: dict[str, dict[str, Any]] = {}
    for item in (doc.get("paths") or {}).values():
        for method, op in (item or {}).items():
            if method not in METHODS or not isinstance(op, dict):
                continue
            for status, node in (op.get("responses") or {}).items():
                resp, ref, _ = r.deref(node)
                if not isinstance(resp, dict):
                    continue
                for ex in error_examples(resp):
                    shown = str(ex["status"] or status)
                    row = rows.setdefault(ex["code"], {"code": ex["code"], "statuses": [], "summary": [],
                                                       "section": _link(ref) if ref else None})
                    if shown not in row["statuses"]:
                        row["statuses"].append(shown)
                    if not row["summary"] and ex["summary"]:
                        row["summary"] = rich(ex["summary"])
    for row in rows.values():
        row["statuses"].sort(key=_status_key)
    return sorted(rows.values(), key=lambda row: (_status_key(row["statuses"][0]) if row["statuses"] else (9999, ""),
                                                  row["code"]))


def build_docs(doc: dict[str, Any]) -> dict[str, Any]:
    """The page's view model from an OpenAPI 3.x document (pure: no Flask, no I/O)."""
    r = Resolver(doc)
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    operations = []
    for path, item in (doc.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        common = item.get("parameters") if isinstance(item.get("parameters"), list) else []
        for method in METHODS:
            if isinstance(item.get(method), dict):
                operations.append(_operation(r, path, method, item[method], common))
    components = doc.get("components") if isinstance(doc.get("components"), dict) else {}
    schemas = [{"name": name, "anchor": ref_anchor(f"#/components/schemas/{name}"),
                "schema": schema_view(r, {"$ref": f"#/components/schemas/{name}"})}
               for name in (components.get("schemas") or {})]
    responses = []
    for name in components.get("responses") or {}:
        view = _response(r, "", {"$ref": f"#/components/responses/{name}"})
        view.update(name=name, anchor=ref_anchor(f"#/components/responses/{name}"), component=None)
        responses.append(view)
    error_schema = next((s for s in schemas if s["name"] == "Error"), None)
    return {
        "title": str(info.get("title") or "API"), "version": info.get("version"),
        "openapi": doc.get("openapi"), "description": rich(info.get("description")),
        "operations": operations, "schemas": schemas, "responses": responses,
        "error_schema": error_schema, "errors": _error_table(r, doc),
    }


# --- route --------------------------------------------------------------------------------------

@bp.get("/api/v1/docs")
def api_docs() -> Response:
    from .api import openapi_document
    from .security import PAGE_CSP

    html = render_template("api_docs.html", d=build_docs(openapi_document()), has_detail=has_detail)
    resp = Response(html, mimetype="text/html")
    # /api paths get no page headers from security.install: this one is a page, so it sets them itself
    resp.headers["Content-Security-Policy"] = PAGE_CSP
    resp.headers["X-Frame-Options"] = "DENY"
    return resp
