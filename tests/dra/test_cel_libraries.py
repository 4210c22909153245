"""The libraries of Kubernetes 1.34's CEL base environment, in DRA selectors.

apiserver/pkg/cel/environment/base.go enables, at the 1.34 compatibility version: URLs,
Regex, Lists (1.0), Quantity and optional types (1.28), strings v2 and sets (1.29), IP and
CIDR (1.30), Format (1.31), two-variable comprehensions (1.32), Semver (1.33); DRA adds
``cel.bind``. Each case is from Kubernetes' own library tests or documented examples
(apiserver/pkg/cel/library ``ip_test.go``, ``cidr_test.go``, ``urls.go``, ``lists.go``,
``format.go``) or cel-go's extension docs (``ext/sets.go``, ``ext/comprehensions.go``),
written as ``<expression> == <expected>`` so that a selector evaluates it; runtime errors
carry the library's message.
"""

from __future__ import annotations

import pytest

from schedsim.api.resource import Device, DeviceAttribute
from schedsim.dra.cel import CelCache, CelCompileError, CelRuntimeError

DEVICE = Device(
    name="dev",
    attributes={
        "ip": DeviceAttribute("string", "10.1.2.3"),
        "subnet": DeviceAttribute("string", "10.0.0.0/8"),
        "endpoint": DeviceAttribute("string", "https://example.com:8443/metrics?k=a&k=b"),
    },
)
DRIVER = "dra.example.com"

