"""The fetch layer over real HTTP against the local fixture forum (tests/forumserver.py)."""
from __future__ import annotations

import email.utils
import time
from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st

from scraper.errors import BlockedByRobots, FetchFailed, FetchTimeout, HostNotAllowed, PageTooLarge, ScrapeError
from scraper.fetch import Fetcher, host_matches
from scraper.policy import FetchPolicy
from scraper.retry import parse_retry_after

PAGE1 = "<html><head><title>Duello</title></head><body><p>Hollow attacca.</p></body></html>"
PAGE2 = "<html><head><title>Duello</title></head><body><p>Quincy para.</p></body></html>"


def _page_requests(server):
    return [r for r in server.requests_log if r.path != "/robots.txt"]


def test_pages_fetched_in_order_with_descriptive_headers(local_forum, local_fetcher):
    paths = local_forum.add_thread("phpbb", 7, [PAGE1, PAGE2, PAGE1.replace("Hollow", "Rukia")])
    results = [local_fetcher.get(local_forum.url(p)) for p in paths]
    assert [r.status for r in results] == [200, 200, 200]
    assert b"Quincy para" in results[1].content and b"Rukia" in results[2].content
    logged = _page_requests(local_forum)
    assert [r.path for r in logged] == ["/viewtopic.php?t=7&start=0", "/viewtopic.php?t=7&start=10",
                                        "/viewtopic.php?t=7&start=20"]
    assert all(r.user_agent and r.user_agent.startswith("Arbitro/") for r in local_forum.requests_log)
    assert not any(r.conditional for r in logged)


def test_unchanged_page_answers_304_and_comes_from_cache(local_forum, local_fetcher):
    paths = local_forum.add_thread("forumfree", 12, [PAGE1, PAGE2])
    first = [local_fetcher.get(local_forum.url(p)) for p in paths]
    local_forum.reset_log()
    local_forum.replace_in_page(paths[1], "Quincy para.", "Quincy para. Hollow cade.")
    again = [local_fetcher.get(local_forum.url(p)) for p in paths]

    log = _page_requests(local_forum)
    assert [r.conditional for r in log] == [True, True]
    assert [r.status for r in log] == [304, 200]
    assert log[0].if_none_match is not None and log[0].if_modified_since is not None
    assert again[0].not_modified and again[0].from_cache and again[0].content == first[0].content
    assert again[0].status == 200 and again[0].sha256 == first[0].sha256
    assert not again[1].not_modified and b"Hollow cade" in again[1].content
    assert again[1].sha256 != first[1].sha256


def test_unconditional_get_skips_validators(local_forum, local_fetcher):
    path = local_forum.set_page("/?t=3&st=0", PAGE1)
    local_fetcher.get(local_forum.url(path))
    local_fetcher.get(local_forum.url(path), conditional=False)
    log = _page_requests(local_forum)
    assert [r.conditional for r in log] == [False, False] and [r.status for r in log] == [200, 200]


def test_torn_cache_entry_is_a_miss(local_forum, local_fetcher):
    path = local_forum.set_page("/?t=3&st=0", PAGE1)
    url = local_forum.url(path)
    local_fetcher.get(url)
    entry = local_fetcher.cache.path_for(url)
    entry.write_bytes(entry.read_bytes()[:-5])  # body no longer matches its hash
    result = local_fetcher.get(url)
    assert not result.not_modified and result.content == PAGE1.encode()
    assert [r.conditional for r in _page_requests(local_forum)] == [False, False]


def test_429_retry_after_seconds_is_honoured(local_forum, local_fetcher, sleeps):
    path = local_forum.set_page("/?t=4", PAGE1)
    local_forum.set_behaviour(path, statuses=[429], retry_after="7")
    result = local_fetcher.get(local_forum.url(path))
    assert result.status == 200
    assert sleeps == [7.0]
    assert [r.status for r in _page_requests(local_forum)] == [429, 200]


def test_429_retry_after_http_date_is_honoured(local_forum, local_fetcher, sleeps):
    path = local_forum.set_page("/?t=4", PAGE1)
    when = email.utils.formatdate(time.time() + 12, usegmt=True)
    local_forum.set_behaviour(path, statuses=[429], retry_after=when)
    local_fetcher.get(local_forum.url(path))
    assert len(sleeps) == 1 and 9.0 <= sleeps[0] <= 12.0


def test_retry_after_beyond_the_bound_gives_up_without_waiting(local_forum, local_fetcher, sleeps):
    path = local_forum.set_page("/?t=4", PAGE1)
    local_forum.set_behaviour(path, statuses=[429], retry_after="3600")
    with pytest.raises(FetchFailed) as info:
        local_fetcher.get(local_forum.url(path))
    assert info.value.status == 429 and info.value.code == "fetch_failed"
    assert sleeps == []
    assert len(_page_requests(local_forum)) == 1


def test_500_then_success_with_exponential_backoff(local_forum, local_fetcher, sleeps):
    path = local_forum.set_page("/?t=5", PAGE2)
    local_forum.set_behaviour(path, statuses=[500, 503])
    result = local_fetcher.get(local_forum.url(path))
    assert result.content == PAGE2.encode()
    assert sleeps == [0.5, 1.0]
    assert [r.status for r in _page_requests(local_forum)] == [500, 503, 200]


