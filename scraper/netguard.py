"""Where the fetcher may connect: the address policy, the host and private allowlists (ports pinned), and the
pinned connection that opens a socket only to addresses the policy resolved and checked."""
from __future__ import annotations

import ipaddress
import socket
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.util.retry import Retry
from urllib3.util.timeout import _DEFAULT_TIMEOUT

from .errors import HostNotAllowed

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
Net = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_PORTS = frozenset({80, 443})  # an allowlist entry that names no port admits these only
ANY_PORT = None  # `:*` in an entry: any port (test rigs with a server on a free port)

_n = ipaddress.ip_network

# IANA special-purpose registries (RFC 6890 and successors), by our own table so the answer does not change with
# the Python version's `ipaddress` (3.11 calls 6to4 and Teredo global, and knows no 100.64/10 in is_private).
_REFUSED_V4: tuple[tuple[Net, str], ...] = (
    (_n("0.0.0.0/8"), "rete «questa rete»"),
    (_n("10.0.0.0/8"), "rete privata"),
    (_n("100.64.0.0/10"), "spazio condiviso CGNAT"),
    (_n("127.0.0.0/8"), "loopback"),
    (_n("169.254.0.0/16"), "link-local (metadati cloud)"),
    (_n("172.16.0.0/12"), "rete privata"),
    (_n("192.0.0.0/24"), "assegnazioni di protocollo IETF"),
    (_n("192.0.2.0/24"), "rete di documentazione"),
    (_n("192.31.196.0/24"), "AS112"),
    (_n("192.52.193.0/24"), "AMT"),
    (_n("192.88.99.0/24"), "relay 6to4"),
    (_n("192.168.0.0/16"), "rete privata"),
    (_n("192.175.48.0/24"), "AS112"),
    (_n("198.18.0.0/15"), "rete di benchmark"),
    (_n("198.51.100.0/24"), "rete di documentazione"),
    (_n("203.0.113.0/24"), "rete di documentazione"),
    (_n("224.0.0.0/4"), "multicast"),
    (_n("240.0.0.0/4"), "riservato"),  # 255.255.255.255 (broadcast) included
)
_REFUSED_V6: tuple[tuple[Net, str], ...] = (
    (_n("::/8"), "riservato (IPv4-compatibile, loopback, non specificato)"),
    (_n("100::/64"), "prefisso di scarto"),
    (_n("2001::/23"), "assegnazioni di protocollo IETF"),
    (_n("2001:db8::/32"), "rete di documentazione"),
    (_n("3fff::/20"), "rete di documentazione"),
    (_n("fc00::/7"), "rete privata (ULA)"),
    (_n("fe80::/10"), "link-local"),
    (_n("fec0::/10"), "site-local"),
    (_n("ff00::/8"), "multicast"),
)
_GLOBAL_UNICAST_V6 = _n("2000::/3")  # the only IPv6 space allocated to hosts; the rest is reserved

# Cloud metadata endpoints: no allowlist entry ever reaches them (AWS, Azure, GCP, Oracle: 169.254.169.254;
# AWS IPv6 fd00:ec2::254; GCP IPv6 fd20:ce::254; Alibaba 100.100.100.200), nor IPv6 link-local.
NEVER_ALLOWED: tuple[Net, ...] = (_n("169.254.0.0/16"), _n("fe80::/10"), _n("fd00:ec2::254/128"),
                                  _n("fd20:ce::254/128"), _n("100.100.100.200/32"))

_MAPPED = _n("::ffff:0:0/96")
_TRANSLATED = _n("::ffff:0:0:0/96")  # SIIT (RFC 2765)
_COMPATIBLE = _n("::/96")
_6TO4 = _n("2002::/16")
_TEREDO = _n("2001::/32")
_NAT64 = _n("64:ff9b::/96")
_NAT64_LOCAL = _n("64:ff9b:1::/48")  # RFC 8215, local use: its IPv4 sits in bits 48-63 and 72-87 (RFC 6052)


class AllowlistError(ValueError):
    """An allowlist entry that cannot be read, or that names an address no entry may open (cloud metadata)."""


