"""The Kubernetes CEL IP, CIDR and URL libraries (``k8s.io/apiserver/pkg/cel/library``
``ip.go``, ``cidr.go``, ``urls.go``), which the base environment enables (IP and CIDR since
1.30, URLs since 1.0) and DRA selectors therefore accept.

Addresses are parsed as Go's ``net/netip.ParseAddr`` and ``ParsePrefix`` do, with their error
texts (``ParseAddr("1.2.3"): IPv4 address too short``); a zone (``fe80::1%eth0``) and an
IPv4-mapped IPv6 address are refused as Kubernetes' ``parseIPAddr`` / ``parseCIDR`` do. URLs
follow Go's ``net/url`` ``ParseRequestURI`` (an absolute URI or an absolute path) for the
common forms: scheme, authority with host and numeric port, path, query; the getters return
what ``url.URL`` returns (``Host``, ``Hostname()``, ``Port()``, ``EscapedPath()``,
``Query()``).

Values travel through cel-expr-python as one-entry maps, like Quantity
(`schedsim.dra.cellib`): ``{IP_KEY: canonical address}``, ``{CIDR_KEY: "addr/bits"}`` (the
address as written, not masked, as ``netip.Prefix``), ``{URL_KEY: the URL text}``. Equality
of two IPs is equality of their canonical forms, as ``netip.Addr`` equality.

Known differences: ``type(ip(x)) == net.IP`` does not compile (no ``net.IP`` type name);
URL parsing does not reproduce every corner of Go's parser (e.g. its exact error text for
an invalid host character).
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from functools import lru_cache
from typing import Any

__all__ = [
    "CIDR_KEY",
    "IP_KEY",
    "URL_KEY",
    "cidr_value",
    "ip_value",
    "parse_addr",
    "url_value",
]

_Addr = ipaddress.IPv4Address | ipaddress.IPv6Address

IP_KEY = "kubernetes.net.IP"
CIDR_KEY = "kubernetes.net.CIDR"
URL_KEY = "kubernetes.URL"


def _quote(s: str) -> str:
    """Go's strconv.Quote for the texts these errors carry (ASCII, quotes and backslashes
    escaped)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _AddrError(ValueError):
    def __init__(self, text: str, msg: str, at: str = "") -> None:
        where = f" (at {_quote(at)})" if at else ""
        super().__init__(f"ParseAddr({_quote(text)}): {msg}{where}")


def _ipv4_fields(text: str, s: str) -> bytes:
    """Go's parseIPv4Fields over ``s`` (a part of ``text``, for the message)."""
    fields: list[int] = []
    val, digits = 0, 0
    for i, c in enumerate(s):
        if "0" <= c <= "9":
            if digits == 1 and val == 0:
                raise _AddrError(text, "IPv4 field has octet with leading zero")
            val = val * 10 + ord(c) - 48
            digits += 1
            if val > 255:
                raise _AddrError(text, "IPv4 field has value >255")
        elif c == ".":
            if i == 0 or i == len(s) - 1 or s[i - 1] == ".":
                raise _AddrError(text, "IPv4 field must have at least one digit", s[i:])
            if len(fields) == 3:
                raise _AddrError(text, "IPv4 address too long")
            fields.append(val)
            val, digits = 0, 0
        else:
            raise _AddrError(text, "unexpected character", s[i:])
    if len(fields) < 3:
        raise _AddrError(text, "IPv4 address too short")
    fields.append(val)
    return bytes(fields)


def _hex_group(s: str) -> tuple[int, int]:
    """(value, digits) of the hex digits that start ``s``; raises for 5+ digits."""
    acc, off = 0, 0
    while off < len(s) and s[off] in "0123456789abcdefABCDEF":
        acc = (acc << 4) + int(s[off], 16)
        if off > 3:
            raise ValueError("each group must have 4 or less digits")
        off += 1
    return acc, off