def test_persistent_500_fails_after_the_retries_with_the_status(local_forum, local_fetcher, sleeps):
    path = local_forum.set_page("/?t=5", PAGE2)
    local_forum.set_behaviour(path, statuses=[500] * 10)
    with pytest.raises(FetchFailed) as info:
        local_fetcher.get(local_forum.url(path))
    assert info.value.status == 500
    assert len(_page_requests(local_forum)) == 4  # first try + 3 retries
    assert sleeps == [0.5, 1.0, 2.0]


def test_404_is_not_retried(local_forum, local_fetcher, sleeps):
    with pytest.raises(FetchFailed) as info:
        local_fetcher.get(local_forum.url("/?t=999"))
    assert info.value.status == 404 and sleeps == []


def _wait_quiet(entry, seconds=3.0):
    """Wait until the server stops pushing bytes for this request."""
    last, deadline = -1, time.monotonic() + seconds
    while time.monotonic() < deadline:
        if entry.bytes_sent == last:
            return
        last = entry.bytes_sent
        time.sleep(0.2)


def test_too_large_body_is_cut_while_streaming(local_forum, local_fetcher):
    fetcher = Fetcher(replace(local_fetcher.policy, max_bytes=1024 * 1024))
    size = 300 * 1024 * 1024
    path = local_forum.set_page("/?t=6", PAGE1)
    local_forum.set_behaviour(path, too_large=size)  # chunked, no Content-Length to trust
    with pytest.raises(PageTooLarge):
        fetcher.get(local_forum.url(path))
    (entry,) = _page_requests(local_forum)
    _wait_quiet(entry)
    assert entry.bytes_sent < size // 10  # the client hung up long before the end


def test_declared_too_large_body_is_refused_before_reading(local_forum, local_fetcher, sleeps):
    fetcher = Fetcher(replace(local_fetcher.policy, max_bytes=1024 * 1024))
    size = 300 * 1024 * 1024
    path = local_forum.set_page("/?t=6", PAGE1)
    local_forum.set_behaviour(path, too_large=size, declare_length=True)
    with pytest.raises(PageTooLarge) as info:
        fetcher.get(local_forum.url(path))
    assert "314572800" in str(info.value) and sleeps == []  # not retried
    (entry,) = _page_requests(local_forum)
    _wait_quiet(entry)
    assert entry.bytes_sent < size // 10


def test_redirect_to_a_disallowed_host_is_refused(local_forum, local_fetcher):
    path = local_forum.set_page("/?t=8", PAGE1)
    local_forum.set_behaviour(path, redirect="http://evil.example/?t=8")
    with pytest.raises(HostNotAllowed) as info:
        local_fetcher.get(local_forum.url(path))
    assert "evil.example" in str(info.value) and info.value.code == "host_not_allowed"
    assert len(_page_requests(local_forum)) == 1


def test_redirect_to_a_private_address_is_refused(local_forum, local_policy):
    # 127.0.0.2 is on the host allowlist, but only 127.0.0.1 may be private: the hop is refused by address
    fetcher = Fetcher(replace(local_policy, allowed_hosts=("127.0.0.1", "127.0.0.2")))
    path = local_forum.set_page("/?t=8", PAGE1)
    local_forum.set_behaviour(path, redirect=f"http://127.0.0.2:{local_forum.port}/?t=9")
    with pytest.raises(HostNotAllowed) as info:
        fetcher.get(local_forum.url(path))
    assert "127.0.0.2" in str(info.value)


def test_allowed_redirect_is_followed_and_recorded(local_forum, local_fetcher):
    local_forum.set_page("/t10-duello", PAGE2)
    old = local_forum.set_page("/t10-vecchio-titolo", PAGE1)
    local_forum.set_behaviour(old, redirect="/t10-duello", redirect_status=301)
    result = local_fetcher.get(local_forum.url(old))
    assert result.final_url == local_forum.url("/t10-duello")
    assert result.redirects == (local_forum.url(old),)
    assert result.content == PAGE2.encode()


def test_redirect_loop_fails_by_name(local_forum, local_fetcher):
    a = local_forum.set_page("/ta-x", PAGE1)
    b = local_forum.set_page("/tb-x", PAGE1)
    local_forum.set_behaviour(a, redirect="/tb-x")
    local_forum.set_behaviour(b, redirect="/ta-x")
    with pytest.raises(FetchFailed, match="redirect"):
        local_fetcher.get(local_forum.url(a))
    assert len(_page_requests(local_forum)) == 6  # the first request and 5 redirects


@pytest.mark.parametrize("url", [
    "http://127.0.0.2/?t=1", "http://10.0.0.7/?t=1", "http://169.254.169.254/latest/meta-data/",
    "http://[::1]/?t=1", "http://0.0.0.0/?t=1", "http://224.0.0.1/?t=1",
])
def test_private_and_reserved_addresses_are_refused(url, sleeps):
    host = url.split("//")[1].split("/")[0].strip("[]")
    fetcher = Fetcher(FetchPolicy(allowed_hosts=(host,), cache_dir=None, sleep=sleeps.append))
    with pytest.raises(HostNotAllowed):
        fetcher.get(url)


