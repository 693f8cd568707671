// platform phpbb: phpBB 3.x prosilver (div.post#p<id>), dice from extensions such as fancydice (.dicebox).

registerPlatform({
  id: "phpbb",
  detect(doc, loc) {
    const posts = postsByIdPrefix(doc, "p", 'div.post[id^="p"], div[id^="p"].post');
    if (!posts.length) return 0;
    let score = 1;
    if (/viewtopic\.php$/i.test(loc.pathname)) score += 4;
    if (doc.body && doc.body.id === "phpbb") score += 3;
    if (doc.querySelector('a[href*="memberlist.php?mode=viewprofile"]')) score += 1;
    if (doc.querySelector(".dicebox")) score += 1;
    return score;
  },
  skin() {
    return "prosilver";
  },
  posts(doc) {
    return postsByIdPrefix(doc, "p", 'div.post[id^="p"], div[id^="p"].post').map((ref) => withAuthor(ref, [
      "p.author a.username", "p.author a.username-coloured", ".postprofile a.username",
      ".postprofile a.username-coloured", "a.username", "a.username-coloured",
      ".postprofile strong", ".author strong",
    ]));
  },
  threadUrl(doc, loc) {
    let tid = queryParam(loc.href, "t");
    if (!tid) {
      const link = doc.querySelector('h2.topic-title a[href*="t="], h2 a[href*="viewtopic.php"][href*="t="], input[name="t"]');
      if (link) tid = link.tagName === "INPUT" ? link.value : queryParam(link.getAttribute("href"), "t");
    }
    if (!tid || !/^\d+$/.test(tid)) return null;
    return `${loc.origin}${loc.pathname}?t=${tid}`;
  },
  rolls(ref) {
    const body = bodyOf(ref.el, ["div.content", ".postbody"]);
    return elementOrTextRolls(body, [".dicebox", ".dice", "[class*='dice']"]);
  },
  replyBox(doc) {
    return replyBoxFrom(doc, ["textarea#message", 'textarea[name="message"]']);
  },
});
