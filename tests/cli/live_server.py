"""A Kubernetes API server stand-in for tests (a helper module, not tests): it serves recorded
answers of a 1.34 API server on 127.0.0.1, GET only, and is started and stopped by the test
that uses it.

What it serves (tests/cli/data/live/recorded.json): the aggregated discovery documents of
``/api`` and ``/apis`` (``apidiscovery.k8s.io/v2``, what a 1.34 server answers when asked for
them; anything else gets 406 there, so a client that cannot read them fails loudly), and for
each list endpoint the recorded objects, cut into pages of `PAGE` objects with
``metadata.continue`` tokens (an API server may return fewer objects than ``limit``), with the
namespace path (``/namespaces/NS/``) and equality-based ``labelSelector`` applied as the API
server applies them. A recorded Status answers the lists RBAC forbids (403). Requests without
the recorded bearer token get the 401 Status a server gives. Every request is logged
(`RecordedServer.requests`) so tests can check that only GETs were made.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

RECORDED = Path(__file__).parent / "data" / "live" / "recorded.json"
TOKEN = "sha256~k8s-reader-token-do-not-print-9f86d081884c7d65"
PAGE = 4
_AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


class RecordedServer:
    """The recorded cluster, served; ``data`` may be changed before requests arrive.

    Attributes:
        data: the recording (discovery, lists, forbidden).
        requests: ``(method, path with query)`` of every request, in order.
        url: ``http://127.0.0.1:PORT``.
    """

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.requests: list[tuple[str, str]] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def answer(self, method: str, target: str, headers: Mapping[str, str]) -> tuple[int, Any]:
        """The status and JSON body for one request."""
        self.requests.append((method, target))
        if method != "GET":
            return 405, _status(405, "MethodNotAllowed", "the recording is read-only")
        if headers.get("Authorization") != f"Bearer {TOKEN}":
            return 401, _status(401, "Unauthorized", "Unauthorized")
        parts = urlsplit(target)
        path, query = parts.path, parse_qs(parts.query)
        discovery = self.data["discovery"]
        if path in discovery:
            if _AGGREGATED not in headers.get("Accept", ""):
                return 406, _status(406, "NotAcceptable", "only the aggregated document")
            return 200, discovery[path]
        found = self._list_key(path)
        if found is None:
            return 404, _status(404, "NotFound", "the server could not find the requested resource")
        key, namespace = found
        if key in self.data["forbidden"]:
            return 403, self.data["forbidden"][key]
        items = self.data["lists"].get(key)
        if items is None:
            return 404, _status(404, "NotFound", "the server could not find the requested resource")
        if namespace:
            items = [o for o in items if o["metadata"].get("namespace") == namespace]
        selector = query.get("labelSelector", [""])[0]
        if selector:
            wanted = dict(term.split("=", 1) for term in selector.split(","))
            items = [
                o
                for o in items
                if all((o["metadata"].get("labels") or {}).get(k) == v for k, v in wanted.items())
            ]
        start = int(query.get("continue", ["0"])[0] or 0)
        limit = int(query.get("limit", ["0"])[0] or 0) or len(items)
        size = min(PAGE, limit)
        page = items[start : start + size]
        meta: dict[str, Any] = {"resourceVersion": self.data["resourceVersion"]}
        if start + size < len(items):
            meta["continue"] = str(start + size)
        group_version = key.split(" ")[0]
        body = {
            "kind": _list_kind(self.data, key),
            "apiVersion": group_version,
            "metadata": meta,
            "items": copy.deepcopy(page),
        }
        return 200, body

    @staticmethod
    def _list_key(path: str) -> tuple[str, str] | None:
        """``"GROUP/VERSION RESOURCE"`` (``"v1 pods"``) and the namespace of a list path."""
        bits = path.strip("/").split("/")
        if bits[:1] == ["api"] and len(bits) >= 3:
            gv, rest = bits[1], bits[2:]
        elif bits[:1] == ["apis"] and len(bits) >= 4:
            gv, rest = f"{bits[1]}/{bits[2]}", bits[3:]
        else:
            return None
        namespace = ""
        if len(rest) == 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if len(rest) != 1:
            return None
        return f"{gv} {rest[0]}", namespace

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._reply()

            def do_POST(self) -> None:
                self._reply()

            def do_PUT(self) -> None:
                self._reply()

            def do_DELETE(self) -> None:
                self._reply()

            def _reply(self) -> None:
                code, body = server.answer(self.command, self.path, self.headers)
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the test reads `requests`

        return Handler


def _list_kind(data: Mapping[str, Any], key: str) -> str:
    group_version, resource = key.split(" ")
    group = group_version.rpartition("/")[0] if "/" in group_version else ""
    doc = data["discovery"]["/apis" if group else "/api"]
    for item in doc["items"]:
        if (item["metadata"].get("name") or "") != group:
            continue
        for version in item["versions"]:
            for r in version["resources"]:
                if r["resource"] == resource:
                    return f"{r['responseKind']['kind']}List"
    return "List"


def recorded() -> dict[str, Any]:
    """A fresh copy of the recording."""
    data: dict[str, Any] = json.loads(RECORDED.read_text())
    return data


@contextmanager
def serving(data: dict[str, Any] | None = None) -> Iterator[RecordedServer]:
    """Start a `RecordedServer` on 127.0.0.1 (the recording, or ``data``); stop it after."""
    server = RecordedServer(recorded() if data is None else data)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def kubeconfig(path: Path, server: str, context: str = "kind-kind") -> Path:
    """Write a kubeconfig for ``server`` with the recorded token; returns its path."""
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "kind", "cluster": {"server": server}}],
                "users": [{"name": "reader", "user": {"token": TOKEN}}],
                "contexts": [
                    {"name": context, "context": {"cluster": "kind", "user": "reader"}},
                    {"name": "other", "context": {"cluster": "kind", "user": "reader"}},
                ],
                "current-context": context,
            }
        )
    )
    return path