def _v4(value: int) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(value & 0xFFFFFFFF)


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address, bool]]:
    """The IPv4 addresses an IPv6 address carries: (form, IPv4, always refused). 6to4, Teredo, SIIT, local NAT64
    and IPv4-compatible are tunnels or translations no forum is served on: refused whatever they carry; the
    well-known NAT64 prefix (DNS64 networks) and ISATAP stand or fall with the IPv4 they carry."""
    n = int(ip)
    found: list[tuple[str, ipaddress.IPv4Address, bool]] = []
    if ip in _TRANSLATED:
        found.append(("IPv4 tradotto (SIIT)", _v4(n), True))
    elif ip in _COMPATIBLE:
        found.append(("IPv4-compatibile", _v4(n), True))
    if ip in _6TO4:
        found.append(("6to4", _v4(n >> 80), True))
    if ip in _TEREDO:
        found.append(("Teredo (server)", _v4(n >> 64), True))
        found.append(("Teredo (client)", _v4(~n), True))  # the client address is stored bit-inverted
    if ip in _NAT64:
        found.append(("NAT64", _v4(n), False))
    if ip in _NAT64_LOCAL:
        found.append(("NAT64 locale", _v4(((n >> 64) & 0xFFFF) << 16 | ((n >> 40) & 0xFFFF)), True))
    if (n >> 32) & 0xFDFFFFFF == 0x00005EFE:  # ISATAP interface id (u/g bit either way)
        found.append(("ISATAP", _v4(n), False))
    return found


def _table(ip: IP) -> str | None:
    for net, label in (_REFUSED_V4 if ip.version == 4 else _REFUSED_V6):
        if ip in net:
            return label
    return None


