"""Read a live cluster, read-only, through the official ``kubernetes`` Python client.

What `read_cluster` does, as ``kubectl get KINDS -A -o json`` would:

1. Loads the kubeconfig (``kubernetes.config.load_kube_config``: the file, its current
   context or ``context``; exec/auth-provider plugins as the client supports them) into a
   client ``Configuration`` of its own (the process-wide default is never touched, and the
   kubeconfig is never written back: ``persist_config=False``).
2. Reads discovery (``/api`` and ``/apis``; the 1.34 aggregated document,
   ``apidiscovery.k8s.io/v2`` ``APIGroupDiscoveryList``, when the server gives it, else the
   legacy ``APIVersions``/``APIGroupList``) to learn which of `LIVE_KINDS` the server serves,
   and at which version: the first of a kind's versions (schedsim's order of preference) that
   the server serves. A kind the server does not serve (``resource.k8s.io`` on a cluster
   older than DRA) is a warning, not an error.
3. Lists every served kind with ``GET`` only: cluster-wide, or in one namespace for
   namespaced kinds; ``labelSelector`` when given (nodes and the other cluster-scoped kinds are
   read whole: the selector picks workloads, not the cluster they run on); pages of
   `PAGE_SIZE` objects following ``metadata.continue``, as kubectl's chunked lists do. A list
   the server refuses (403 Forbidden, 404) is a warning naming the kind and the server's
   message; schedsim runs with what it could read.
4. Returns the objects as one ``v1`` ``List`` document (each item with the ``apiVersion`` and
   ``kind`` the server leaves out of list items), in `LIVE_KINDS` order then server order:
   the same cluster read twice gives the same document.

Credentials are never printed or written: errors name the kubeconfig file, the context and
the server URL, and carry the server's Status message, never request headers; the List holds
the objects only. Nothing is ever created, changed or deleted.

The ``kubernetes`` package is imported inside `read_cluster`, so commands that read files do
not pay for importing it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from schedsim.api.errors import ManifestError

__all__ = ["LIVE_KINDS", "PAGE_SIZE", "LiveKind", "LiveRead", "read_cluster"]

PAGE_SIZE: Final = 500
"""Objects per list request (kubectl's ``--chunk-size`` default)."""

TIMEOUT_SECONDS: Final = 30.0
"""Connect and read timeout of each request."""


@attrs.frozen
class LiveKind:
    """One kind schedsim reads from a cluster.

    Attributes:
        group: the API group (``""`` for the core group).
        versions: the versions schedsim reads, preferred first.
        resource: the plural resource name (``pods``).
        kind: the object kind (``Pod``).
        namespaced: whether objects live in namespaces.
        selected: whether ``--selector`` applies (workloads and their objects; not the
            nodes, classes and drivers that make the cluster).
    """

    group: str
    versions: tuple[str, ...]
    resource: str
    kind: str
    namespaced: bool
    selected: bool = True


def _k(group: str, versions: str, resource: str, kind: str, ns: bool, sel: bool) -> LiveKind:
    return LiveKind(group, tuple(versions.split()), resource, kind, ns, sel)


LIVE_KINDS: Final = (
    _k("", "v1", "nodes", "Node", False, False),
    _k("", "v1", "namespaces", "Namespace", False, False),
    _k("", "v1", "pods", "Pod", True, True),
    _k("", "v1", "services", "Service", True, True),
    _k("", "v1", "replicationcontrollers", "ReplicationController", True, True),
    _k("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, True),
    _k("", "v1", "persistentvolumes", "PersistentVolume", False, False),
    _k("", "v1", "limitranges", "LimitRange", True, False),
    _k("apps", "v1", "deployments", "Deployment", True, True),
    _k("apps", "v1", "replicasets", "ReplicaSet", True, True),
    _k("apps", "v1", "statefulsets", "StatefulSet", True, True),
    _k("apps", "v1", "daemonsets", "DaemonSet", True, True),
    _k("batch", "v1", "jobs", "Job", True, True),
    _k("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, True),
    _k("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, False),
    _k("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", False, False),
    _k("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, False),
    _k("storage.k8s.io", "v1", "csinodes", "CSINode", False, False),
    _k("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False, False),
    _k("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True, False),
    _k("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False, False),
    _k("resource.k8s.io", "v1 v1beta2 v1beta1", "deviceclasses", "DeviceClass", False, False),
    _k("resource.k8s.io", "v1 v1beta2 v1beta1", "resourceclaims", "ResourceClaim", True, True),
    _k(
        "resource.k8s.io",
        "v1 v1beta2 v1beta1",
        "resourceclaimtemplates",
        "ResourceClaimTemplate",
        True,
        True,
    ),
    _k("resource.k8s.io", "v1 v1beta2 v1beta1", "resourceslices", "ResourceSlice", False, False),
)
"""Every kind schedsim reads (the kinds `schedsim.api.loading.manifests.KINDS` decodes)."""

_AGGREGATED: Final = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


@attrs.frozen
class LiveRead:
    """What `read_cluster` read.

    Attributes:
        document: one ``v1`` ``List`` of every object read (JSON-ready).
        warnings: one line per kind not read (not served, forbidden), naming it.
        source: how messages name the cluster: ``<cluster CONTEXT at SERVER>``.
        counts: kind -> objects read, in `LIVE_KINDS` order (kinds read, even if empty).
    """

    document: Mapping[str, Any]
    warnings: tuple[str, ...]
    source: str
    counts: Mapping[str, int]

    def to_text(self, as_json: bool = True) -> str:
        """The List as text: JSON (2-space indent, keys as read), or YAML when
        ``as_json`` is false (block style, kubectl's look). Same read, same text."""
        if as_json:
            return json.dumps(self.document, indent=2, ensure_ascii=False) + "\n"
        import yaml  # PyYAML is a dependency already; only --save FILE.yaml needs it here

        dumped: str = yaml.safe_dump(
            self.document, sort_keys=False, allow_unicode=True, default_flow_style=False
        )
        return dumped


def _check_kubeconfig_file(kubeconfig: str) -> None:
    """Refuse a kubeconfig path that is not a kubeconfig file, saying what it is instead:
    no such file, a directory, not UTF-8 text, empty, not valid YAML, not a mapping (a
    kubeconfig is a ``kind: Config`` mapping), or not a regular file (a device, a FIFO:
    the client library reads the file again by its path).

    Raises:
        ManifestError: ``kubeconfig FILE: problem``.
    """
    import yaml

    from schedsim.api.loading.loader import read_text_stream

    where = f"kubeconfig {kubeconfig}"
    if not os.path.exists(kubeconfig):
        raise ManifestError(f"{where}: no such file")
    if os.path.isdir(kubeconfig):
        raise ManifestError(f"{where}: is a directory (give the kubeconfig file)")
    try:
        with open(kubeconfig, "rb") as fh:
            text = read_text_stream(fh, where)
    except OSError as e:
        raise ManifestError(f"{where}: cannot read: {e.strerror or e}") from None
    hint = "(kubectl config view --raw writes one)"
    try:
        doc = yaml.safe_load(text) if text.strip() else None
    except yaml.YAMLError:
        raise ManifestError(f"{where}: not valid YAML") from None
    if doc is None:  # nothing, or comments only
        raise ManifestError(f"{where}: empty: not a kubeconfig {hint}")
    if not isinstance(doc, Mapping):
        kinds = {list: "a list", str: "a string", bool: "a boolean", int: "a number"}
        got = kinds.get(type(doc), "a number" if isinstance(doc, float) else "a scalar")
        raise ManifestError(
            f"{where}: not a kubeconfig: expected a mapping (kind: Config, with clusters, "
            f"contexts and users), got {got} {hint}"
        )
    if not os.path.isfile(kubeconfig):
        raise ManifestError(f"{where}: not a regular file: give the kubeconfig as a file")


def read_cluster(
    kubeconfig: str,
    *,
    context: str | None = None,
    namespace: str | None = None,
    selector: str | None = None,
) -> LiveRead:
    """Read the objects schedsim uses from the cluster a kubeconfig names (GET only).

    Args:
        kubeconfig: the kubeconfig file.
        context: the context to use; None: the file's current context.
        namespace: read namespaced kinds in this namespace only; None: every namespace.
        selector: a label selector (``app=web,tier!=db``) for the namespaced workload kinds
            (`LiveKind.selected`), passed to the server as ``labelSelector``.

    Returns:
        the objects as one List, with the warnings (kinds not read).

    Raises:
        ManifestError: ``kubeconfig FILE: problem`` (missing, malformed, no such context);
            ``<cluster CONTEXT at SERVER>: problem`` when the server cannot be reached, does
            not authenticate us (401), refuses discovery, or answers with something that is
            not a Kubernetes list. Never with a traceback or a credential.
    """
    import yaml
    from kubernetes import client as k8s_client  # lazy: only live reads pay for it
    from kubernetes import config as k8s_config

    _check_kubeconfig_file(kubeconfig)
    configuration = k8s_client.Configuration()
    try:
        contexts, active = k8s_config.list_kube_config_contexts(  # type: ignore[no-untyped-call]
            config_file=kubeconfig
        )
        chosen = context or (active or {}).get("name")
        if context is not None and context not in {c.get("name") for c in contexts or ()}:
            names = ", ".join(sorted(str(c.get("name")) for c in contexts or ()))
            raise ManifestError(
                f"kubeconfig {kubeconfig}: no context {context!r} (contexts: {names or 'none'})"
            )
        k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=kubeconfig,
            context=context,
            client_configuration=configuration,
            persist_config=False,
        )
    except ManifestError:
        raise
    except yaml.YAMLError:
        raise ManifestError(f"kubeconfig {kubeconfig}: not valid YAML") from None
    except (OSError, k8s_config.ConfigException, ValueError, TypeError, KeyError) as e:
        raise ManifestError(f"kubeconfig {kubeconfig}: {_config_problem(e)}") from None
    configuration.retries = 0  # a down server is reported at once, not after retries
    source = f"<cluster {chosen} at {configuration.host}>"
    with k8s_client.ApiClient(configuration) as api:
        reader = _Reader(api, source)
        served = reader.discover()
        items: list[dict[str, Any]] = []
        warnings: list[str] = []
        counts: dict[str, int] = {}
        missing: dict[str, list[str]] = {}  # group -> kinds, when no version is served
        for kind in LIVE_KINDS:
            version = next((v for v in kind.versions if (kind.group, v) in served), None)
            if version is None:
                missing.setdefault(kind.group, []).append(kind.kind)
                continue
            if kind.resource not in served[(kind.group, version)]:
                warnings.append(
                    f"{source}: {kind.kind} not read: the server does not serve "
                    f"{_group_version(kind.group, version)} {kind.resource}"
                )
                continue
            got = reader.list(kind, version, namespace, selector)
            if isinstance(got, str):
                warnings.append(got)
                continue
            counts[kind.kind] = len(got)
            items.extend(got)
    for group, kinds in missing.items():
        versions = next(k.versions for k in LIVE_KINDS if k.group == group)
        warnings.append(
            f"{source}: the server does not serve {group or 'the core group'} "
            f"({', '.join(versions)}): {', '.join(kinds)} not read"
        )
    document = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}}
    document["items"] = items  # type: ignore[assignment]
    return LiveRead(document, tuple(warnings), source, counts)


def _group_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


def _config_problem(e: Exception) -> str:
    """The kubeconfig loader's complaint in one line (never the file's content)."""
    if isinstance(e, FileNotFoundError):
        return "no such file"
    if isinstance(e, OSError):
        return f"cannot read: {e.strerror or e}"
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 200 else text[:197] + "..."


class _Reader:
    """GET requests through one ApiClient, with errors turned into messages."""

    def __init__(self, api: Any, source: str) -> None:
        self.api = api
        self.source = source

    def get(self, path: str, query: Sequence[tuple[str, str]] = (), accept: str = "") -> Any:
        """The decoded JSON body of ``GET path``.

        Returns:
            the body, or the ``(status, message)`` of a 4xx/5xx answer.

        Raises:
            ManifestError: the server cannot be reached or the body is not JSON.
        """
        import urllib3
        from kubernetes.client.exceptions import ApiException

        headers = {"Accept": accept or "application/json"}
        try:
            method, url, headers, _, _ = self.api.param_serialize(
                "GET",
                path,
                query_params=list(query),
                header_params=headers,
                auth_settings=["BearerToken"],
            )
            response = self.api.call_api(
                method, url, header_params=headers, _request_timeout=TIMEOUT_SECONDS
            )
            response.read()
        except ApiException as e:
            return e.status or 0, _status_message(e.body, e.reason)
        except urllib3.exceptions.HTTPError as e:
            raise ManifestError(f"{self.source}: cannot reach the server: {_reach(e)}") from None
        status = response.status
        if status >= 400:
            return status, _status_message(response.data, response.reason)
        try:
            return json.loads(response.data)
        except (ValueError, UnicodeDecodeError):
            raise ManifestError(f"{self.source}: {path}: the answer is not JSON") from None

    def discover(self) -> dict[tuple[str, str], frozenset[str]]:
        """(group, version) -> the resources served there, from ``/api`` and ``/apis``."""
        served: dict[tuple[str, str], frozenset[str]] = {}
        for path in ("/api", "/apis"):
            body = self.get(path, accept=f"{_AGGREGATED},application/json")
            if isinstance(body, tuple):
                status, message = body
                hint = ""
                if status == 401:
                    hint = ": the server did not accept the kubeconfig's credentials"
                raise ManifestError(f"{self.source}: discovery {path}: {status} {message}{hint}")
            if not isinstance(body, Mapping):
                raise ManifestError(f"{self.source}: discovery {path}: not a discovery document")
            if body.get("kind") == "APIGroupDiscoveryList":
                served.update(_aggregated(body))
            else:
                served.update(self._legacy(path, body))
        return served

    def _legacy(self, path: str, body: Mapping[str, Any]) -> dict[tuple[str, str], frozenset[str]]:
        """Pre-aggregated discovery: group versions, then each one's resource list."""
        pairs: list[tuple[str, str]] = []
        if body.get("kind") == "APIVersions":
            pairs = [("", str(v)) for v in body.get("versions") or ()]
        else:
            for group in body.get("groups") or ():
                name = str(group.get("name", ""))
                pairs += [(name, str(v.get("version"))) for v in group.get("versions") or ()]
        wanted = {(k.group, v) for k in LIVE_KINDS for v in k.versions}
        out = {}
        for group, version in pairs:
            if (group, version) not in wanted:
                continue
            prefix = "/api/" if not group else f"/apis/{group}/"
            found = self.get(prefix + version)
            if isinstance(found, Mapping):
                names = {str(r.get("name")) for r in found.get("resources") or ()}
                out[(group, version)] = frozenset(n for n in names if "/" not in n)
        return out

    def list(
        self, kind: LiveKind, version: str, namespace: str | None, selector: str | None
    ) -> list[dict[str, Any]] | str:
        """Every object of ``kind``, page after page; a warning line when refused."""
        base = "/api/" if not kind.group else f"/apis/{kind.group}/"
        path = base + version
        if kind.namespaced and namespace:
            path += f"/namespaces/{namespace}"
        path += f"/{kind.resource}"
        api_version = _group_version(kind.group, version)
        items: list[dict[str, Any]] = []
        token = ""
        while True:
            query = [("limit", str(PAGE_SIZE))]
            if selector and kind.selected:
                query.append(("labelSelector", selector))
            if token:
                query.append(("continue", token))
            body = self.get(path, query)
            if isinstance(body, tuple):
                status, message = body
                return f"{self.source}: {kind.kind} not read: {status} {message}"
            page = body.get("items") if isinstance(body, Mapping) else None
            if not isinstance(page, list):
                raise ManifestError(f"{self.source}: {path}: not a {kind.kind}List")
            for item in page:
                if isinstance(item, Mapping):  # list items carry no apiVersion/kind
                    items.append({"apiVersion": api_version, "kind": kind.kind, **item})
            meta = body.get("metadata") or {}
            token = str(meta.get("continue") or "")
            if not token:
                return items


def _aggregated(body: Mapping[str, Any]) -> dict[tuple[str, str], frozenset[str]]:
    """``APIGroupDiscoveryList`` (apidiscovery.k8s.io/v2): groups, versions, resources."""
    out = {}
    for group in body.get("items") or ():
        name = str((group.get("metadata") or {}).get("name", ""))
        for v in group.get("versions") or ():
            resources = {str(r.get("resource")) for r in v.get("resources") or ()}
            out[(name, str(v.get("version")))] = frozenset(resources)
    return out


def _status_message(body: Any, reason: Any) -> str:
    """The server's ``Status`` message (``pods is forbidden: User "x" cannot list ...``),
    else the HTTP reason; never headers."""
    try:
        doc = json.loads(body) if body else None
    except (ValueError, TypeError, UnicodeDecodeError):
        doc = None
    if isinstance(doc, Mapping) and isinstance(doc.get("message"), str):
        return " ".join(doc["message"].split())
    return str(reason or "")


def _reach(e: Exception) -> str:
    """Why a request did not get an answer, in a few words (no URL query, no headers)."""
    reason = getattr(e, "reason", None)
    text = str(reason or e)
    if "Connection refused" in text or "ConnectionRefused" in text:
        return "connection refused"
    if "timed out" in text.lower():
        return "timed out"
    if "CERTIFICATE_VERIFY_FAILED" in text or "SSLError" in text:
        return "TLS certificate verification failed"
    if "Name or service not known" in text or "nodename nor servname" in text:
        return "unknown host"
    return type(reason or e).__name__