TRUE_CASES = [
    # ip_test.go TestIP
    'isIP("192.168.0.1")',
    '!isIP("192.168.0.1.0")',
    'ip.isCanonical("127.0.0.1")',
    'ip("192.168.0.1").family() == 4',
    'ip("0.0.0.0").isUnspecified()',
    '!ip("127.0.0.1").isUnspecified()',
    'ip("127.0.0.1").isLoopback()',
    '!ip("1.2.3.4").isLoopback()',
    'ip("224.0.0.1").isLinkLocalMulticast()',
    '!ip("224.0.1.1").isLinkLocalMulticast()',
    'ip("169.254.169.254").isLinkLocalUnicast()',
    '!ip("192.168.0.1").isLinkLocalUnicast()',
    'ip("192.168.0.1").isGlobalUnicast()',
    '!ip("255.255.255.255").isGlobalUnicast()',
    'isIP("2001:db8::68")',
    '!isIP("2001:db8:::68")',
    'ip.isCanonical("2001:db8::68")',
    '!ip.isCanonical("2001:DB8::68")',
    'ip("2001:db8::68").family() == 6',
    'ip("::").isUnspecified()',
    '!ip("::1").isUnspecified()',
    'ip("::1").isLoopback()',
    '!ip("2001:db8::abcd").isLoopback()',
    'ip("ff02::1").isLinkLocalMulticast()',
    '!ip("fd00::1").isLinkLocalMulticast()',
    'ip("fe80::1").isLinkLocalUnicast()',
    '!ip("fd80::1").isLinkLocalUnicast()',
    'ip("2001:db8::abcd").isGlobalUnicast()',
    '!ip("ff00::1").isGlobalUnicast()',
    'string(ip("192.168.0.1")) == "192.168.0.1"',
    'ip("2001:db8::68") == ip("2001:DB8:0::68")',  # netip.Addr equality
    # cidr_test.go TestCIDR
    'cidr("192.168.0.0/24").containsIP(ip("192.168.0.1"))',
    '!cidr("192.168.0.0/24").containsIP(ip("192.168.1.1"))',
    'cidr("192.168.0.0/24").containsIP("192.168.0.1")',
    '!cidr("192.168.0.0/24").containsIP("192.168.1.1")',
    'cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/25"))',
    '!cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/23"))',
    'cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")',
    '!cidr("192.168.0.0/24").containsCIDR("192.168.0.0/23")',
    'cidr("192.168.0.0/24").ip() == ip("192.168.0.0")',
    'cidr("192.168.0.0/24").masked() == cidr("192.168.0.0/24")',
    'cidr("192.168.0.1/24").masked() == cidr("192.168.0.0/24")',
    'cidr("192.168.0.0/24").prefixLength() == 24',
    'cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))',
    '!cidr("2001:db8::/32").containsIP(ip("2001:dc8::1"))',
    'cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/33"))',
    '!cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/31"))',
    'cidr("2001:db8::/32").ip() == ip("2001:db8::")',
    'cidr("2001:db8:1::/32").masked() == cidr("2001:db8::/32")',
    'cidr("2001:db8::/32").prefixLength() == 32',
    'string(cidr("192.168.0.0/24")) == "192.168.0.0/24"',
    'isCIDR("10.0.0.0/8") && !isCIDR("10.0.0.0/33")',
    # urls.go documented examples
    'isURL("https://user:pass@example.com:80/path?query=val#fragment")',
    'isURL("/absolute-path")',
    '!isURL("https://a:b:c/")',
    '!isURL("../relative-path")',
    'url("/path").getScheme() == ""',
    'url("https://example.com/").getScheme() == "https"',
    'url("https://example.com:80/").getHost() == "example.com:80"',
    'url("https://example.com/").getHost() == "example.com"',
    'url("https://[::1]:80/").getHost() == "[::1]:80"',
    'url("https://[::1]/").getHost() == "[::1]"',
    'url("/path").getHost() == ""',
    'url("https://example.com:80/").getHostname() == "example.com"',
    'url("https://127.0.0.1:80/").getHostname() == "127.0.0.1"',
    'url("https://[::1]:80/").getHostname() == "::1"',
    'url("/path").getHostname() == ""',
    'url("https://example.com:80/").getPort() == "80"',
    'url("https://example.com/").getPort() == ""',
    'url("/path").getPort() == ""',
    'url("https://example.com/path").getEscapedPath() == "/path"',
    'url("https://example.com/path with spaces/").getEscapedPath() == "/path%20with%20spaces/"',
    'url("https://example.com").getEscapedPath() == ""',
    'url("https://example.com/path?k1=a&k2=b&k2=c").getQuery() == {"k1": ["a"], "k2": ["b", "c"]}',
    'url("https://example.com/path?key with spaces=value with spaces").getQuery() == '
    '{"key with spaces": ["value with spaces"]}',
    'url("https://example.com/path?").getQuery() == {}',
    'url("https://example.com/path").getQuery() == {}',
    # lists.go documented examples (indexOf, lastIndexOf with the strings extension loaded)
    "[1, 2, 2, 3].indexOf(2) == 1",
    '["a", "b", "b", "c"].lastIndexOf("b") == 2',
    "[1.0].indexOf(1.1) == -1",
    "[].indexOf(1) == -1",
    '"abcb".indexOf("b") == 1 && "abcb".lastIndexOf("b") == 3',
    "[1, 2, 3].isSorted() && [1, 2, 3].sum() == 6 && [1, 2].min() == 1 && [1, 2].max() == 2",
    # cel-go ext/sets.go documented examples
    "sets.contains([], [])",
    "sets.contains([1, 2, 3, 4], [2, 3])",
    "sets.contains([1, 2.0, 3u], [1.0, 2u, 3])",
    "!sets.contains([1, 2], [2, 3])",
    "sets.equivalent([], [])",
    "sets.equivalent([1], [1, 1])",
    "sets.equivalent([1], [1u, 1.0])",
    "sets.equivalent([1, 2, 3], [3u, 2.0, 1])",
    "!sets.equivalent([2, 1], [2, 3])",
    "sets.intersects([1], [1])",
    "sets.intersects([1], [1, 1])",
    "sets.intersects([[1], [2, 3]], [[1, 2], [2, 3.0]])",
    "!sets.intersects([1], [])",
    # cel-go ext/comprehensions.go (two-variable comprehensions) documented examples
    "[1, 2, 3].all(i, v, i < v)",
    '{"hello": "world", "taco": "taco"}.all(k, v, k != v) == false',
    "[1, 2, 3].exists(i, v, i > 1 && v > 1)",
    '{"greeting": "hello"}.exists(k, v, k.startsWith("g") && v.endsWith("o"))',
    "[1, 2, 1].existsOne(i, v, i == 1 || v == 1) == false",
    "[1, 2, 3].transformList(indexVar, valueVar, indexVar * valueVar) == [0, 2, 6]",
    "[1, 2, 3].transformList(i, v, i % 2 == 0, v * 2) == [2, 6]",
    # format.go (strings extension format, enabled in 1.31)
    '"%d %s %.2f".format([1, "x", 2.5]) == "1 x 2.50"',
    # the device's own values through the libraries
    'cidr(device.attributes["dra.example.com"].subnet).containsIP(device.attributes["dra.example.com"].ip)',
    'url(device.attributes["dra.example.com"].endpoint).getPort() == "8443"',
    'url(device.attributes["dra.example.com"].endpoint).getQuery()["k"] == ["a", "b"]',
    'sets.contains(["dra.example.com", "other"], [device.driver])',
    'device.attributes["dra.example.com"].exists(k, v, k == "ip" && isIP(v))',
]