def _ipv6(text: str) -> tuple[bytes, str]:
    """Go's parseIPv6: the 16 bytes and the zone."""
    s, zone = text, ""
    if "%" in s:
        s, zone = s.split("%", 1)
        if not zone:
            raise _AddrError(text, "zone must be a non-empty string")
    ip = bytearray(16)
    ellipsis = -1
    if s.startswith("::"):
        ellipsis, s = 0, s[2:]
        if not s:
            return bytes(ip), zone
    i = 0
    while i < 16:
        try:
            acc, off = _hex_group(s)
        except ValueError as e:
            raise _AddrError(text, str(e), s) from None
        if off == 0:
            raise _AddrError(text, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _AddrError(
                    text, "embedded IPv4 address must replace the final 2 fields of the address", s
                )
            if i + 4 > 16:
                raise _AddrError(
                    text,
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    s,
                )
            ip[i : i + 4] = _ipv4_fields(text, s)
            s, i = "", i + 4
            break
        ip[i], ip[i + 1] = acc >> 8, acc & 0xFF
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != ":":
            raise _AddrError(text, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _AddrError(text, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise _AddrError(text, "multiple :: in address", s)
            ellipsis, s = i, s[1:]
            if not s:
                break
    if s:
        raise _AddrError(text, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise _AddrError(text, "address string too short")
        n = 16 - i
        ip[ellipsis + n : 16] = ip[ellipsis:i]
        ip[ellipsis : ellipsis + n] = bytes(n)
    elif ellipsis >= 0:
        raise _AddrError(text, "the :: must expand to at least one field of zeros", s)
    return bytes(ip), zone


def _parse_addr(text: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, str]:
    """Go's netip.ParseAddr: the address and its zone."""
    for c in text:
        if c == ".":
            return ipaddress.IPv4Address(_ipv4_fields(text, text)), ""
        if c == ":":
            raw, zone = _ipv6(text)
            return ipaddress.IPv6Address(raw), zone
        if c == "%":
            raise _AddrError(text, "missing IPv6 address")
    raise _AddrError(text, "unable to parse IP")


@lru_cache(maxsize=4096)
def parse_addr(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An IP address as Kubernetes' CEL ``ip()`` accepts it (``parseIPAddr``).

    Raises:
        ValueError: Kubernetes' message (``IP Address "x" parse error during conversion
            from string: ParseAddr("x"): ...``, a zone, an IPv4-mapped IPv6 address).
    """
    try:
        addr, zone = _parse_addr(text)
    except _AddrError as e:
        raise ValueError(
            f"IP Address {_quote(text)} parse error during conversion from string: {e}"
        ) from None
    if zone:
        raise ValueError(f"IP address {_quote(text)} with zone value is not allowed")
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address {_quote(text)} is not allowed")
    return addr


def _canonical(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    # Python's compressed form is RFC 5952's, as Go's Addr.String()
    return addr.compressed


def ip_value(text: str) -> dict[str, str]:
    """The CEL carrier of ``ip(text)`` (raises ValueError as `parse_addr`)."""
    return {IP_KEY: _canonical(parse_addr(text))}


def _is_ip(text: str) -> bool:
    try:
        parse_addr(text)
    except ValueError:
        return False
    return True


def _is_canonical(text: str) -> bool:
    return _canonical(parse_addr(text)) == text


def _need(value: Any, key: str, function: str) -> str:
    if isinstance(value, dict) and len(value) == 1 and key in value:
        return str(value[key])
    raise TypeError(f"no such overload: {function}")


def _addr_of(value: Any, function: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(_need(value, IP_KEY, function))


def _family(v: Any) -> int:
    return _addr_of(v, "family").version


def _is_unspecified(v: Any) -> bool:
    return _addr_of(v, "isUnspecified").is_unspecified


def _is_loopback(v: Any) -> bool:
    a = _addr_of(v, "isLoopback")
    return a in _V4_LOOPBACK if a.version == 4 else a == _V6_LOOPBACK


_V4_LOOPBACK = ipaddress.ip_network("127.0.0.0/8")
_V6_LOOPBACK = ipaddress.IPv6Address("::1")
_V4_LL_MULTICAST = ipaddress.ip_network("224.0.0.0/24")
_V4_LL_UNICAST = ipaddress.ip_network("169.254.0.0/16")
_V6_LL_UNICAST = ipaddress.ip_network("fe80::/10")
_V4_MULTICAST = ipaddress.ip_network("224.0.0.0/4")
_V6_MULTICAST = ipaddress.ip_network("ff00::/8")


def _is_link_local_multicast(v: Any) -> bool:
    a = _addr_of(v, "isLinkLocalMulticast")
    if a.version == 4:
        return a in _V4_LL_MULTICAST
    return (int(a) >> 112) & 0xFF0F == 0xFF02  # Go: ip.v6u16(0)&0xff0f == 0xff02


def _is_link_local_unicast(v: Any) -> bool:
    a = _addr_of(v, "isLinkLocalUnicast")
    return a in (_V4_LL_UNICAST if a.version == 4 else _V6_LL_UNICAST)


def _is_global_unicast(v: Any) -> bool:
    """Go's Addr.IsGlobalUnicast: private and ULA addresses count as global unicast."""
    a = _addr_of(v, "isGlobalUnicast")
    if a.version == 4:
        if int(a) in (0, 0xFFFFFFFF):
            return False
        return a not in _V4_LOOPBACK and a not in _V4_MULTICAST and a not in _V4_LL_UNICAST
    return (
        not a.is_unspecified
        and a != _V6_LOOPBACK
        and a not in _V6_MULTICAST
        and a not in _V6_LL_UNICAST
    )


# ---------------------------------------------------------------------------- CIDR

_BITS = re.compile(r"0|[1-9][0-9]*")


@lru_cache(maxsize=4096)
def _parse_prefix(text: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """Go's netip.ParsePrefix plus Kubernetes' parseCIDR checks: (address as written, bits).

    Raises:
        ValueError: Kubernetes' message.
    """

    def fail(problem: str) -> ValueError:
        return ValueError(
            "network address parse error during conversion from string: "
            "network address parse error during conversion from string: "
            f"netip.ParsePrefix({_quote(text)}): {problem}"
        )

    addr_text, slash, bits_text = text.rpartition("/")
    if not slash:
        raise fail("no '/'")
    if "%" in addr_text:
        raise fail("IPv6 zones cannot be present in a prefix")
    try:
        addr, _ = _parse_addr(addr_text)
    except _AddrError as e:
        raise fail(str(e)) from None
    if _BITS.fullmatch(bits_text) is None or len(bits_text) > 3:
        raise fail(f"bad bits after slash: {_quote(bits_text)}")
    bits = int(bits_text)
    if bits > addr.max_prefixlen:
        raise fail("prefix length out of range")
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError(
            "network address parse error during conversion from string: "
            f"IPv4-mapped IPv6 address {_quote(text)} is not allowed"
        )
    return addr, bits


def cidr_value(text: str) -> dict[str, str]:
    """The CEL carrier of ``cidr(text)`` (raises ValueError)."""
    addr, bits = _parse_prefix(text)
    return {CIDR_KEY: f"{_canonical(addr)}/{bits}"}


def _is_cidr(text: str) -> bool:
    try:
        _parse_prefix(text)
    except ValueError:
        return False
    return True


def _prefix_of(
    value: Any, function: str
) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    addr, _, bits = _need(value, CIDR_KEY, function).rpartition("/")
    return ipaddress.ip_address(addr), int(bits)


def _masked_int(addr: ipaddress.IPv4Address | ipaddress.IPv6Address, bits: int) -> int:
    host = addr.max_prefixlen - bits
    return (int(addr) >> host) << host


def _contains_ip(c: Any, other: Any) -> bool:
    addr, bits = _prefix_of(c, "containsIP")
    ip = parse_addr(other) if isinstance(other, str) else _addr_of(other, "containsIP")
    if ip.version != addr.version:
        return False
    return _masked_int(ip, bits) == _masked_int(addr, bits)


def _contains_cidr(c: Any, other: Any) -> bool:
    """Kubernetes' cidrContainsCIDR: ``c.Masked() == PrefixFrom(other.Addr(), c.Bits())``
    (the other prefix's address as written, not masked) and ``c.Bits() <= other.Bits()``."""
    addr, bits = _prefix_of(c, "containsCIDR")
    if isinstance(other, str):
        o_addr, o_bits = _parse_prefix(other)
    else:
        o_addr, o_bits = _prefix_of(other, "containsCIDR")
    if o_addr.version != addr.version:
        return False
    return int(o_addr) == _masked_int(addr, bits) and bits <= o_bits


def _cidr_ip(c: Any) -> dict[str, str]:
    addr, _ = _prefix_of(c, "ip")
    return {IP_KEY: _canonical(addr)}


def _masked(c: Any) -> dict[str, str]:
    addr, bits = _prefix_of(c, "masked")
    masked = (
        ipaddress.ip_address(_masked_int(addr, bits))
        if addr.version == 4
        else (ipaddress.IPv6Address(_masked_int(addr, bits)))
    )
    return {CIDR_KEY: f"{_canonical(masked)}/{bits}"}


def _prefix_length(c: Any) -> int:
    return _prefix_of(c, "prefixLength")[1]


# ---------------------------------------------------------------------------- URL

_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]*")
_PATH_SAFE = "$&+,/:;=@-_.~"  # Go's shouldEscape(encodePath) keeps these unescaped


@lru_cache(maxsize=4096)
def _parse_url(text: str) -> urllib.parse.SplitResult:
    """Go's url.ParseRequestURI check, then the parts as url.Parse splits them.

    Raises:
        ValueError: ``URL parse error during conversion from string: parse "x": ...``.
    """

    def fail(problem: str) -> ValueError:
        return ValueError(
            f"URL parse error during conversion from string: parse {_quote(text)}: {problem}"
        )

    if text == "":
        raise fail("empty url")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise fail("net/url: invalid control character in URL")
    rest = text
    colon = text.find(":")
    first = min((i for i in (text.find("/"), text.find("?")) if i >= 0), default=len(text))
    if 0 <= colon < first:
        if colon == 0:
            raise fail("missing protocol scheme")
        if _SCHEME.fullmatch(text[:colon]) is None:
            # Go: a colon in the first segment of a relative path
            raise fail("first path segment in URL cannot contain colon")
        rest = text[colon + 1 :]
    elif not text.startswith("/"):
        raise fail("invalid URI for request")
    if rest.startswith("//"):
        authority = rest[2:].split("/", 1)[0].split("?", 1)[0]
        host = authority.rpartition("@")[2]
        _check_host(host, fail)
    parts = urllib.parse.urlsplit(text, allow_fragments=True)
    return parts


def _check_host(host: str, fail: Any) -> None:
    """Go's parseHost: an IPv6 literal in brackets, then an optional numeric port."""
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            raise fail("missing ']' in host")
        port = host[end + 1 :]
        if port and (not port.startswith(":") or (not port[1:].isdigit() and port != ":")):
            raise fail(f"invalid port {_quote(port)} after host")
        return
    i = host.rfind(":")
    if i >= 0:
        port = host[i:]
        if port != ":" and not port[1:].isdigit():
            raise fail(f"invalid port {_quote(port)} after host")


def url_value(text: str) -> dict[str, str]:
    """The CEL carrier of ``url(text)`` (raises ValueError)."""
    _parse_url(text)
    return {URL_KEY: text}


def _is_url(text: str) -> bool:
    try:
        _parse_url(text)
    except ValueError:
        return False
    return True


def _url_of(value: Any, function: str) -> urllib.parse.SplitResult:
    return _parse_url(_need(value, URL_KEY, function))


def _get_scheme(u: Any) -> str:
    return _url_of(u, "getScheme").scheme.lower()


def _get_host(u: Any) -> str:
    return _url_of(u, "getHost").netloc.rpartition("@")[2]


def _get_hostname(u: Any) -> str:
    host = _get_host(u)
    if host.startswith("["):
        return host[1 : host.find("]")]
    return host.rpartition(":")[0] if ":" in host else host


def _get_port(u: Any) -> str:
    host = _get_host(u)
    if host.startswith("["):
        tail = host[host.find("]") + 1 :]
        return tail[1:] if tail.startswith(":") else ""
    return host.rpartition(":")[2] if ":" in host else ""


def _get_escaped_path(u: Any) -> str:
    path = _url_of(u, "getEscapedPath").path
    return urllib.parse.quote(urllib.parse.unquote(path), safe=_PATH_SAFE)


def _get_query(u: Any) -> dict[str, list[str]]:
    query = _url_of(u, "getQuery").query
    return urllib.parse.parse_qs(query, keep_blank_values=True)


def net_to_string(value: Any) -> str:
    """``string(ip)`` / ``string(cidr)``: the canonical address, ``addr/bits``."""
    if isinstance(value, dict) and len(value) == 1:
        for key in (IP_KEY, CIDR_KEY):
            if key in value:
                return str(value[key])
    raise TypeError("no such overload: string")


FUNCTIONS: dict[str, Any] = {
    "ip": ip_value,
    "isIP": _is_ip,
    "ip.isCanonical": _is_canonical,
    "family": _family,
    "isUnspecified": _is_unspecified,
    "isLoopback": _is_loopback,
    "isLinkLocalMulticast": _is_link_local_multicast,
    "isLinkLocalUnicast": _is_link_local_unicast,
    "isGlobalUnicast": _is_global_unicast,
    "cidr": cidr_value,
    "isCIDR": _is_cidr,
    "containsIP": _contains_ip,
    "containsCIDR": _contains_cidr,
    "cidr.ip": _cidr_ip,
    "masked": _masked,
    "prefixLength": _prefix_length,
    "url": url_value,
    "isURL": _is_url,
    "getScheme": _get_scheme,
    "getHost": _get_host,
    "getHostname": _get_hostname,
    "getPort": _get_port,
    "getEscapedPath": _get_escaped_path,
    "getQuery": _get_query,
}
"""Implementations by CEL function name (``cidr.ip`` is the member ``ip()`` of a CIDR)."""