def test_every_resolved_address_is_checked(sleeps):
    def resolver(host, port):
        return ["93.184.216.34", "10.1.2.3"]

    fetcher = Fetcher(FetchPolicy(allowed_hosts=("gdr.forumfree.it",), cache_dir=None, resolver=resolver))
    with pytest.raises(HostNotAllowed, match="10.1.2.3"):
        fetcher.get("https://gdr.forumfree.it/?t=1")


def test_localhost_is_loopback_whatever_the_resolver_says(local_forum, sleeps):
    # `localhost` is judged as 127.0.0.1 and ::1 before any resolution (RFC 6761), so a resolver claiming a public
    # address changes nothing; DNS rebinding of other names: tests/test_ssrf.py
    fetcher = Fetcher(FetchPolicy(allowed_hosts=("localhost",), cache_dir=None, obey_robots=False, retries=0,
                                  resolver=lambda host, port: ["93.184.216.34"], sleep=sleeps.append))
    local_forum.set_page("/?t=1", PAGE1)
    with pytest.raises(HostNotAllowed, match="privato") as info:
        fetcher.get(f"http://localhost:{local_forum.port}/?t=1")
    assert info.value.reason == "address"
    assert local_forum.requests_log == []


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/x", "file:///etc/passwd", "http://user:pw@127.0.0.1/?t=1",
                                 "javascript:alert(1)", "http:///nohost"])
def test_only_plain_http_urls_on_hosts(url, local_fetcher):
    with pytest.raises(HostNotAllowed):
        local_fetcher.get(url)


# The host check must judge the host requests/urllib3 connect to: for them a `\\` ends the authority
# (urlsplit reads on), so `localhost\\.gdr.forumattivo.com` looked like a forumattivo host and went to localhost.
CONFUSED_URLS = [
    ("http://localhost\\.gdr.forumattivo.com/robots.txt", "host non consentito: localhost "),
    ("http://localhost\\.gdr.forumattivo.com:8080/?t=1", "host non consentito: localhost "),
    ("https://localhost\\gdr.forumattivo.com/", "host non consentito: localhost "),
    ("http://gdr.forumattivo.com\\.localhost/", "host non consentito: l'URL"),
    ("http://localhost%5C.gdr.forumattivo.com/", "nome di host non valido"),
    ("http://localhost%2f.gdr.forumattivo.com/", "nome di host non valido"),
    # urllib3 ≥ 2.8 refuses these itself (no transport target: "URL non valido"), 2.7 reads a host we refuse
    ("http://localhost .gdr.forumattivo.com/", ("nome di host non valido", "URL non valido")),
    ("http://localhost\x00.gdr.forumattivo.com/", ("nome di host non valido", "URL non valido")),
    ("http://localhost\uff3c.gdr.forumattivo.com/", "URL non valido"),
]


@pytest.mark.parametrize("url,message", CONFUSED_URLS)
def test_urls_the_parsers_read_differently_are_refused(url, message, sleeps):
    resolved = []
    fetcher = Fetcher(FetchPolicy(allowed_hosts=("*.forumattivo.com",), cache_dir=None, obey_robots=False,
                                  retries=0, sleep=sleeps.append,
                                  resolver=lambda host, port: resolved.append(host) or ["93.184.216.34"]))
    with pytest.raises(HostNotAllowed) as info:
        fetcher.get(url)
    assert info.value.code == "host_not_allowed" and str(info.value).startswith(message)
    if str(message).startswith("host non consentito"):
        assert info.value.reason == "host"
    assert resolved == [] and not fetcher.allowed(url)


def test_redirect_to_a_backslash_url_is_refused_by_host(local_forum, local_policy):
    fetcher = Fetcher(replace(local_policy, allowed_hosts=("127.0.0.1", "*.forumattivo.com"), obey_robots=False,
                              resolver=lambda host, port: ["127.0.0.1"]))
    path = local_forum.set_page("/?t=8", PAGE1)
    local_forum.set_page("/?t=9", PAGE2)
    local_forum.set_behaviour(path, redirect=f"http://localhost\\.gdr.forumattivo.com:{local_forum.port}/?t=9")
    with pytest.raises(HostNotAllowed) as info:
        fetcher.get(local_forum.url(path))
    assert str(info.value) == "host non consentito: localhost (non è tra gli host ammessi)"
    assert info.value.reason == "host"
    assert [r.path for r in local_forum.requests_log] == ["/?t=8"]


def test_connection_is_refused_for_a_host_off_the_allowlist(local_forum, local_policy):
    # second line of defence: a connection opens only for the host and port its checked addresses were pinned for
    from scraper.netguard import Target

    fetcher = Fetcher(replace(local_policy, allowed_hosts=("gdr.forumattivo.com",), obey_robots=False, retries=0))
    local_forum.set_page("/?t=1", PAGE1)
    with pytest.raises(HostNotAllowed) as info:
        fetcher._attempt(local_forum.url("/?t=1"), {}, 1024, False, Target("gdr.forumattivo.com", 80, ("127.0.0.1",)))
    assert str(info.value) == "host non consentito: 127.0.0.1 (non è tra gli host ammessi)"
    assert info.value.reason == "host" and local_forum.requests_log == []