@pytest.mark.parametrize("expression", TRUE_CASES)
def test_library_case(expression: str) -> None:
    assert CelCache().matches(expression, DRIVER, DEVICE) is True


RUNTIME_ERRORS = [
    # ip_test.go and cidr_test.go, the messages as given there
    ('ip("192.168.0.1.0") == ip("1.2.3.4")',
     'IP Address "192.168.0.1.0" parse error during conversion from string: '
     'ParseAddr("192.168.0.1.0"): IPv4 address too long'),
    ('ip.isCanonical("127.0.0.1.0")',
     'IP Address "127.0.0.1.0" parse error during conversion from string: '
     'ParseAddr("127.0.0.1.0"): IPv4 address too long'),
    ('ip("2001:db8:::68").family() == 6',
     'IP Address "2001:db8:::68" parse error during conversion from string: '
     'ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit '
     '(at ":68")'),
    ('cidr("192.168.0.0/").prefixLength() == 0',
     "network address parse error during conversion from string: network address parse "
     'error during conversion from string: netip.ParsePrefix("192.168.0.0/"): bad bits after '
     'slash: ""'),
    ('cidr("2001:db8::/").prefixLength() == 0',
     "network address parse error during conversion from string: network address parse "
     'error during conversion from string: netip.ParsePrefix("2001:db8::/"): bad bits after '
     'slash: ""'),
    # ip.go parseIPAddr: zones and IPv4-mapped IPv6 addresses are refused
    ('ip("fe80::1%eth0").family() == 6',
     'IP address "fe80::1%eth0" with zone value is not allowed'),
    ('ip("::ffff:1.2.3.4").family() == 6',
     'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'),
    ('url("../relative-path").getPath() == ""', None),  # getPath does not exist: compile error
    ('url("https://a:b:c/").getHost() == ""',
     'URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":c" '
     "after host"),
    # cel-go: int overflow is an error, not a wider number
    ("[9223372036854775807, 1].sum() > 0", "integer overflow"),
    # quantity.go asInteger: "cannot convert value to integer" beyond int64
    ('quantity("10E").asInteger() > 0', "cannot convert value to integer"),
]  # fmt: skip


@pytest.mark.parametrize(("expression", "message"), RUNTIME_ERRORS)
def test_library_error(expression: str, message: str | None) -> None:
    if message is None:
        with pytest.raises(CelCompileError, match="undeclared reference to 'getPath'"):
            CelCache().matches(expression, DRIVER, DEVICE)
        return
    with pytest.raises(CelRuntimeError) as info:
        CelCache().matches(expression, DRIVER, DEVICE)
    assert str(info.value) == message


def test_errors_are_absorbed_like_cel_go() -> None:
    """A library error is a CEL error value: ``||`` with a true side absorbs it."""
    assert CelCache().matches('ip("x").family() == 4 || true', DRIVER, DEVICE) is True


# cel-go ext/comprehensions_test.go, TestTwoVarComprehensions: the transformMap and
# transformMapEntry rows (Kubernetes 1.34's base environment enables TwoVarComprehensions
# from 1.32 on); each evaluates to true. Three rows call functions that environment lacks
# (strings version 3's reverse, cel-go's ext.Lists flatten/sort): there upperAscii and a
# membership test stand in, the comprehension under test unchanged.
TRANSFORM_MAP_ROWS = [
    "['Hello', 'world'].transformMap(i, v, [v.lowerAscii()]) == {0: ['hello'], 1: ['world']}",
    "['world', 'Hello'].transformMap(i, v, [v.lowerAscii()])"
    "  .transformList(k, v, v).all(l, l == ['hello'] || l == ['world'])",
    "[1, 2, 3].transformMap(indexVar, valueVar, (indexVar * valueVar) + valueVar)"
    " == {0: 1, 1: 4, 2: 9}",
    "[1, 2, 3].transformMap(indexVar, valueVar, indexVar % 2 == 0,"
    " (indexVar * valueVar) + valueVar) == {0: 1, 2: 9}",
    '"key1:value1 key2:value2 key3:value3".split(" ").transformMapEntry(i, v,'
    ' cel.bind(entry, v.split(":"), entry.size() == 2 ? {entry[0]: entry[1]} : {}))'
    " == {'key1': 'value1', 'key2': 'value2', 'key3': 'value3'}",
    '"key1:value1:extra key2:value2 key3".split(" ").transformMapEntry(i, v,'
    ' cel.bind(entry, v.split(":"), {?entry[0]: entry[?1]}))'
    " == {'key1': 'value1', 'key2': 'value2'}",
    "{'hello': 'world', 'goodbye': 'cruel world'}.transformMap(k, v, \"%s, %s!\".format([k, v]))"
    " == {'hello': 'hello, world!', 'goodbye': 'goodbye, cruel world!'}",
    "{'hello': 'world', 'goodbye': 'cruel world'}.transformMap(k, v, v.startsWith('world'),"
    " \"%s, %s!\".format([k, v])) == {'hello': 'hello, world!'}",
    "{'hello': 'world', 'greetings': 'tacocat'}.transformMapEntry(k, v,"
    " {k.upperAscii(): v.upperAscii()}) == {'HELLO': 'WORLD', 'GREETINGS': 'TACOCAT'}",
    "{'hello': 'world', 'greetings': 'tacocat'}.transformMapEntry(k, v, v == 'tacocat',"
    " {k.upperAscii(): v.upperAscii()}) == {'GREETINGS': 'TACOCAT'}",
    "{'hello': 'world', 'greetings': 'tacocat'}.transformMapEntry(k, v, {}) == {}",
]


