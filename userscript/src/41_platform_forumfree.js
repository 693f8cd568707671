// platform forumfree: ForumFree / ForumCommunity, current skin (li.post#ee<id>) and classic table skins.

// The posts are found as the scraper finds them (scraper/platforms/forumfree.py), with the same ids: the
// service's verdicts are keyed by them.
const FF_ENTRY_RE = /^entry(\d+)$/;
const FF_ENTRY_HREF_RE = /#entry(\d+)$/;
// The header's date text: "Inviato il: 11/2/2009, 20:27", an English-interface forum's "Posted on 3/4/2015, 18:58".
const FF_POSTED_RE = /(?:Inviato il|Posted on|Posted)\s*:?\s*(.+?)\s*$/;

function ffEntryId(a) {
  const m = FF_ENTRY_RE.exec(a.id || a.getAttribute("name") || "");
  return m ? m[1] : null;
}

// The element just before `el` (a comment there is no anchor, as for lxml's getprevious()).
function ffPrevious(el) {
  let n = el.previousSibling;
  while (n && n.nodeType === 3) n = n.previousSibling;
  return n && n.nodeType === 1 ? n : null;
}

// The post's date as written: the `title` of its `#entry<id>` link (`11/2/2009, 20:27:00`), else the text after
// "Inviato il:" in a header link, else in the header.
function ffHeadDate(head) {
  if (!head) return null;
  for (const a of head.querySelectorAll('a[href*="#entry"]')) {
    if (a.getAttribute("title")) return a.getAttribute("title");
  }
  for (const a of head.querySelectorAll("a")) {
    const m = FF_POSTED_RE.exec(plainText(a));
    if (m) return m[1];
  }
  const m = FF_POSTED_RE.exec(plainText(head));
  return m ? m[1] : null;
}

// A classic table post's id: `table#ee<id>`, else its header's `#entry<id>` link, else the `entry<id>` anchor
// just before the table, else (the 2009 skin page gives none) the id made from its author and date.
function ffTablePostId(table, cell, seen) {
  const ee = /^ee(\d+)$/.exec(table.id);
  if (ee) return ee[1];
  const head = cell.querySelector("td.right_top");
  for (const a of (head || cell).querySelectorAll('a[href*="#entry"]')) {
    const m = FF_ENTRY_HREF_RE.exec(a.getAttribute("href"));
    if (m) return m[1];
  }
  const prev = ffPrevious(table);
  if (prev) {
    for (const a of [prev, ...prev.querySelectorAll("a")]) {
      const id = a.tagName === "A" ? ffEntryId(a) : null;
      if (id) return id;
    }
  }
  return contentPostId(plainText(cell.querySelector("td.left_top .nick, .nick")), ffHeadDate(head) || "", seen);
}

// Classic table skins (the real pages: `table#ee<id>` > `td.post`, or a `td.post` in a table without an id):
// each td.post holding a nick, not inside another (a post quoting a page's markup); the post is its table.
function ffTablePosts(doc) {
  const seen = new Set();
  const out = [];
  for (const cell of doc.querySelectorAll("td.post")) {
    if (cell.parentElement.closest("td.post") || !cell.querySelector(".nick")) continue;
    const table = cell.closest("table");
    if (table) out.push({ id: ffTablePostId(table, cell, seen), el: table });
  }
  return out;
}

// IPB-style classic pages: the table holding the a[name=entry<id>] anchor.
function ffAnchorPosts(doc) {
  const seen = new Set();
  const out = [];
  for (const a of doc.querySelectorAll('a[name^="entry"], a[id^="entry"]')) {
    const id = ffEntryId(a);
    const el = id && (a.closest("table.maintable") || a.closest("table") || a.closest("div.post"));
    if (!el || seen.has(id)) continue;
    seen.add(id);
    out.push({ id, el });
  }
  return out;
}

registerPlatform({
  id: "forumfree",
  hostRe: /(^|\.)(forumfree\.it|forumfree\.net|forumcommunity\.net|forumcommunity\.it|blogfree\.net)$/i,
  detect(doc, loc) {
    const posts = this.rawPosts(doc);
    if (!posts.length) return 0;
    let score = 2;
    if (this.hostRe.test(loc.hostname)) score += 3;
    if (doc.body && doc.body.id === "topic") score += 2;
    if (doc.querySelector('a[id^="entry"], a[name^="entry"], td.post .nick')) score += 1;
    return score;
  },
  skin(doc) {
    return doc.querySelector('li.post[id^="ee"]') ? "ff-current" : "ff-classic";
  },
  // The first layout the page has: li.post#ee<id> (current), td.post tables (classic), entry anchors (IPB-style).
  rawPosts(doc) {
    const current = postsByIdPrefix(doc, "ee", 'li.post[id^="ee"]');
    if (current.length) return current;
    const tables = ffTablePosts(doc);
    return tables.length ? tables : ffAnchorPosts(doc);
  },
  posts(doc) {
    return this.rawPosts(doc).map((ref) => withAuthor(ref, [
      "td.left_top .nick a", "td.left_top .nick", ".nick a", ".normalname a", ".nick", ".normalname",
      'a[href*="act=Profile"]', ".author a", ".name a",
    ]));
  },
  threadUrl(doc, loc) {
    let tid = queryParam(loc.href, "t");
    if (!tid) {
      const input = doc.querySelector('input[name="t"]');
      if (input && /^\d+$/.test(input.value)) tid = input.value;
    }
    if (!tid || !/^\d+$/.test(tid)) return null;
    return `${loc.origin}/?t=${tid}`;
  },
  rolls(ref) {
    const body = bodyOf(ref.el, [
      "td.right div.color", "td.right.Item table.color", ".postcolor", "table.color", ".color", ".post_content",
      "td.right",
    ]);
    return elementOrTextRolls(body, [".dice_roll", ".dice", ".dado", ".dadi", "[class*='dice']", "[class*='roll']"]);
  },
  replyBox(doc) {
    return replyBoxFrom(doc, ['textarea[name="Post"]', "textarea#Post", "form#send textarea", "form[name='REPLIER'] textarea"]);
  },
});