_URL_PIECES = st.sampled_from(["localhost", "gdr", ".", "forumattivo.com", "\\", "/", "@", ":", "8080", "?", "#",
                               "%5c", "%2e", "%2f", "%40", "\t", " ", "[", "]", "::1", "\uff3c", "\u3002", "\uff0e",
                               "Ｇ", "ß", "xn--", "-", "_", ";", "\x00", "\r\n"])


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(["http://", "https://", "HTTP://"]), st.lists(_URL_PIECES, max_size=4),
       st.sampled_from(["gdr.forumattivo.com", ".forumattivo.com", "forumattivo.com", "GDR.ForumAttivo.com."]),
       st.lists(_URL_PIECES, max_size=3))
def test_an_accepted_url_connects_to_the_host_that_was_checked(scheme, head, allowed_part, tail):
    import requests
    import urllib3

    allowed = ("*.forumattivo.com", "gdr.forumattivo.com")
    fetcher = Fetcher(FetchPolicy(allowed_hosts=allowed, cache_dir=None,
                                  resolver=lambda host, port: ["93.184.216.34"]))
    url = scheme + "".join(head) + allowed_part + "".join(tail) + "/x"
    try:
        fetcher.check_url(url)
    except ScrapeError:
        return
    sent = urllib3.util.parse_url(requests.Request("GET", url).prepare().url)
    assert host_matches(sent.host, allowed)


def test_host_allowlist_wildcards():
    patterns = ("*.forumfree.it", "forumcommunity.net")
    assert host_matches("gdr.forumfree.it", patterns)
    assert host_matches("GDR.ForumFree.it.", patterns)
    assert not host_matches("forumfree.it", patterns)
    assert not host_matches("evilforumfree.it", patterns)
    assert not host_matches("forumfree.it.evil.example", patterns)
    assert host_matches("forumcommunity.net", patterns)
    assert not host_matches("x.forumcommunity.net", patterns)


def test_robots_disallow_blocks_before_any_page_request(local_forum, local_fetcher):
    local_forum.set_robots("User-agent: *\nDisallow: /viewtopic.php\n")
    path = local_forum.set_page("/viewtopic.php?t=3", PAGE1)
    with pytest.raises(BlockedByRobots) as info:
        local_fetcher.get(local_forum.url(path))
    assert info.value.code == "blocked_by_robots"
    assert [r.path for r in local_forum.requests_log] == ["/robots.txt"]


def test_robots_rules_for_our_agent_apply(local_forum, local_fetcher):
    local_forum.set_robots("User-agent: Arbitro\nDisallow: /privato/\n\nUser-agent: *\nDisallow: /\n")
    ok = local_forum.set_page("/?t=3", PAGE1)
    local_forum.set_page("/privato/x", PAGE1)
    assert local_fetcher.get(local_forum.url(ok)).status == 200
    with pytest.raises(BlockedByRobots):
        local_fetcher.get(local_forum.url("/privato/x"))
    assert [r.path for r in local_forum.requests_log].count("/robots.txt") == 1  # cached per host


def test_robots_crawl_delay_spaces_requests(local_forum, local_fetcher, sleeps):
    local_forum.set_robots("User-agent: *\nCrawl-delay: 2\n")
    paths = local_forum.add_thread("forumfree", 20, [PAGE1, PAGE2, PAGE1])
    fetcher = Fetcher(replace(local_fetcher.policy, **_still_clock(sleeps)))
    for p in paths:
        fetcher.get(local_forum.url(p))
    # robots.txt itself counts as the first request to the host
    assert sleeps == pytest.approx([2.0, 2.0, 2.0])


def _still_clock(sleeps: list[float]) -> dict[str, object]:
    """sleep and clock for a FetchPolicy: a clock only sleeping moves (waits do not depend on request times)."""
    now = [1000.0]

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds

    return {"sleep": sleep, "clock": lambda: now[0]}


@pytest.mark.parametrize("status,blocked", [(404, False), (410, False), (401, True), (403, True), (500, "down")])
def test_robots_status_handling(local_forum, local_fetcher, status, blocked):
    local_forum.set_robots("irrelevant", status=status)
    path = local_forum.set_page("/?t=3", PAGE1)
    if blocked == "down":  # unreachable: nothing read, reported as the forum's failure
        with pytest.raises(FetchFailed) as info:
            local_fetcher.get(local_forum.url(path))
        assert not isinstance(info.value, BlockedByRobots) and info.value.status == 500
    elif blocked:
        with pytest.raises(BlockedByRobots):
            local_fetcher.get(local_forum.url(path))
    else:
        assert local_fetcher.get(local_forum.url(path)).status == 200


def test_per_host_rate_limit(local_forum, local_fetcher, sleeps):
    still = _still_clock(sleeps)
    fetcher = Fetcher(replace(local_fetcher.policy, min_interval=0.8, **still))
    paths = local_forum.add_thread("forumotion", 30, [PAGE1, PAGE2, PAGE1])
    for p in paths:
        fetcher.get(local_forum.url(p))
    # robots.txt, then three pages: three waits of the whole interval
    assert sleeps == pytest.approx([0.8, 0.8, 0.8])
    still["sleep"](5.0)  # a request after the interval has passed does not wait
    fetcher.get(local_forum.url(paths[0]))
    assert sleeps == pytest.approx([0.8, 0.8, 0.8, 5.0])


