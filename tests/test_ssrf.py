"""SSRF: every address form, through the fetcher and through `POST /api/v1/audits {url}`, with an in-process
resolver and a socket-level guard that fails the test if any connect to a non-loopback address is attempted."""
from __future__ import annotations

import dataclasses
import ipaddress
import socket

import pytest

from scraper.errors import HostNotAllowed
from scraper.fetch import Fetcher
from scraper.policy import FetchPolicy
from scraper.netguard import (AllowlistError, NetPolicy, address_refusal, embedded_ipv4, host_matches,
                              never_allowed, parse_private_entry)

PAGE = "<html><head><title>Duello</title></head><body><p>Hollow attacca.</p></body></html>"

# (case, the address the name resolves to, the words the refusal must carry)
FORMS = [
    ("6to4-private", "2002:a00:1::1", "6to4, incapsula 10.0.0.1"),
    ("6to4-loopback", "2002:7f00:1::1", "6to4, incapsula 127.0.0.1"),
    ("6to4-metadata", "2002:a9fe:a9fe::1", "169.254.169.254"),
    # Teredo: server 65.54.227.120 (public) in bits 32-63, client 10.0.0.1 bit-inverted in the last 32 bits
    ("teredo-client", "2001:0:4136:e378:8000:63bf:f5ff:fffe", "Teredo (client), incapsula 10.0.0.1"),
    ("teredo-server", "2001:0:a00:1:8000:63bf:a2b:c3d4", "Teredo (server), incapsula 10.0.0.1"),
    ("nat64", "64:ff9b::a00:1", "NAT64, incapsula 10.0.0.1"),
    ("nat64-metadata", "64:ff9b::a9fe:a9fe", "169.254.169.254"),
    ("nat64-local", "64:ff9b:1:a00:0:100::", "NAT64 locale, incapsula 10.0.0.1"),
    ("mapped-private", "::ffff:10.0.0.1", "10.0.0.1"),
    ("mapped-metadata", "::ffff:169.254.169.254", "169.254.169.254"),
    ("compatible", "::a00:1", "IPv4-compatibile, incapsula 10.0.0.1"),
    ("siit", "::ffff:0:a00:1", "IPv4 tradotto (SIIT), incapsula 10.0.0.1"),
    ("isatap", "2a00:1450:4001::5efe:a00:1", "ISATAP, incapsula 10.0.0.1"),
    ("private-10", "10.0.0.1", "rete privata"),
    ("private-172", "172.16.5.4", "rete privata"),
    ("private-192", "192.168.1.1", "rete privata"),
    ("shared-cgnat", "100.64.0.1", "spazio condiviso CGNAT"),
    ("benchmark", "198.19.255.1", "rete di benchmark"),
    ("multicast", "224.0.0.1", "multicast"),
    ("reserved", "240.0.0.1", "riservato"),
    ("broadcast", "255.255.255.255", "riservato"),
    ("this-network", "0.0.0.0", "questa rete"),
    ("ietf", "192.0.0.8", "IETF"),
    ("documentation", "203.0.113.7", "documentazione"),
    ("metadata", "169.254.169.254", "mai ammesso"),
    ("alibaba-metadata", "100.100.100.200", "mai ammesso"),
    ("loopback-other", "127.0.0.2", "loopback"),
    ("v6-loopback", "::1", "riservato"),
    ("v6-unspecified", "::", "riservato"),
    ("v6-link-local", "fe80::1", "mai ammesso"),
    ("v6-ula", "fc00::1", "ULA"),
    ("v6-metadata-aws", "fd00:ec2::254", "mai ammesso"),
    ("v6-metadata-gcp", "fd20:ce::254", "mai ammesso"),
    ("v6-multicast", "ff02::1", "multicast"),
    ("v6-documentation", "2001:db8::1", "documentazione"),
    ("v6-discard", "100::1", "scarto"),
    ("v6-unallocated", "5f00::1", "riservato"),
]
FORM_IDS = [case for case, _, _ in FORMS]


