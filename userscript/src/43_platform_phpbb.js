// platform phpbb: phpBB 3.x prosilver, as its viewtopic_body.html renders a post; fancydice's div.dicebox rolls.

// The template's postrow: div#p<id>.post.has-profile > div.inner > dl.postprofile#profile<id> (dt: the author as
// get_username_string writes it, a.username or a.username-coloured; a guest's name in <strong>), then
// div.postbody > div#post_content<id> > h3, p.author (by <strong>name</strong> » <time>), div.content.
const PHPBB_POSTS = 'div.post[id^="p"], div[id^="p"].post';
// The badge goes beside the name in p.author (the post's own header line), else in the mini-profile.
const PHPBB_AUTHOR = [
  "p.author a.username", "p.author a.username-coloured",
  "dl.postprofile dt a.username", "dl.postprofile dt a.username-coloured",
  "p.author .username", "p.author .username-coloured", "dl.postprofile dt .username",
  "dl.postprofile dt .username-coloured", "p.author strong", "dl.postprofile dt strong",
];

registerPlatform({
  id: "phpbb",
  detect(doc, loc) {
    const posts = postsByIdPrefix(doc, "p", PHPBB_POSTS);
    if (!posts.length) return 0;
    let score = 1;
    if (/viewtopic\.php$/i.test(loc.pathname)) score += 4;
    if (doc.body && doc.body.id === "phpbb") score += 3;
    if (posts.some((p) => p.el.querySelector(`dl.postprofile#profile${p.id}`))) score += 1;
    if (doc.querySelector('a[href*="memberlist.php?mode=viewprofile"]')) score += 1;
    return score;
  },
  skin() {
    return "prosilver";
  },
  posts(doc) {
    return postsByIdPrefix(doc, "p", PHPBB_POSTS).map((ref) => withAuthor(ref, PHPBB_AUTHOR));
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
    // the post's own content: fancydice boxes there (never in a quote), else rolls written in its text
    const body = bodyOf(ref.el, [`#post_content${ref.id} div.content`, "div.content", ".postbody"]);
    return elementOrTextRolls(body, [".dicebox", ".dice", "[class*='dice']"]);
  },
  replyBox(doc) {
    return replyBoxFrom(doc, ["textarea#message", 'textarea[name="message"]']);
  },
});
