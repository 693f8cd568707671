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
