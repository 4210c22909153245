"""Finding where two equally long sequences differ, in O(differences x log length) C-level
slice comparisons (used by the bulk revalidations over a snapshot's node list: the filter
table, the pod index)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["differences"]


def differences(a: Sequence[object], b: Sequence[object], lo: int, hi: int, out: list[int]) -> None:
    """Append to ``out``, in increasing order, the indices in [lo, hi) where ``a`` and ``b``
    differ, by halving: equal halves are skipped with one C-level slice comparison (identity
    first), so k differences cost O(k log n) slice comparisons."""
    if a[lo:hi] == b[lo:hi]:
        return
    if hi - lo <= 16:
        out.extend(i for i in range(lo, hi) if a[i] is not b[i] and a[i] != b[i])
        return
    mid = (lo + hi) // 2
    differences(a, b, lo, mid, out)
    differences(a, b, mid, hi, out)