# --- the in-process resolver and the connect guard --------------------------------------------------------

class Net:
    """Test names → addresses (socket.getaddrinfo for them; any other name fails), and every connect attempt."""

    def __init__(self) -> None:
        self.names: dict[str, list[str] | list[list[str]]] = {}
        self.lookups: list[tuple[str, int]] = []
        self.connects: list[tuple[str, int]] = []
        self.escapes: list[tuple[str, int]] = []  # non-loopback connects: the test fails on any

    def answer(self, host: str, port: int) -> list[str]:
        self.lookups.append((host, port))
        answers = self.names[host]
        if answers and isinstance(answers[0], list):  # a sequence of answers: DNS rebinding
            return answers.pop(0) if len(answers) > 1 else answers[0]  # type: ignore[return-value]
        return answers  # type: ignore[return-value]


@pytest.fixture()
def net(monkeypatch):
    state = Net()
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        if name in state.names:
            out = []
            for address in state.answer(name, int(port or 0)):
                ip = ipaddress.ip_address(address)
                if ip.version == 6:
                    out.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, int(port or 0), 0, 0)))
                else:
                    out.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port or 0))))
            return out
        try:
            ipaddress.ip_address(str(name).split("%")[0])
        except ValueError:
            raise socket.gaierror(socket.EAI_NONAME, f"nome sconosciuto al resolver di prova: {name}") from None
        return real_getaddrinfo(host, port, *args, **kwargs)  # a numeric address: no DNS involved

    def judge(address) -> None:
        host, port = address[0], address[1]
        state.connects.append((host, port))
        if not ipaddress.ip_address(host.split("%")[0]).is_loopback:
            state.escapes.append((host, port))
            raise OSError(f"guardia di prova: connessione verso {host}:{port} vietata")

    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def connect(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            judge(address)
        return real_connect(sock, address)

    def connect_ex(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            judge(address)
        return real_connect_ex(sock, address)

    real_create = socket.create_connection

    def create_connection(address, *args, **kwargs):
        try:
            ipaddress.ip_address(address[0])
        except ValueError:
            raise AssertionError(f"create_connection risolverebbe di nuovo il nome {address[0]!r}") from None
        return real_create(address, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    yield state
    assert state.escapes == [], f"connessioni tentate fuori dal loopback: {state.escapes}"


def _fetcher(hosts, private=(), **kwargs) -> Fetcher:
    return Fetcher(FetchPolicy(allowed_hosts=tuple(hosts), private_allowlist=tuple(private), cache_dir=None,
                               obey_robots=False, retries=0, min_interval=0.0, sleep=lambda s: None, **kwargs))


# --- every form through the fetcher ----------------------------------------------------------------------

@pytest.mark.parametrize("case,address,words", FORMS, ids=FORM_IDS)
def test_fetcher_refuses_the_form_before_any_connect(case, address, words, net, local_forum):
    name = f"{case}.test"
    net.names[name] = [address]
    # the test forum's own address is allowlisted: nothing else private may be reached
    fetcher = _fetcher([name, f"{name}:{local_forum.port}"], [f"127.0.0.1:{local_forum.port}"])
    for url in (f"http://{name}/?t=1", f"http://{name}:{local_forum.port}/?t=1"):
        with pytest.raises(HostNotAllowed) as info:
            fetcher.get(url)
        assert info.value.reason == "address" and info.value.code == "host_not_allowed"
        assert words in str(info.value) and address in str(info.value)
    assert net.connects == []


@pytest.mark.parametrize("case,address,words", FORMS, ids=FORM_IDS)
def test_fetcher_refuses_the_form_as_a_literal(case, address, words, net):
    literal = f"[{address}]" if ":" in address else address
    fetcher = _fetcher([literal])
    with pytest.raises(HostNotAllowed) as info:
        fetcher.get(f"http://{literal}/?t=1")
    assert info.value.reason == "address" and words in str(info.value)
    assert net.connects == [] and net.lookups == []


def test_one_refused_address_among_public_ones_refuses_the_name(net):
    net.names["mixed.test"] = ["93.184.216.34", "2002:a00:1::1"]
    with pytest.raises(HostNotAllowed, match="2002:a00:1::1"):
        _fetcher(["mixed.test"]).get("http://mixed.test/?t=1")
    assert net.connects == []


# --- resolve once, connect only to what was checked -------------------------------------------------------

def test_the_name_is_resolved_once_and_the_socket_goes_to_the_checked_address(net, local_forum):
    path = local_forum.set_page("/?t=5", PAGE)
    net.names["forum.test"] = ["127.0.0.1"]
    fetcher = _fetcher([f"forum.test:{local_forum.port}"], [f"127.0.0.1:{local_forum.port}"])
    result = fetcher.get(f"http://forum.test:{local_forum.port}{path}")
    assert result.content == PAGE.encode()
    assert net.lookups == [("forum.test", local_forum.port)]
    assert net.connects == [("127.0.0.1", local_forum.port)]
    (request,) = local_forum.requests_log
    assert request.host == f"forum.test:{local_forum.port}"  # the name, not the address


def test_dns_rebinding_never_reaches_the_second_answer(net, local_forum):
    # the first answer is checked and connected to; a transport that asked again would get 10.0.0.1 (and the
    # guard would fail the test): it never asks, not even on a retry
    path = local_forum.set_page("/?t=6", PAGE)
    local_forum.set_behaviour(path, statuses=[503])
    net.names["rebind.test"] = [["127.0.0.1"], ["10.0.0.1"]]
    fetcher = _fetcher([f"rebind.test:{local_forum.port}"], [f"127.0.0.1:{local_forum.port}"])
    fetcher.policy.retries = 1
    assert fetcher.get(f"http://rebind.test:{local_forum.port}{path}").status == 200
    assert net.lookups == [("rebind.test", local_forum.port)]
    assert net.connects and set(net.connects) == {("127.0.0.1", local_forum.port)}
    assert [r.status for r in local_forum.requests_log] == [503, 200]


def test_a_connection_nobody_checked_is_never_opened(net, local_forum):
    from scraper.netguard import Target

    local_forum.set_page("/?t=7", PAGE)
    fetcher = _fetcher([f"forum.test:{local_forum.port}"], [f"127.0.0.1:{local_forum.port}"])
    with pytest.raises(HostNotAllowed) as info:  # the pinned target names another host
        fetcher._attempt(local_forum.url("/?t=7"), {}, 1024, False, Target("forum.test", local_forum.port,
                                                                            ("127.0.0.1",)))
    assert info.value.reason == "host" and net.connects == [] and local_forum.requests_log == []


# --- redirects: every hop re-checked, ports pinned --------------------------------------------------------

@pytest.mark.parametrize("target,reason", [
    ("http://inside.test:{port}/?t=9", "address"),          # an allowed name that resolves to 10.0.0.1
    ("http://forum.test:{other}/?t=9", "port"),             # the same host on another port
    ("http://127.0.0.1:{other}/?t=9", "host"),              # the allowlisted address on another port
    ("http://[::ffff:10.0.0.1]:{port}/?t=9", "host"),       # a literal nobody listed
    ("http://[2002:a00:1::1]:{port}/?t=9", "address"),      # 6to4 of 10.0.0.1, listed by name
])
def test_every_redirect_hop_is_rechecked(target, reason, net, local_forum):
    net.names["forum.test"] = ["127.0.0.1"]
    net.names["inside.test"] = ["10.0.0.1"]
    port, other = local_forum.port, local_forum.port + 1
    path = local_forum.set_page("/?t=8", PAGE)
    local_forum.set_behaviour(path, redirect=target.format(port=port, other=other))
    fetcher = _fetcher([f"forum.test:{port}", f"inside.test:{port}", f"[2002:a00:1::1]:{port}"],
                       [f"127.0.0.1:{port}"])
    with pytest.raises(HostNotAllowed) as info:
        fetcher.get(f"http://forum.test:{port}{path}")
    assert info.value.reason == reason
    assert net.connects == [("127.0.0.1", port)] and [r.path for r in local_forum.requests_log] == ["/?t=8"]


def test_host_entries_without_a_port_admit_80_and_443_only(net):
    net.names["gdr.forumfree.it"] = ["93.184.216.34"]
    fetcher = _fetcher(["*.forumfree.it"])
    for url in ("http://gdr.forumfree.it/?t=1", "https://gdr.forumfree.it/?t=1", "https://gdr.forumfree.it:80/"):
        fetcher.check_url(url)
    with pytest.raises(HostNotAllowed) as info:
        fetcher.check_url("https://gdr.forumfree.it:8443/?t=1")
    assert info.value.reason == "port" and "gdr.forumfree.it:8443" in str(info.value)
    assert net.connects == []


# --- the private allowlist --------------------------------------------------------------------------------

def test_only_the_listed_private_address_and_port_are_reachable(net, local_forum):
    path = local_forum.set_page("/?t=3", PAGE)
    port = local_forum.port
    fetcher = _fetcher([], [f"127.0.0.1:{port}"])
    assert fetcher.get(f"http://127.0.0.1:{port}{path}").status == 200
    for url, reason in ((f"http://127.0.0.2:{port}{path}", "host"), (f"http://127.0.0.1:{port + 1}{path}", "host"),
                        (f"http://127.0.0.1{path}", "host")):
        with pytest.raises(HostNotAllowed) as info:
            fetcher.get(url)
        assert info.value.reason == reason
    listed = _fetcher(["127.0.0.2:*", f"127.0.0.1:{port + 1}"], [f"127.0.0.1:{port}"])
    for url in (f"http://127.0.0.2:{port}{path}", f"http://127.0.0.1:{port + 1}{path}"):
        with pytest.raises(HostNotAllowed) as info:
            listed.get(url)
        assert info.value.reason == "address"
    assert net.connects == [("127.0.0.1", port)]


@pytest.mark.parametrize("address", ["169.254.169.254", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe",
                                     "fd00:ec2::254", "fe80::1", "100.100.100.200"])
def test_metadata_is_never_reachable_whatever_the_allowlist(address, net):
    net.names["meta.test"] = [address]
    fetcher = _fetcher(["meta.test:*"], ["0.0.0.0/0:*", "[::/0]:*"])
    with pytest.raises(HostNotAllowed, match="mai ammesso") as info:
        fetcher.get("http://meta.test/latest/meta-data/")
    assert info.value.reason == "address" and net.connects == []


@pytest.mark.parametrize("entry", ["169.254.169.254", "169.254.0.0/16:80", "[fd00:ec2::254]:80", "fd00:ec2::254",
                                   "[fe80::/64]:*"])
def test_metadata_entries_are_refused_in_the_allowlist(entry):
    with pytest.raises(AllowlistError, match="sempre vietati"):
        parse_private_entry(entry)


@pytest.mark.parametrize("entry", ["127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:http", "forum.lan",
                                   "[::1", "[::1]8080", "10.0.0.0/33:80", "127.0.0.1:８０"])
def test_unreadable_allowlist_entries_are_named(entry):
    with pytest.raises(AllowlistError):
        parse_private_entry(entry)


@pytest.mark.parametrize("entry,ip,port,admitted", [
    ("127.0.0.1:8123", "127.0.0.1", 8123, True),
    ("127.0.0.1:8123", "127.0.0.1", 8124, False),
    ("127.0.0.1", "127.0.0.1", 80, True),
    ("127.0.0.1", "127.0.0.1", 443, True),
    ("127.0.0.1", "127.0.0.1", 8123, False),
    ("10.1.0.0/16:8080", "10.1.200.3", 8080, True),
    ("10.1.0.0/16:8080", "10.2.0.1", 8080, False),
    ("[::1]:8123", "::1", 8123, True),
    ("::1", "::1", 443, True),
    ("::ffff:127.0.0.1", "127.0.0.1", 80, True),
    ("127.0.0.0/8:*", "127.9.9.9", 1, True),
])
def test_allowlist_entries_pin_address_and_port(entry, ip, port, admitted):
    assert parse_private_entry(entry).admits(ipaddress.ip_address(ip), port) is admitted


def test_the_old_allow_private_switch_is_gone_and_says_what_replaced_it(tmp_path):
    from server.config import ConfigError, load_config

    assert "allow_private" not in {f.name for f in dataclasses.fields(FetchPolicy)}
    f = tmp_path / "c.toml"
    f.write_text("allow_private = true\n", encoding="utf-8")
    for kwargs in ({"config_file": str(f), "environ": {}}, {"environ": {"ARBITRO_ALLOW_PRIVATE": "yes"}}):
        with pytest.raises(ConfigError, match="non esiste più, usa private_allowlist"):
            load_config(**kwargs)


def test_cli_allow_private_names_one_address_and_port(net):
    from server.commands.scrape import fetch_policy
    from server.cli import build_parser

    args = build_parser().parse_args(["scrape", "http://lan.test/?t=1", "--allow-host", "lan.test:8123",
                                      "--allow-private", "192.168.1.10:8123"])
    fetcher = Fetcher(fetch_policy(args, cache_dir=None))
    net.names["lan.test"] = ["192.168.1.10"]
    fetcher.check_url("http://lan.test:8123/?t=1")
    for url, reason in (("http://lan.test/?t=1", "port"), ("http://127.0.0.1:8123/?t=1", "host")):
        with pytest.raises(HostNotAllowed) as info:
            fetcher.check_url(url)
        assert info.value.reason == reason, url
    assert net.connects == []


# --- the address policy itself ----------------------------------------------------------------------------

def test_embedded_ipv4_forms_are_read_exactly():
    read = lambda a: [(form, str(v4)) for form, v4, _ in embedded_ipv4(ipaddress.ip_address(a))]  # noqa: E731
    assert read("2002:a00:1::1") == [("6to4", "10.0.0.1")]
    assert read("2001:0:4136:e378:8000:63bf:f5ff:fffe") == [("Teredo (server)", "65.54.227.120"),
                                                           ("Teredo (client)", "10.0.0.1")]
    assert read("64:ff9b::a00:1") == [("NAT64", "10.0.0.1")]
    assert read("64:ff9b:1:a00:0:100::") == [("NAT64 locale", "10.0.0.1")]
    assert read("::ffff:0:a00:1") == [("IPv4 tradotto (SIIT)", "10.0.0.1")]
    assert read("::a00:1") == [("IPv4-compatibile", "10.0.0.1")]
    assert read("2a00:1450:4001::5efe:a00:1") == [("ISATAP", "10.0.0.1")]
    assert read("2a00:1450:4001::1") == []


@pytest.mark.parametrize("address", ["93.184.216.34", "2a00:1450:4001:81b::200e", "64:ff9b::5db8:d822",
                                     "::ffff:93.184.216.34"])
def test_public_unicast_passes(address):
    assert address_refusal(ipaddress.ip_address(address)) is None and not never_allowed(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["2002:5db8:d822::1", "2001:0:5db8:d822:0:0:a247:29cb"])
def test_tunnels_are_refused_even_around_a_public_ipv4(address):
    assert address_refusal(ipaddress.ip_address(address)) is not None


def test_the_policy_is_no_weaker_than_ipaddress():
    # a sample of every network this Python's ipaddress calls not global: each refused by our table too
    samples = ["0.1.2.3", "10.9.9.9", "100.64.0.1", "127.1.1.1", "169.254.1.1", "172.31.0.1", "192.0.0.170",
               "192.0.2.1", "192.168.0.1", "198.18.0.1", "198.51.100.1", "203.0.113.1", "240.0.0.1", "::1", "::",
               "::ffff:10.1.2.3", "100::", "2001::1", "2001:2::1", "2001:10::1", "2001:db8::", "fc00::", "fe80::"]
    for text in samples:
        ip = ipaddress.ip_address(text)
        assert address_refusal(ip) is not None, text  # each is refused by our table, whatever ipaddress says


# --- one host_matches, one answer, from the fetcher and from the API --------------------------------------

def test_host_matches_one_answer():
    assert host_matches("gdr.forumfree.it", ["*.forumfree.it"])
    assert host_matches("a.b.forumfree.it", ["*.forumfree.it"])
    assert not host_matches("forumfree.it", ["*.forumfree.it"])
    assert host_matches("forumfree.it", ["*.forumfree.it", "forumfree.it"])
    assert not host_matches("evilforumfree.it", ["*.forumfree.it"])
    assert host_matches("gdr.forumfree.it", ["*.forumfree.it:8080"])  # the name only: ports are NetPolicy's
    import server.security
    assert server.security.host_matches is host_matches


def test_wildcard_does_not_match_the_bare_domain_in_the_fetcher(net):
    net.names["gdr.forumfree.it"] = ["93.184.216.34"]
    net.names["forumfree.it"] = ["93.184.216.34"]
    fetcher = _fetcher(["*.forumfree.it"])
    fetcher.check_url("https://gdr.forumfree.it/?t=1")
    with pytest.raises(HostNotAllowed) as info:
        fetcher.check_url("https://forumfree.it/?t=1")
    assert info.value.reason == "host" and net.lookups == [("gdr.forumfree.it", 443)]


# --- through the API ------------------------------------------------------------------------------------

@pytest.fixture()
def api(server_config, net, local_forum):
    """A service under an explicit allowlist: test names by name and port, only the test forum's address private."""
    from server.app import create_app

    made = []

    def make(hosts, private=()):
        cfg = dict(server_config, allowed_hosts=list(hosts), private_allowlist=list(private))
        app = create_app(cfg)
        made.append(app)
        return app.test_client()

    yield make
    for app in made:
        app.extensions["arbitro"].close()


def _refusal(response, reason):
    assert response.status_code == 403, response.get_data(as_text=True)[:300]
    err = response.get_json()["error"]
    assert err["code"] == "host_not_allowed"
    return err


@pytest.mark.parametrize("case,address,words", FORMS, ids=FORM_IDS)
def test_api_refuses_the_form_by_name_and_as_a_literal(case, address, words, api, net, local_forum):
    name = f"{case}.test"
    net.names[name] = [address]
    literal = f"[{address}]" if ":" in address else address
    client = api([name, literal], [f"127.0.0.1:{local_forum.port}"])
    by_name = client.post("/api/v1/audits", json={"url": f"http://{name}/?t=1"})
    assert words in _refusal(by_name, "address")["message"]
    as_literal = _refusal(client.post("/api/v1/audits", json={"url": f"http://{literal}/?t=1"}), "address")
    assert as_literal["details"]["reason"] == "address" and words in as_literal["message"]
    assert net.connects == []


def test_api_fetches_only_the_allowlisted_private_address(api, net, local_forum, fixtures_dir):
    tid = 62345678
    local_forum.add_thread("forumfree", tid, [fixtures_dir / "forumfree/topic_62345678_st0.html",
                                              fixtures_dir / "forumfree/topic_62345678_st15.html"])
    port = local_forum.port
    client = api(["*.forumfree.it"], [f"127.0.0.1:{port}"])
    ok = client.post("/api/v1/audits", json={"url": f"http://127.0.0.1:{port}/?t={tid}"})
    assert ok.status_code == 200, ok.get_data(as_text=True)[:300]
    assert net.connects and set(net.connects) == {("127.0.0.1", port)}
    for url in (f"http://127.0.0.1:{port + 1}/?t={tid}", f"http://127.0.0.2:{port}/?t={tid}",
                f"http://localhost:{port}/?t={tid}", f"http://[::1]:{port}/?t={tid}"):
        err = _refusal(client.post("/api/v1/audits", json={"url": url}), "host")
        assert err["details"]["reason"] == "host"
    assert set(net.connects) == {("127.0.0.1", port)}


def test_api_redirect_to_an_internal_address_is_refused(api, net, local_forum):
    port = local_forum.port
    net.names["forum.test"] = ["127.0.0.1"]
    net.names["inside.test"] = ["10.0.0.1"]
    path = local_forum.set_page("/?t=11", PAGE)
    local_forum.set_behaviour(path, redirect=f"http://inside.test:{port}/?t=11")
    client = api([f"forum.test:{port}", f"inside.test:{port}"], [f"127.0.0.1:{port}"])
    err = _refusal(client.post("/api/v1/audits", json={"url": f"http://forum.test:{port}/?t=11"}), "address")
    assert "10.0.0.1" in err["message"]
    assert net.connects == [("127.0.0.1", port)]


def test_api_pins_the_port(api, net):
    client = api(["*.forumfree.it"])
    err = _refusal(client.post("/api/v1/audits", json={"url": "https://gdr.forumfree.it:8443/?t=1"}), "port")
    assert err["details"] == {"host": "gdr.forumfree.it", "port": 8443, "reason": "port"}
    assert net.connects == [] and net.lookups == []


def test_api_and_fetcher_give_one_answer_for_the_bare_domain(api, net):
    client = api(["*.forumfree.it"])
    err = _refusal(client.post("/api/v1/audits", json={"url": "https://forumfree.it/?t=1"}), "host")
    assert err["details"]["reason"] == "host"
    accepted = client.get("/api/v1/threads", query_string={"url": "https://gdr.forumfree.it/?t=1"})
    assert accepted.status_code == 404 and accepted.get_json()["error"]["code"] == "thread_not_stored"
    assert net.connects == [] and net.lookups == []


def test_net_policy_is_what_the_api_applies():
    from server.security import net_policy

    policy = net_policy({"allowed_hosts": ["*.forumfree.it"], "private_allowlist": ["127.0.0.1:8123"]})
    assert isinstance(policy, NetPolicy)
    policy.check_host("127.0.0.1", 8123)
    with pytest.raises(HostNotAllowed):
        policy.check_host("127.0.0.1", 8124)


def test_localhost_is_judged_as_loopback_and_then_resolved(net, local_forum):
    path = local_forum.set_page("/?t=12", PAGE)
    port = local_forum.port
    net.names["localhost"] = ["127.0.0.1"]
    with pytest.raises(HostNotAllowed) as info:
        _fetcher([f"localhost:{port}"]).get(f"http://localhost:{port}{path}")
    assert info.value.reason == "address" and net.lookups == []
    assert _fetcher([f"localhost:{port}"], [f"127.0.0.1:{port}"]).get(f"http://localhost:{port}{path}").status == 200
    assert net.lookups == [("localhost", port)] and net.connects == [("127.0.0.1", port)]


@pytest.mark.parametrize("entry", ["169.254.169.254:80", "127.0.0.1:porta"])
def test_a_bad_allowlist_entry_stops_the_service_at_start_up(entry, server_config):
    from server.app import create_app
    from server.config import ConfigError

    with pytest.raises(ConfigError, match="private_allowlist"):
        create_app(dict(server_config, private_allowlist=[entry]))