@pytest.mark.parametrize("expression", TRANSFORM_MAP_ROWS)
def test_transform_map_rows_of_cel_go(expression: str) -> None:
    """cel-expr-python 0.1.3 has no runtime ``cel.@mapInsert``; the selector is rewritten
    onto ``transformList`` and evaluates as in cel-go (the row's expression is true)."""
    assert CelCache().matches(expression, DRIVER, DEVICE) is True


@pytest.mark.parametrize(
    ("expression", "message"),
    [  # cel-go TestTwoVarComprehensionsRuntimeErrors
        (
            "[1, 1].transformMapEntry(i, v, {v: i}).size() == 1",
            "insert failed: key 1 already exists",
        ),
        (
            "[0, 0u].transformMapEntry(i, v, {v: i}).size() == 1",
            "insert failed: key 0 already exists",
        ),
    ],
)
def test_transform_map_entry_repeated_key_is_a_runtime_error(expression: str, message: str) -> None:
    with pytest.raises(CelRuntimeError) as info:
        CelCache().matches(expression, DRIVER, DEVICE)
    assert message in str(info.value)


@pytest.mark.parametrize(
    "expression",
    [  # cel-go TestTwoVarComprehensionsStaticErrors (the transformMap* rows)
        "{}.transformMap(i.j, k, i.j + k).size() == 0",
        "{}.transformMap(j, i.k, j + i.k).size() == 0",
        "{}.transformMapEntry(j, i.k, {j: i.k}).size() == 0",
        "{}.transformMapEntry(i.j, k, {k: i.j}).size() == 0",
        "{}.transformMapEntry(j, k, 'bad filter', {k: j}).size() == 0",
        "{'hello': 'world', 'greetings': 'tacocat'}.transformMapEntry(k, v, []) == {}",
    ],
)
def test_transform_map_static_errors_are_refused(expression: str) -> None:
    compiled = CelCache().compile(expression)
    assert compiled.error is not None
    assert compiled.error.startswith("compilation failed: ")


def test_transform_map_on_device_attributes_and_nested() -> None:
    """The rewrite keeps the receiver whole (a member chain with a domain lookup) and nests."""
    cache = CelCache()
    assert cache.matches(
        'device.attributes["dra.example.com"].transformMap(k, v, true).size() >= 0',
        DRIVER,
        DEVICE,
    )
    assert cache.matches(
        "{'a': {'x': 1}}.transformMap(k, v, v.transformMap(k2, v2, v2 + 1)) == {'a': {'x': 2}}",
        DRIVER,
        DEVICE,
    )


def test_the_rewrite_helpers_cannot_be_called_directly() -> None:
    compiled = CelCache().compile("__schedsim_map_of_pairs__([]).size() == 0")
    assert compiled.error is not None
    assert "undeclared reference to '__schedsim_map_of_pairs__'" in compiled.error


def test_library_calls_have_a_bounded_cost() -> None:
    """Every library call is estimated (no 'too complex' refusal for ordinary use)."""
    cache = CelCache()
    for expression in TRUE_CASES:
        compiled = cache.compile(expression)
        assert compiled.error is None, expression
        assert compiled.cost < 10_000, expression
