// platform forumotion: Forumotion / forumattivo (phpbb2, phpbb3, invision templates); dice come in a Game-Master post.

const FORUMOTION_HOST_RE = /(^|\.)(forumattivo\.com|forumattivo\.it|forumotion\.com|forumotion\.net|forumotion\.org|forumactif\.com|forumactif\.org|forumactif\.net|forumactif\.fr|foroactivo\.com|forumieren\.com)$/i;
// "Il membro 'X' ha effettuato la seguente azione : Lancio di dadi" and its translations.
const FORUMOTION_DICE_RE = /(effettuato la seguente azione|a effectu[ée] l'action suivante|has done the following action|realizó la siguiente acción)/i;

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
    if (doc.querySelector(".postprofile, .postbody")) return "phpbb3";
    return "invision";
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
    return byId.map((ref) => withAuthor(ref, [
      ".postprofile-name a", "p.author a[href^='/u']", "h4.author a", ".author a", ".name a",
      ".postprofile dt a", ".postprofile-head a", ".postdetails a[href^='/u']", "a[href^='/u']",
      "p.author strong", "h4.author strong", ".name strong", ".postprofile dt strong",
    ]));
  },
  threadUrl(doc, loc) {
    const m = /^\/t(\d+)(?:p\d+)?(-[^/?#]*)?/.exec(loc.pathname);
    if (!m) return null;
    return `${loc.origin}/t${m[1]}${m[2] || ""}`;
  },
  isDicePost(ref) {
    return FORUMOTION_DICE_RE.test(textOf(ref.el));
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
