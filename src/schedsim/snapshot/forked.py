"""`Forked`: a block of changes to a snapshot that ends committed or reverted, never open.

Mirrors the Cluster Autoscaler's ``clustersnapshot.WithForkedSnapshot`` (clustersnapshot.go):
fork, run the function, then commit when it asked to (its ``bool`` result), else revert; the
deferred cleanup also runs on a panic. Here the block is a
``with`` statement and asking is `Forked.commit`:

.. code-block:: python

    with snapshot.forked() as fork:
        snapshot.remove_node_info("n1")
        if everything_fits(snapshot):
            fork.commit()  # kept when the block ends without an exception
    # reverted otherwise, exceptions included

Differences from CA, deliberate: the block's exception is the "error" (CA returns the
function's error and commits anyway when it also returned true; an exception here always
reverts, as CA's cleanup does on a panic), and a commit that raises propagates without a
revert (CA reverts after a failed commit; ours commit store, DRA, CSI and volume state one
after another, so a revert after a partial commit would undo the layer below instead).

Forks nest: an inner block's commit lands in the outer block's layer, which the outer block
still commits or reverts. The body must not call ``fork``/``commit``/``revert`` itself
unbalanced, nor ``set_cluster_state``/``clear`` (they drop every layer).
"""

from __future__ import annotations

from types import TracebackType
from typing import Protocol

__all__ = ["Forkable", "Forked"]


class Forkable(Protocol):
    """Anything with CA's fork/commit/revert: `PredicateSnapshot` and the stores. This is a
    Protocol: implementations don't inherit from it."""

    def fork(self) -> None: ...

    def commit(self) -> None: ...

    def revert(self) -> None: ...


class Forked:
    """One forked block over ``snapshot`` (see the module docstring); made by
    `PredicateSnapshot.forked`.

    Time: one ``fork`` on entry, one ``revert`` (or ``commit``) on exit; O(1) besides them.
    """

    __slots__ = ("_commit", "_snapshot")

    def __init__(self, snapshot: Forkable) -> None:
        self._snapshot = snapshot
        self._commit = False

    def commit(self) -> None:
        """Keep the block's changes: commit them into the layer below when the block ends
        without an exception (CA's function returning true). May be called more than once."""
        self._commit = True

    @property
    def committing(self) -> bool:
        """Whether `commit` was asked for."""
        return self._commit

    def __enter__(self) -> Forked:
        self._snapshot.fork()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None and self._commit:
            self._snapshot.commit()
        else:
            self._snapshot.revert()
