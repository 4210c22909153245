"""`ChangeJournal[K]`: the keys written to a forkable map, for readers that keep a view of it
up to date incrementally.

The model is the store's node journal (`DeltaSnapshotStore.changes_since`): a reader keeps
the token `changes_since` returned and asks again later; it gets the keys whose visible value
may have changed since (possibly repeated, in write order), or None when that is not known
any more and it must rebuild from a full listing. Writers call `record` for every key they
set or delete and for every key a revert brings back to an older value; commits change no
visible value and record nothing.

The DRA snapshot keeps one for ResourceClaims (`DraSnapshot.claim_changes_since`), which the
DynamicResources plugin's `schedsim.dra.tracker.AllocatedStateTracker` follows instead of
listing every claim per pod.

Costs: `record` O(1) amortized; `changes_since` O(1) + O(keys returned); the journal keeps at
most `JOURNAL_LIMIT` keys (past that the older half is dropped: readers further behind get
None once).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable
from typing import Final, Generic, TypeVar

__all__ = ["JOURNAL_LIMIT", "ChangeJournal", "new_stamp"]

K = TypeVar("K", bound=Hashable)

JOURNAL_LIMIT: Final = 65_536
"""Keys kept; a reader more than about this many writes behind gets None (rebuild)."""

_STAMPS = itertools.count(1)


def new_stamp() -> int:
    """A process-wide unique int: a version of some state that equals no other version of
    any state (so "same stamp" means "same state", across objects too). Time: O(1)."""
    return next(_STAMPS)


class ChangeJournal(Generic[K]):
    """The keys written since some earlier point, for incremental readers.

    A token is ``(journal stamp, position)``; `restart` takes a new stamp, so every token
    handed out before reads as unknown (None). Tokens hold no reference to the journal.
    """

    __slots__ = ("_keys", "_stamp", "_start")

    def __init__(self) -> None:
        self._stamp = new_stamp()
        self._start = 0  # position of _keys[0]
        self._keys: list[K] = []

    def token(self) -> tuple[int, int]:
        """The token for "now". Time: O(1)."""
        return (self._stamp, self._start + len(self._keys))

    def changes_since(self, token: object) -> tuple[tuple[int, int], list[K] | None]:
        """The new token and the keys recorded after ``token`` (a token of this journal;
        anything else, e.g. None on a reader's first call, gives None: unknown).

        Time: O(1) + O(keys returned).
        """
        now = (self._stamp, self._start + len(self._keys))
        if not isinstance(token, tuple) or len(token) != 2 or token[0] != self._stamp:
            return now, None
        at = token[1] - self._start
        if at < 0:
            return now, None  # dropped already
        return now, self._keys[at:]

    def record(self, key: K) -> None:
        """Note that ``key``'s visible value may have changed. Time: O(1) amortized."""
        keys = self._keys
        keys.append(key)
        if len(keys) > JOURNAL_LIMIT:
            drop = len(keys) // 2
            del keys[:drop]
            self._start += drop

    def record_all(self, keys: Iterable[K]) -> None:
        """`record` for each of ``keys``."""
        for key in keys:
            self.record(key)

    def restart(self) -> None:
        """Forget everything: every earlier token reads as unknown. Time: O(1)."""
        self._stamp = new_stamp()
        self._start = 0
        self._keys = []