def test_slow_body_times_out(local_forum, local_fetcher, sleeps):
    fetcher = Fetcher(replace(local_fetcher.policy, read_timeout=0.3, retries=1))
    path = local_forum.set_page("/?t=11", PAGE1)
    local_forum.set_behaviour(path, slow=2.0)
    with pytest.raises(FetchTimeout) as info:
        fetcher.get(local_forum.url(path))
    assert isinstance(info.value, FetchFailed) and info.value.code == "fetch_timeout"
    assert len(_page_requests(local_forum)) == 2 and sleeps == [0.5]  # timeouts are retried too


def test_trickling_body_hits_the_total_deadline(local_forum, local_fetcher):
    fetcher = Fetcher(replace(local_fetcher.policy, read_timeout=2.0, total_timeout=0.5, retries=0))
    path = local_forum.set_page("/?t=11", PAGE1 * 4)
    local_forum.set_behaviour(path, drip=(0.1, 16))
    with pytest.raises(FetchTimeout):
        fetcher.get(local_forum.url(path))


def test_connection_refused_is_a_named_failure(local_policy, sleeps):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    fetcher = Fetcher(replace(local_policy, obey_robots=False, retries=2))
    with pytest.raises(FetchFailed) as info:
        fetcher.get(f"http://127.0.0.1:{port}/?t=1")
    assert info.value.status is None and sleeps == [0.5, 1.0]
    assert type(info.value) is FetchFailed and isinstance(info.value, ScrapeError)


CP1252_BODY = ("<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\">"
               "<title>Città</title></head><body><p>Perché l’attacco è “mirato” – 5€</p></body></html>")


def test_cp1252_page_declared_latin1_is_decoded_as_windows_1252(local_forum, local_fetcher):
    path = local_forum.set_page("/?t=13", CP1252_BODY.encode("cp1252"), content_type="text/html")
    result = local_fetcher.get(local_forum.url(path))
    assert result.encoding == "windows-1252"
    assert "Perché l’attacco è “mirato” – 5€" in result.text


def test_header_charset_wins_over_meta(local_forum, local_fetcher):
    body = CP1252_BODY.replace("iso-8859-1", "utf-8").encode("cp1252")
    path = local_forum.set_page("/?t=14", body, content_type="text/html; charset=ISO-8859-1")
    result = local_fetcher.get(local_forum.url(path))
    assert result.encoding == "windows-1252" and "Città" in result.text


def test_cached_encoding_survives_304(local_forum, local_fetcher):
    path = local_forum.set_page("/?t=13", CP1252_BODY.encode("cp1252"), content_type="text/html")
    local_fetcher.get(local_forum.url(path))
    again = local_fetcher.get(local_forum.url(path))
    assert again.not_modified and again.encoding == "windows-1252" and "“mirato”" in again.text


def test_retry_after_parsing():
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(None) is None and parse_retry_after("domani") is None
    now = time.time()
    assert parse_retry_after(email.utils.formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30, abs=1)
    assert parse_retry_after(email.utils.formatdate(now - 30, usegmt=True), now=now) == 0.0


def test_mixed_encodings_are_repaired():
    from scraper.charset import decode_text, detect_encoding

    # a UTF-8 page with a post pasted in windows-1252
    mixed = "Città – ".encode("utf-8") + "perché “così”".encode("cp1252")
    assert detect_encoding(mixed, "text/html; charset=utf-8") == "utf-8"
    assert decode_text(mixed, "utf-8") == "Città – perché “così”"
    # a windows-1252 page with UTF-8 text pasted in (what would show as "Ã¨")
    mixed = "è già ".encode("cp1252") + "più “forte”".encode("utf-8")
    assert decode_text(mixed, "windows-1252") == "è già più “forte”"
    # bytes undefined in windows-1252 map to the C1 controls, as WHATWG says, never an exception
    assert decode_text(b"a\x81b", "windows-1252") == "a\x81b"


_PASTE_PIECES = [b"a", b" ", b"\xe8", b"\xc3", b"\xa8", b"\xe0", b"\xa0", b"\xbf", b"\xed", b"\x9f", b"\xf0", b"\x90",
                 b"\xf4", b"\x8f", b"\x80", b"\xc2", "€".encode("utf-8"), "𝄞".encode("utf-8")]


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=120) | st.lists(st.sampled_from(_PASTE_PIECES), max_size=40).map(b"".join))
def test_pasted_utf8_runs_are_the_pattern_s_matches(data):
    # the quick scan for UTF-8 pasted in a 1252 page finds what a plain finditer of the exact pattern finds
    from scraper.charset import _UTF8_SEQ, _utf8_runs

    assert [m.span() for m in _utf8_runs(data)] == [m.span() for m in _UTF8_SEQ.finditer(data)]


