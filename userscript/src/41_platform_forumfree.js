// platform forumfree: ForumFree / ForumCommunity, current skin (li.post#ee<id>) and classic table skins.

registerPlatform({
  id: "forumfree",
  hostRe: /(^|\.)(forumfree\.it|forumcommunity\.net|blogfree\.net)$/i,
  detect(doc, loc) {
    const posts = this.rawPosts(doc);
    if (!posts.length) return 0;
    let score = 2;
    if (this.hostRe.test(loc.hostname)) score += 3;
    if (doc.body && doc.body.id === "topic") score += 2;
    if (doc.querySelector('a[id^="entry"], a[name^="entry"]')) score += 1;
    return score;
  },
  skin(doc) {
    return doc.querySelector('li.post[id^="ee"]') ? "ff-current" : "ff-classic";
  },
  // Current skin: li.post#ee<id>. Classic skins: the table that holds the a[name=entry<id>] anchor.
  rawPosts(doc) {
    const refs = postsByIdPrefix(doc, "ee");
    if (refs.length) return refs;
    const seen = new Set();
    for (const a of doc.querySelectorAll('a[name^="entry"], a[id^="entry"]')) {
      const m = /^entry(\d+)$/.exec(a.getAttribute("name") || a.id);
      const el = m && (a.closest("table.maintable") || a.closest("table") || a.closest("div.post"));
      if (!el || seen.has(m[1])) continue;
      seen.add(m[1]);
      refs.push({ id: m[1], el });
    }
    return refs;
  },
  posts(doc) {
    return this.rawPosts(doc).map((ref) => withAuthor(ref, [
      ".nick a", ".normalname a", ".nick", ".normalname", 'a[href*="act=Profile"]', ".author a", ".name a",
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
    const body = bodyOf(ref.el, ["td.right.Item table.color", ".postcolor", "table.color", ".color", ".post_content", "td.right"]);
    return elementOrTextRolls(body, [".dice_roll", ".dice", ".dado", ".dadi", "[class*='dice']", "[class*='roll']"]);
  },
  replyBox(doc) {
    return replyBoxFrom(doc, ['textarea[name="Post"]', "textarea#Post", "form#send textarea", "form[name='REPLIER'] textarea"]);
  },
});