def address_refusal(ip: IP) -> str | None:
    """Why `ip` is not a public unicast address (Italian, for the message), or None when it is one."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            return "indirizzo con zona di rete"
        if ip.ipv4_mapped is not None:
            inner = address_refusal(ip.ipv4_mapped)
            return f"IPv4-mapped di {ip.ipv4_mapped}: {inner}" if inner else None
        judged = [(form, v4, always, address_refusal(v4)) for form, v4, always in embedded_ipv4(ip)]
        # a carried IPv4 that is itself refused is named first (Teredo's client before its public server)
        for form, v4, always, inner in sorted(judged, key=lambda j: j[3] is None):
            if always or inner:
                return f"{form}, incapsula {v4}" + (f" ({inner})" if inner else "")
        if ip in _NAT64:
            return None  # DNS64's translation of a public IPv4, judged above
        label = _table(ip)
        if label:
            return label
        if ip not in _GLOBAL_UNICAST_V6:
            return "riservato"
    else:
        label = _table(ip)
        if label:
            return label
    if not ip.is_global:  # whatever this Python's registry knows and our table does not
        return "non pubblico"
    return None


def never_allowed(ip: IP) -> bool:
    """A cloud-metadata or link-local address, itself or carried inside an IPv6 form."""
    candidates: list[IP] = [ip]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            candidates.append(ip.ipv4_mapped)
        candidates += [v4 for _, v4, _ in embedded_ipv4(ip)]
    return any(c.version == net.version and c in net for c in candidates for net in NEVER_ALLOWED)


def parse_ip(text: str) -> IP | None:
    """An IP literal (brackets allowed, IPv4-mapped read as the IPv4 it is), or None for a name."""
    try:
        ip = ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None and not ip.scope_id:
        return ip.ipv4_mapped
    return ip


# --- allowlist entries: `what[:port]`, `[ipv6][:port]`, port `*` for any ------------------------------------

def _split_port(entry: str) -> tuple[str, frozenset[int] | None]:
    text = entry.strip()
    if text.startswith("["):
        head, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise AllowlistError(f"voce non valida: {entry!r} (forma: [indirizzo IPv6]:porta)")
        return head, _ports(rest[1:], entry) if rest else DEFAULT_PORTS
    if text.count(":") == 1:
        head, _, port = text.partition(":")
        return head, _ports(port, entry)
    return text, DEFAULT_PORTS  # a name, an IPv4, or a bare IPv6 (no port: brackets are needed for one)


def _ports(text: str, entry: str) -> frozenset[int] | None:
    if text == "*":
        return ANY_PORT
    if not text.isascii() or not text.isdigit() or not 0 < int(text) < 65536:
        raise AllowlistError(f"porta non valida in {entry!r} (un numero da 1 a 65535, o *)")
    return frozenset({int(text)})


def _admits(ports: frozenset[int] | None, port: int) -> bool:
    return ports is ANY_PORT or port in ports


def _ports_text(ports: frozenset[int] | None) -> str:
    return "qualsiasi" if ports is ANY_PORT else ", ".join(str(p) for p in sorted(ports))


@dataclass(frozen=True)
class PrivateEntry:
    """One `private_allowlist` entry: a private address or network, and the ports it opens."""

    network: Net
    ports: frozenset[int] | None

    def admits(self, ip: IP, port: int) -> bool:
        return ip.version == self.network.version and ip in self.network and _admits(self.ports, port)


def parse_private_entry(entry: str) -> PrivateEntry:
    """`127.0.0.1:8123`, `10.1.0.0/16:8080`, `[::1]:8123`, `192.168.1.5` (ports 80 and 443), `127.0.0.1:*`."""
    head, ports = _split_port(entry)
    try:
        network = ipaddress.ip_network(head, strict=False)
    except ValueError:
        raise AllowlistError(f"voce di private_allowlist non valida: {entry!r} (un indirizzo o una rete CIDR, "
                             "con la porta: 127.0.0.1:8123)") from None
    if isinstance(network, ipaddress.IPv6Network) and network.prefixlen >= 96 and \
            network.network_address.ipv4_mapped is not None:
        network = ipaddress.ip_network(f"{network.network_address.ipv4_mapped}/{network.prefixlen - 96}")
    if any(network.version == net.version and network.subnet_of(net) for net in NEVER_ALLOWED):  # type: ignore[arg-type]
        raise AllowlistError(f"{entry!r} non può essere ammesso: metadati cloud e link-local restano sempre "
                             "vietati")
    return PrivateEntry(network, ports)




def host_matches(host: str, patterns: Iterable[str]) -> bool:
    """The one host-name match. `*.forumfree.it` matches `gdr.forumfree.it` (any depth) but not `forumfree.it`
    itself (list both to allow both); other patterns match exactly. Case and a final dot are ignored; a port
    in a pattern (`host:8080`) is not looked at here (see HostRule)."""
    host = host.lower().rstrip(".").strip("[]")
    for pattern in patterns:
        try:
            name = HostRule.parse(pattern).name
        except AllowlistError:
            continue
        if name.startswith("*."):
            if host.endswith(name[1:]) and len(host) > len(name) - 1:
                return True
        elif name and host == name:
            return True
    return False


@dataclass(frozen=True)
class HostRule:
    """One host allowlist entry: `gdr.forumfree.it`, `*.forumfree.it`, `forum.lan:8080`, `127.0.0.1:*`."""

    name: str
    ports: frozenset[int] | None

    @classmethod
    def parse(cls, entry: str) -> HostRule:
        head, ports = _split_port(entry)
        return cls(head.lower().rstrip(".").strip("[]"), ports)


# --- the policy ------------------------------------------------------------------------------------------------

def refused(message: str, reason: str) -> HostNotAllowed:
    """HostNotAllowed with `.reason`: "host" (not on the allowlist), "port" (the allowlist entry does not name
    this port), "address" (private/reserved, or never admissible), "url" (not a URL we fetch)."""
    err = HostNotAllowed(message)
    err.reason = reason  # type: ignore[attr-defined]
    return err


_LOOPBACK = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))  # RFC 6761 `localhost`


class NetPolicy:
    """The host allowlist and the private allowlist, as the fetcher and the API's acceptance check both apply
    them. Order: the name (else "host"), the address (else "address"), the port (else "port")."""

    def __init__(self, allowed_hosts: Iterable[str], private_allowlist: Iterable[str] = ()) -> None:
        self.hosts = tuple(HostRule.parse(h) for h in allowed_hosts if h.strip())
        self.private = tuple(parse_private_entry(e) for e in private_allowlist)

    def _private_admits(self, ip: IP, port: int) -> bool:
        return any(entry.admits(ip, port) for entry in self.private)

    def check_host(self, host: str, port: int) -> None:
        """The name and port of a URL, before any resolution (an IP literal's address is judged here too)."""
        literal = parse_ip(host)
        rules = [r for r in self.hosts if host_matches(host, [r.name])]
        if not rules and not (literal is not None and self._private_admits(literal, port)):
            raise refused(f"host non consentito: {host} (non è tra gli host ammessi)", "host")
        if literal is not None:
            self.check_address(host, literal, port)
        elif host == "localhost" or host.endswith(".localhost"):
            # loopback by definition: refused before any resolution unless 127.0.0.1 or ::1 is listed with
            # this port (the fetcher then checks each address it really resolves to)
            if not any(self._private_admits(ip, port) for ip in _LOOPBACK):
                self.check_address(host, _LOOPBACK[0], port)
        if literal is not None and self._private_admits(literal, port):
            return  # the private entry names this address and port: it is the permission
        if not any(_admits(r.ports, port) for r in rules):
            ports = ", ".join(sorted({_ports_text(r.ports) for r in rules}))
            raise refused(f"porta non consentita: {host}:{port} (porte ammesse per {host}: {ports}; "
                          f"un'altra porta va indicata nell'elenco degli host, es. {host}:{port})", "port")

    def check_address(self, host: str, address: IP | str, port: int) -> None:
        """One resolved address: public unicast, or named with this port by `private_allowlist` (never metadata).
        An IPv4-mapped address is judged as the IPv4 it is; the message shows the address as resolved."""
        try:
            raw = ipaddress.ip_address(address.strip("[]") if isinstance(address, str) else address)
        except ValueError:
            raise refused(f"indirizzo non valido per {host}: {address!r}", "address") from None
        ip = parse_ip(str(raw)) or raw
        shown = address.strip("[]") if isinstance(address, str) else str(raw)
        why = address_refusal(raw)
        if never_allowed(raw):
            raise refused(f"{host} porta a {shown} ({why or 'metadati cloud'}): indirizzo mai ammesso, nemmeno "
                          "da private_allowlist", "address")
        if why is None or self._private_admits(ip, port):
            return
        raise refused(f"{host} porta a un indirizzo privato o riservato ({shown}: {why}): non consentito", "address")


# --- the pinned connection: the socket goes only to addresses checked for this exchange -----------------------

@dataclass(frozen=True)
class Target:
    """The checked destination of one request: the transport's host name, port, and the addresses it may use."""

    host: str
    port: int
    addresses: tuple[str, ...]


class Unpinned(Exception):
    """A connection asked for with no checked addresses for its host and port: nothing is connected."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(host, port)
        self.host = host
        self.port = port


def connect_pinned(addresses: Sequence[str], port: int, timeout: Any, source_address: Any,
                   socket_options: Any) -> socket.socket:
    """urllib3's create_connection without the name lookup: each checked address in turn, first success wins."""
    err: OSError | None = None
    for address in addresses:
        ip = ipaddress.ip_address(address)
        sock = None
        try:
            sock = socket.socket(socket.AF_INET6 if ip.version == 6 else socket.AF_INET, socket.SOCK_STREAM)
            for opt in socket_options or ():
                sock.setsockopt(*opt)
            if timeout is not _DEFAULT_TIMEOUT:
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect((str(ip), port))
            return sock
        except OSError as exc:
            err = exc
            if sock is not None:
                sock.close()
    raise err if err is not None else OSError("nessun indirizzo verificato")


def _pinned(base: type, pins: Callable[[str, int], Target | None],
            watch: Callable[[socket.socket], None] | None) -> type:
    class Pinned(base):  # type: ignore[misc, valid-type]
        """`base` whose socket goes to the addresses `pins` gives for (host, port); SNI and Host stay the name."""

        def _new_conn(self) -> socket.socket:
            host = self.host.strip("[]").lower()
            target = pins(host, self.port)
            if target is None:
                raise Unpinned(host, self.port)
            try:
                sock = connect_pinned(target.addresses, self.port, self.timeout, self.source_address,
                                      self.socket_options)
            except TimeoutError as exc:
                raise urllib3.exceptions.ConnectTimeoutError(
                    self, f"Connection to {self.host} timed out. (connect timeout={self.timeout})") from exc
            except OSError as exc:
                raise urllib3.exceptions.NewConnectionError(
                    self, f"Failed to establish a new connection: {exc}") from exc
            sys.audit("http.client.connect", self, self.host, self.port)
            if watch is not None:
                watch(sock)
            return sock

        def getresponse(self, *args: Any, **kwargs: Any) -> Any:
            if watch is not None and self.sock is not None:
                watch(self.sock)  # a kept-alive connection: its socket is new to this exchange
            return super().getresponse(*args, **kwargs)
    return Pinned


class PinnedAdapter(HTTPAdapter):
    """The requests transport adapter whose connections never resolve a name: they connect to the addresses
    `pins(host, port)` returns (the ones the policy checked for this exchange), or refuse to connect. `retries()`
    gives the running exchange's urllib3 Retry (each exchange carries its own count and waits), None outside one."""

    def __init__(self, pins: Callable[[str, int], Target | None],
                 watch: Callable[[socket.socket], None] | None = None,
                 retries: Callable[[], Retry | None] | None = None, **kwargs: Any) -> None:
        self._pins = pins
        self._watch = watch
        self._retries = retries
        super().__init__(**kwargs)

    @property
    def max_retries(self) -> Retry:  # type: ignore[override]
        """What requests hands urllib3 for this request: the exchange's Retry, else the adapter's own."""
        current = self._retries() if self._retries is not None else None
        return current if current is not None else self._default_retries

    @max_retries.setter
    def max_retries(self, value: Retry) -> None:
        self._default_retries = value

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        pins, watch = self._pins, self._watch

        class HTTPPool(HTTPConnectionPool):
            ConnectionCls = _pinned(urllib3.connection.HTTPConnection, pins, watch)

        class HTTPSPool(HTTPSConnectionPool):
            ConnectionCls = _pinned(urllib3.connection.HTTPSConnection, pins, watch)

        self.poolmanager.pool_classes_by_scheme = {"http": HTTPPool, "https": HTTPSPool}


__all__ = ["AllowlistError", "DEFAULT_PORTS", "HostRule", "NEVER_ALLOWED", "NetPolicy",
           "PinnedAdapter", "PrivateEntry", "Target", "Unpinned", "address_refusal", "connect_pinned",
           "embedded_ipv4", "host_matches", "never_allowed", "parse_ip", "parse_private_entry", "refused"]