@pytest.mark.parametrize("data,ctype,expected", [
    (b"\xef\xbb\xbf<meta charset='iso-8859-1'>", "text/html; charset=iso-8859-1", "utf-8"),  # BOM first
    (b"<meta charset='utf-8'>caf\xe9", "text/html; charset=latin1", "windows-1252"),  # then the header
    (b"<meta charset=\"US-ASCII\">caf\xe9", "text/html", "windows-1252"),  # then the meta (ascii → 1252)
    (b"<meta charset=\"utf-16\">abc", None, "utf-8"),  # a meta cannot really mean UTF-16
    (b"caf\xc3\xa9", None, "utf-8"),  # then valid UTF-8
    (b"caf\xe9", None, "windows-1252"),  # else the legacy default
    (b'{"a": "caf\xc3\xa9"}', "application/json", "utf-8"),
])
def test_charset_detection_order(data, ctype, expected):
    from scraper.charset import detect_encoding

    assert detect_encoding(data, ctype) == expected


def test_unreachable_robots_is_a_forum_failure_and_asked_again(local_forum, local_fetcher):
    """A robots.txt answering 5xx: nothing is read (RFC 9309 §2.3.1.4) and the error says the forum is down,
    with its status — not a robots.txt refusal; the next request asks again, a good answer is kept."""
    local_forum.set_robots("x", status=503)
    path = local_forum.set_page("/?t=3", PAGE1)
    fetcher = Fetcher(replace(local_fetcher.policy, retries=0))
    with pytest.raises(FetchFailed) as info:
        fetcher.get(local_forum.url(path))
    assert type(info.value) is FetchFailed and info.value.status == 503
    assert not local_forum.log_for(path)  # the page itself was never requested
    local_forum.set_robots("User-agent: *\nAllow: /\n")
    assert fetcher.get(local_forum.url(path)).status == 200  # forum back: robots.txt read again at once
    assert fetcher.get(local_forum.url(path)).status == 200
    robots = [r for r in local_forum.requests_log if r.path == "/robots.txt"]
    assert len(robots) == 2  # the failure, then one good answer kept


def test_dead_forum_with_robots_on_is_fetch_failed_not_timeout(local_policy, sleeps):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    fetcher = Fetcher(replace(local_policy, obey_robots=True, retries=1))
    with pytest.raises(FetchFailed) as info:
        fetcher.get(f"http://127.0.0.1:{port}/?t=1")
    assert type(info.value) is FetchFailed  # not FetchTimeout, not BlockedByRobots
    assert info.value.status is None


def test_size_cap_counts_decompressed_bytes(local_forum, local_fetcher):
    # 3 MB of markup gzip to a few KB: the cap must hold on what the page becomes, not on the wire size
    fetcher = Fetcher(replace(local_fetcher.policy, max_bytes=1024 * 1024))
    small = local_forum.set_page("/?t=15", PAGE1)
    bomb = local_forum.set_page("/?t=16", "<p>" + "x" * (3 * 1024 * 1024) + "</p>")
    local_forum.set_behaviour(small, gzip=True)
    local_forum.set_behaviour(bomb, gzip=True)
    assert fetcher.get(local_forum.url(small)).content == PAGE1.encode()
    with pytest.raises(PageTooLarge):
        fetcher.get(local_forum.url(bomb))
    (entry,) = local_forum.log_for(bomb)
    assert entry.bytes_sent < 64 * 1024


def test_one_request_at_a_time_per_host(local_forum, local_fetcher):
    import threading

    paths = [local_forum.set_page(f"/?t=4{i}", PAGE1) for i in range(3)]
    for p in paths:
        local_forum.set_behaviour(p, slow=0.3)
    threads = [threading.Thread(target=local_fetcher.get, args=(local_forum.url(p),)) for p in paths]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    starts = sorted(r.time for r in _page_requests(local_forum))
    assert len(starts) == 3
    # each request starts only after the previous body (0.3 s late) was read
    assert all(b - a >= 0.28 for a, b in zip(starts, starts[1:]))




@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2048), st.one_of(st.none(), st.text(max_size=60)))
def test_charset_handling_never_raises(data, content_type):
    import codecs

    from scraper.charset import decode_text, detect_encoding

    enc = detect_encoding(data, content_type)
    codecs.lookup(enc)  # always a codec Python has
    assert isinstance(decode_text(data, enc), str)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_retry_after_parsing_never_raises(value):
    result = parse_retry_after(value)
    assert result is None or result >= 0


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120))
def test_url_check_refuses_by_name(url):
    fetcher = Fetcher(FetchPolicy(allowed_hosts=("gdr.forumfree.it",), cache_dir=None,
                                  resolver=lambda host, port: ["93.184.216.34"]))
    try:
        fetcher.check_url(url)
    except ScrapeError:
        return
    assert url.lower().lstrip().startswith(("http://", "https://"))


# --- raw-socket server: what werkzeug will not send (a body cut short before a close, headers dripping) ---

class _RawServer:
    """127.0.0.1:<free port>; `handler(path, conn)` writes the whole answer by hand, then the socket closes."""

    def __init__(self, handler):
        import socket
        import threading

        self.handler = handler
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        import threading

        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        try:
            req = b""
            while b"\r\n\r\n" not in req:
                data = conn.recv(4096)
                if not data:
                    return
                req += data
            self.handler(req.split()[1].decode(), conn)
        except OSError:
            pass
        finally:
            conn.close()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self):
        self.sock.close()
        for conn in self.conns:
            conn.close()


