"""Score normalization shared by in-tree Score plugins (kube-scheduler's
``framework/plugins/helper/normalize_score.go``)."""

from __future__ import annotations

__all__ = ["default_normalize_score"]


def default_normalize_score(max_priority: int, reverse: bool, scores: dict[str, int]) -> None:
    """``helper.DefaultNormalizeScore``, in place.

    Each score becomes ``max_priority * score / max`` (integer division truncating toward
    zero, as Go's), or ``max_priority`` minus that when ``reverse``. When the highest score
    is 0 (or below) the scores are left as they are, or all set to ``max_priority`` when
    ``reverse``.

    Args:
        max_priority: the top of the range, usually ``MAX_NODE_SCORE`` (100).
        reverse: a low raw score is good (TaintToleration counts intolerable taints).
        scores: node name -> raw score; rewritten in place.
    """
    max_count = max(scores.values(), default=0)
    if max_count <= 0:
        if reverse:
            scores.update(dict.fromkeys(scores, max_priority))
        return
    values = scores.values()
    if min(values) >= 0:  # the usual case, at C speed: no sign handling needed
        scaled_all = [max_priority * score // max_count for score in values]
        if reverse:
            scaled_all = list(map(max_priority.__sub__, scaled_all))
        scores.update(zip(list(scores), scaled_all, strict=True))
        return
    for node, score in scores.items():
        q = abs(max_priority * score) // max_count
        scaled = q if score >= 0 else -q
        scores[node] = max_priority - scaled if reverse else scaled
