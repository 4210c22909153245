"""DefaultBinder: the default Bind plugin (``plugins/defaultbinder/default_binder.go``).

Upstream it POSTs a Binding (``spec.nodeName``) to the API server. In the simulator the
scheduling cycle has already stored the pod on the node in the snapshot (the assumed pod of
kube-scheduler's cache), so binding confirms it: it always succeeds. It runs last among the
default plugins, so a custom Bind plugin enabled before it can take the pod (returning
Success) or pass it on (``Skip``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedsim.api.core import Pod
from schedsim.framework import CycleState, Handle, Status
from schedsim.framework.args import no_args

__all__ = ["NAME", "DefaultBinder"]

NAME = "DefaultBinder"


class DefaultBinder:
    """Binds every pod it is asked to bind.

    Args:
        args: none are accepted.
        handle: unused.

    Raises:
        ValueError: ``args`` has fields besides ``apiVersion``/``kind``.
    """

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        no_args(NAME, args)

    def schedsim_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Bind: the pod already sits on ``node_name`` in the snapshot; success."""
        return None