@pytest.fixture()
def raw_server():
    servers = []

    def start(handler):
        servers.append(_RawServer(handler))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _raw_fetcher(local_policy, **changes):
    return Fetcher(replace(local_policy, **{"obey_robots": False, "retries": 0, "cache_dir": None, **changes}))


BIG_PAGE = ("<html><body>" + "".join(f"<p>Post {i}: Hollow attacca, 2d6 = {i % 12}</p>" for i in range(3000))
            + "</body></html>").encode()


def _deflate(data, wbits):
    import zlib

    obj = zlib.compressobj(6, zlib.DEFLATED, wbits)
    return obj.compress(data) + obj.flush()


def _encoded(kind):
    import gzip
    import zlib

    return {"gzip": gzip.compress(BIG_PAGE), "x-gzip": gzip.compress(BIG_PAGE),
            "deflate": _deflate(BIG_PAGE, zlib.MAX_WBITS), "raw-deflate": _deflate(BIG_PAGE, -zlib.MAX_WBITS),
            "two-members": gzip.compress(BIG_PAGE[:5000]) + gzip.compress(BIG_PAGE[5000:])}[kind]


def _send_encoded(kind, fraction):
    body = _encoded(kind)
    coding = {"raw-deflate": "deflate", "two-members": "gzip"}.get(kind, kind)

    def handler(path, conn):
        # no Content-Length, connection closed: the end of the body is the end of the connection
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Encoding: "
                     + coding.encode() + b"\r\nConnection: close\r\n\r\n" + body[:int(len(body) * fraction)])
    return handler


@pytest.mark.parametrize("kind", ["gzip", "x-gzip", "deflate", "raw-deflate", "two-members"])
def test_compressed_body_is_decoded_whole(kind, raw_server, local_policy):
    server = raw_server(_send_encoded(kind, 1.0))
    result = _raw_fetcher(local_policy).get(server.url("/?t=5"))
    assert result.content == BIG_PAGE and result.encoding == "utf-8"


@pytest.mark.parametrize("kind", ["gzip", "deflate", "raw-deflate", "two-members"])
@pytest.mark.parametrize("fraction", [0.5, 0.9, 0.99])
def test_compressed_body_cut_short_is_an_incomplete_fetch(kind, fraction, raw_server, local_policy, sleeps):
    server = raw_server(_send_encoded(kind, fraction))
    url = server.url("/viewtopic.php?t=606")
    fetcher = _raw_fetcher(local_policy, retries=1)
    with pytest.raises(FetchFailed) as info:
        fetcher.get(url)
    coding = "deflate" if "deflate" in kind else "gzip"
    assert type(info.value) is FetchFailed and info.value.code == "fetch_failed" and info.value.status is None
    assert str(info.value) == (f"risposta incompleta per {url}: il contenuto compresso ({coding}) "
                               "si interrompe prima della fine")
    assert sleeps == [0.5]  # a broken transfer is retried like a dropped connection


def _drip_body(path, conn):
    import time

    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n")
    for _ in range(100):
        conn.sendall(b"x")
        time.sleep(0.2)


def _drip_headers(path, conn):
    import time

    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    for _ in range(100):
        conn.sendall(b"X-Riempitivo: a\r\n")
        time.sleep(0.2)


def _drip_body_no_length(path, conn):
    import time

    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n")
    for _ in range(100):
        conn.sendall(b"<p>x</p>")
        time.sleep(0.2)


@pytest.mark.parametrize("handler", [_drip_body, _drip_headers, _drip_body_no_length])
def test_total_timeout_bounds_headers_and_body(handler, raw_server, local_policy):
    # each byte comes well within the read timeout: only the total deadline can stop this
    server = raw_server(handler)
    url = server.url("/?t=11")
    fetcher = _raw_fetcher(local_policy, read_timeout=2.0, total_timeout=1.0)
    start = time.monotonic()
    with pytest.raises(FetchTimeout) as info:
        fetcher.get(url)
    assert 0.9 < time.monotonic() - start < 2.0
    assert str(info.value) == f"tempo scaduto per {url}: risposta non completa entro 1 s"
    assert info.value.code == "fetch_timeout"


@pytest.mark.parametrize("framing", [b"Content-Length: %d\r\n" % len(BIG_PAGE), b"Transfer-Encoding: chunked\r\n"])
def test_plain_body_cut_short_is_a_failed_fetch(framing, raw_server, local_policy):
    def handler(path, conn):
        half = BIG_PAGE[:len(BIG_PAGE) // 2]
        if b"chunked" in framing:
            half = b"%x\r\n" % len(half) + half + b"\r\n"  # no last chunk
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + framing + b"\r\n" + half)

    url = raw_server(handler).url("/?t=5")
    with pytest.raises(FetchFailed) as info:
        _raw_fetcher(local_policy).get(url)
    assert type(info.value) is FetchFailed and str(info.value).startswith(f"connessione fallita per {url} (")


# --- retries: urllib3's Retry on the adapter, every attempt through the host gate ---------------------------------

