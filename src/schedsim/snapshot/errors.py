"""Snapshot errors: lookups that fail, and `SchedulingError` with its three types.

Mirrors CA ``clustersnapshot/scheduling_error.go`` and ``ErrNodeNotFound``.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from schedsim.api.core import Pod

__all__ = [
    "NodeAlreadyExistsError",
    "NodeNotFoundError",
    "PodNotFoundError",
    "SchedulingError",
    "SchedulingErrorType",
]


class NodeNotFoundError(LookupError):
    """The named node is not in the snapshot (``ErrNodeNotFound``)."""

    def __init__(self, node_name: str) -> None:
        super().__init__(f"node {node_name!r} not found")
        self.node_name = node_name


class NodeAlreadyExistsError(ValueError):
    """A node with that name is already in the snapshot."""

    def __init__(self, node_name: str) -> None:
        super().__init__(f"node {node_name} already in snapshot")
        self.node_name = node_name


class PodNotFoundError(LookupError):
    """The pod is not on the node it was looked for on."""

    def __init__(self, namespace: str, name: str, node_name: str) -> None:
        super().__init__(f"pod {namespace}/{name} not found on node {node_name}")


class SchedulingErrorType(enum.Enum):
    """What kind of scheduling failure (branch on this, not on the text)."""

    INTERNAL_ERROR = "SchedulingInternalError"
    """Something unexpected: missing node, a plugin error, a failed Reserve."""
    FAILING_PREDICATE = "FailingPredicateError"
    """A plugin rejected the pod on the given node."""
    NO_NODES_PASSING_PREDICATES = "NoNodesPassingPredicatesFoundError"
    """No node passed (the any-node variant)."""


class SchedulingError(Exception):
    """Why a pod could not be scheduled by the snapshot.

    Message formats are CA's (``can't schedule pod NS/NAME: ...``).

    Attributes:
        type: the `SchedulingErrorType`.
        pod: the pod.
        failing_predicate_name: the plugin (FAILING_PREDICATE only).
        failing_predicate_reasons: its reason strings (FAILING_PREDICATE only).
        node_name: the node the failing predicate ran on, when there is one.
        internal_message: what went wrong (INTERNAL_ERROR only), without the prefix.
    """

    def __init__(
        self,
        type: SchedulingErrorType,
        pod: Pod,
        *,
        message: str = "",
        failing_predicate_name: str = "",
        failing_predicate_reasons: Sequence[str] = (),
        unexpected_error: str = "",
        debug_info: str = "",
        node_name: str = "",
    ) -> None:
        self.type = type
        self.node_name = node_name
        self.pod = pod
        self.failing_predicate_name = failing_predicate_name
        self.failing_predicate_reasons = tuple(failing_predicate_reasons)
        self.unexpected_error = unexpected_error
        self.debug_info = debug_info
        self.internal_message = message if type is SchedulingErrorType.INTERNAL_ERROR else ""
        prefix = f"can't schedule pod {pod.namespace}/{pod.name}: "
        if type is SchedulingErrorType.INTERNAL_ERROR:
            text = f"unexpected error: {message}"
        elif type is SchedulingErrorType.FAILING_PREDICATE:
            details = [f"predicateReasons=[{', '.join(self.failing_predicate_reasons)}]"]
            if debug_info:
                details.append(f"debugInfo={debug_info}")
            if unexpected_error:
                details.append(f"unexpectedError={unexpected_error}")
            text = f'predicate "{failing_predicate_name}" didn\'t pass ({"; ".join(details)})'
        else:
            text = "couldn't find a matching Node with passing predicates"
        super().__init__(prefix + text)

    @property
    def reasons(self) -> tuple[str, ...]:
        """The predicate's reasons for FAILING_PREDICATE, else the message."""
        if self.type is SchedulingErrorType.FAILING_PREDICATE:
            return self.failing_predicate_reasons
        return (str(self),)

    @classmethod
    def internal(cls, pod: Pod, message: str) -> SchedulingError:
        """An INTERNAL_ERROR (NewSchedulingInternalError)."""
        return cls(SchedulingErrorType.INTERNAL_ERROR, pod, message=message)

    @classmethod
    def failing_predicate(
        cls,
        pod: Pod,
        name: str,
        reasons: Sequence[str],
        unexpected_error: str = "",
        debug_info: str = "",
        node_name: str = "",
    ) -> SchedulingError:
        """A FAILING_PREDICATE error (NewFailingPredicateError)."""
        return cls(
            SchedulingErrorType.FAILING_PREDICATE,
            pod,
            failing_predicate_name=name,
            failing_predicate_reasons=reasons,
            unexpected_error=unexpected_error,
            debug_info=debug_info,
            node_name=node_name,
        )

    @classmethod
    def no_nodes_passing(cls, pod: Pod) -> SchedulingError:
        """A NO_NODES_PASSING_PREDICATES error."""
        return cls(SchedulingErrorType.NO_NODES_PASSING_PREDICATES, pod)
