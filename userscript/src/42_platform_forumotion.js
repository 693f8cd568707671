// platform forumotion: Forumotion / forumattivo (phpbb2, phpbb3, invision, modernbb templates); dice come in a Game-Master post.

const FORUMOTION_HOST_RE = /(^|\.)(forumattivo\.com|forumattivo\.it|forumotion\.com|forumotion\.net|forumotion\.org|forumactif\.com|forumactif\.org|forumactif\.net|forumactif\.fr|foroactivo\.com|forumieren\.com)$/i;
// The message's frame line, "Il membro 'X' ha effettuato la seguente azione : <the admin's wording>", and its
// translations: a tolerance for dice messages whose faces are not images.
const FORUMOTION_DICE_RE = /(effettuato la seguente azione|a effectu[ée] l'action suivante|has done the following action|realizó la siguiente acción)/i;

// A die line: "#1 'Attacco (d12)' :" followed by the face images (what the scraper reads, scraper/platforms/forumotion.py).
const FORUMOTION_DIE_LINE_RE = /^\s*(#\d+\s*)?'[^']+'\s*:\s*$/;
// Each version's post loop (Etana/template viewtopic_body.tpl): where {POSTER_NAME} sits alone, then fallbacks.
const FORUMOTION_AUTHORS = [
  ".postprofile-name a[href^='/u']", "span.name a[href^='/u']", "p.author a[href^='/u']",
  ".postprofile dt a[href^='/u']", ".postprofile-details dt a[href^='/u']", ".postprofile-name", ".postprofile dt strong",
  "span.name strong", "p.author strong", ".postprofile-details dt", "h4.author a", "h4.author strong",
  "a[href^='/u']",
];

// The die lines of a post: text "'Name' :" whose next element on the line is an image.
function forumotionDieLines(root) {
  const out = [];
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!FORUMOTION_DIE_LINE_RE.test(node.data) || node.parentElement.closest("[data-arbitro],blockquote,cite")) continue;
    let sib = node.nextSibling;
    while (sib && sib.nodeType === 3 && !sib.data.trim()) sib = sib.nextSibling;
    if (sib && sib.nodeName === "IMG") out.push(node);
  }
  return out;
}

registerPlatform({
  id: "forumotion",
  detect(doc, loc) {
    const posts = this.posts(doc, true);
    if (!posts.length) return 0;
    let score = 1;
    if (FORUMOTION_HOST_RE.test(loc.hostname)) score += 4;
    if (/^\/t\d+(p\d+)?-/.test(loc.pathname)) score += 3;
    if (doc.querySelector('[class*="post--"]')) score += 2;
    if (doc.querySelector('script[src*="illiweb.com"], link[href*="illiweb.com"]')) score += 2;
    if (doc.querySelector('a[href^="/u"]')) score += 1;
    return score;
  },
  skin(doc) {
    if (doc.querySelector("table.forumline")) return "phpbb2";
    if (doc.querySelector("body#modernbb, .post .post-head")) return "modernbb";
    if (doc.querySelector(".post .post-entry, #ipbwrapper")) return "invision";
    return "phpbb3";
  },
  posts(doc, quick) {
    const byId = postsByIdPrefix(doc, "p");
    const known = new Set(byId.map((r) => r.id));
    for (const el of doc.querySelectorAll('[class*="post--"]')) {
      const m = /(?:^|\s)post--(\d+)(?:\s|$)/.exec(el.className);
      if (m && !known.has(m[1])) {
        known.add(m[1]);
        byId.push({ id: m[1], el });
      }
    }
    if (quick) return byId;
    byId.sort((a, b) => (a.el.compareDocumentPosition(b.el) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
    return byId.map((ref) => withAuthor(ref, FORUMOTION_AUTHORS));
  },
  threadUrl(doc, loc) {
    const m = /^\/t(\d+)(?:p\d+)?(-[^/?#]*)?/.exec(loc.pathname);
    if (!m) return null;
    return `${loc.origin}/t${m[1]}${m[2] || ""}`;
  },
  // Known by its content, whoever posts it (the founder by default, or any account the admin sets, renamed or not).
  isDicePost(ref) {
    return forumotionDieLines(ref.el).length > 0 || FORUMOTION_DICE_RE.test(textOf(ref.el));
  },
  // The player's rolls are in the Game-Master post that follows it: one line per roll ("#1 'Attacco (d12)' : <img>…").
  rolls(ref, all) {
    const i = all.findIndex((r) => r.id === ref.id);
    const next = i >= 0 ? all[i + 1] : null;
    if (!next || !this.isDicePost(next)) return [];
    const places = [];
    const walker = document.createTreeWalker(next.el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!/^\s*(#\d+\s*)?'[^']+'\s*:/.test(node.data) || node.parentElement.closest("[data-arbitro]")) continue;
      // The marker goes after the line's last die image, before the <br> that ends the line.
      let last = node;
      for (let sib = node.nextSibling; sib && sib.nodeName !== "BR"; sib = sib.nextSibling) last = sib;
      places.push({ after: last });
    }
    return places;
  },
  replyBox(doc) {
    return replyBoxFrom(doc, ["textarea#text_editor_textarea", 'textarea[name="message"]', "form#quick_reply textarea"]);
  },
});