class _RecordingGate:
    """The in-process gate, recording what the fetcher asks of it (and the Retry the adapter holds meanwhile)."""

    def __init__(self, policy, adapter=None):
        from scraper.politeness import LocalHostGate

        self.inner = LocalHostGate(policy.sleep, policy.clock)
        self.adapter = adapter
        self.events = []
        self.retries = []

    def acquire(self, host, interval):
        self.inner.acquire(host, interval)
        self.events.append(("acquire", host))

    def release(self, host, hold_off=0.0):
        self.events.append(("release", host, hold_off))
        if self.adapter is not None:  # the end of an attempt: its request is still the running one
            self.retries.append(self.adapter().max_retries)
        self.inner.release(host, hold_off)


def test_the_adapter_hands_urllib3_our_retry_for_each_request(local_forum, local_policy):
    from scraper.retry import PoliteRetry

    policy = replace(local_policy, obey_robots=False)
    path = local_forum.set_page("/?t=4", PAGE1)
    url = local_forum.url(path)
    holder = {}
    gate = _RecordingGate(policy, adapter=lambda: holder["fetcher"].session.get_adapter(url))
    fetcher = holder["fetcher"] = Fetcher(policy, gate=gate)
    local_forum.set_behaviour(path, statuses=[500])
    fetcher.get(url)
    first, second = gate.retries  # one per attempt, the second one counting the first's 500
    assert isinstance(first, PoliteRetry) and first.total == policy.retries and first.history == ()
    assert isinstance(second, PoliteRetry) and second.total == policy.retries - 1
    assert [h.status for h in second.history] == [500]
    assert not isinstance(fetcher.session.get_adapter(url).max_retries, PoliteRetry)  # outside a request: none


def test_a_retry_goes_through_the_gate_with_the_retry_after_as_hold_off(local_forum, local_policy, sleeps):
    policy = replace(local_policy, obey_robots=False)
    gate = _RecordingGate(policy)
    path = local_forum.set_page("/?t=4", PAGE1)
    local_forum.set_behaviour(path, statuses=[503], retry_after="7")
    assert Fetcher(policy, gate=gate).get(local_forum.url(path)).status == 200
    host = f"127.0.0.1:{local_forum.port}"
    assert gate.events == [("acquire", host), ("release", host, 7.0), ("acquire", host), ("release", host, 0.0)]
    assert sleeps == [7.0]


def test_the_interval_between_starts_holds_for_retries(local_forum, local_policy, sleeps):
    policy = replace(local_policy, obey_robots=False, min_interval=2.0, **_still_clock(sleeps))
    path = local_forum.set_page("/?t=5", PAGE1)
    local_forum.set_behaviour(path, statuses=[500])
    assert Fetcher(policy).get(local_forum.url(path)).status == 200
    assert sleeps == [0.5, 1.5]  # the backoff, then what is left of the interval since the first start


def _answers(*handlers):
    """A raw-server handler answering each request with the next of `handlers` (the last one for the rest)."""
    calls = []

    def handler(path, conn):
        calls.append(path)
        handlers[min(len(calls), len(handlers)) - 1](path, conn)
    return handler


def _status(code, extra=b""):
    def handler(path, conn):
        conn.sendall(b"HTTP/1.1 %d Errore\r\nContent-Length: 0\r\n%s\r\n" % (code, extra))
    return handler


def _page(path, conn):
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s"
                 % (len(BIG_PAGE), BIG_PAGE))


@pytest.mark.parametrize("retries,ok", [(2, True), (1, False)])
def test_a_broken_body_and_a_5xx_share_one_count_of_retries(retries, ok, raw_server, local_policy, sleeps):
    server = raw_server(_answers(_send_encoded("gzip", 0.5), _status(503), _page))
    url = server.url("/?t=5")
    fetcher = _raw_fetcher(local_policy, retries=retries)
    if ok:
        assert fetcher.get(url).content == BIG_PAGE
        assert sleeps == [0.5, 1.0]
    else:
        with pytest.raises(FetchFailed) as info:
            fetcher.get(url)
        assert info.value.status == 503 and str(info.value) == f"il server ha risposto 503 per {url} (dopo 2 tentativi)"
        assert sleeps == [0.5]


def test_a_413_with_retry_after_is_not_retried(raw_server, local_policy, sleeps):
    server = raw_server(_answers(_status(413, b"Retry-After: 1\r\n"), _page))
    with pytest.raises(FetchFailed) as info:
        _raw_fetcher(local_policy, retries=2).get(server.url("/?t=5"))
    assert info.value.status == 413 and sleeps == []


def test_an_error_body_is_not_read_before_the_retry(raw_server, local_policy, sleeps):
    sent = []

    def huge_503(path, conn):
        conn.sendall(b"HTTP/1.1 503 Occupato\r\nContent-Length: 314572800\r\n\r\n")
        chunk = b"x" * 65536
        try:
            for _ in range(4800):
                conn.sendall(chunk)
                sent.append(len(chunk))
        except OSError:
            pass  # the client hung up

    server = raw_server(_answers(huge_503, _page))
    assert _raw_fetcher(local_policy, retries=1).get(server.url("/?t=5")).content == BIG_PAGE
    assert sleeps == [0.5] and sum(sent) < 30 * 1024 * 1024
