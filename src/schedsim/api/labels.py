"""Label selectors (metav1.LabelSelector), their matching rules and apimachinery's label key
and value validation."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from schedsim.api.errors import FieldError
from schedsim.api.loading import decode as d

__all__ = [
    "LABEL_VALUE_MESSAGE",
    "LabelSelector",
    "LabelSelectorRequirement",
    "check_label_key",
    "go_quote",
    "label_value_ok",
    "label_value_problems",
    "qualified_name_problem",
]

_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})

_NAME_RE = re.compile(r"(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN_RE = re.compile(
    r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*"
)


_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def qualified_name_problem(key: str) -> str | None:
    """What is wrong with a label key, in apimachinery's words (``validation.IsQualifiedName``:
    ``[prefix/]name``; several problems joined by ``"; "`` as ``field.Invalid`` callers do),
    or None when it is valid."""
    errs: list[str] = []
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if len(prefix) > 253:
                errs.append("prefix part must be no more than 253 characters")
            if not _DNS1123_SUBDOMAIN_RE.fullmatch(prefix):
                errs.append("prefix part " + _DNS1123_SUBDOMAIN_MSG)
    else:
        return (
            f"a qualified name {_QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and "
            "'/' (e.g. 'example.com/MyName')"
        )
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _NAME_RE.fullmatch(name):
        errs.append("name part " + _QUALIFIED_NAME_MSG)
    return "; ".join(errs) if errs else None


def label_value_ok(value: str) -> bool:
    """``validation.IsValidLabelValue``: empty, or at most 63 characters of ``[-_.A-Za-z0-9]``
    starting and ending with an alphanumeric character."""
    return not value or (len(value) <= 63 and _NAME_RE.fullmatch(value) is not None)


LABEL_VALUE_MESSAGE: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
"""``IsValidLabelValue``'s message for a value that does not match its regex."""


def label_value_problems(value: str) -> list[str]:
    """``validation.IsValidLabelValue``'s errors for ``value``, in its order (empty when
    ``value`` is a valid label value)."""
    if label_value_ok(value):
        return []
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if value and _NAME_RE.fullmatch(value) is None:
        errs.append(LABEL_VALUE_MESSAGE)
    return errs


def go_quote(s: str) -> str:
    """Go's ``%q`` of a string (printable characters kept, the rest escaped)."""
    out = ['"']
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _requirement_problem(key: str, values: Iterable[str]) -> str | None:
    """The error ``labels.NewRequirement`` returns for an expression whose key, operator and
    value count the API server has already validated: each invalid value as
    ``values[i][key]: Invalid value: "v": <why>`` (``field.ErrorList.ToAggregate``: duplicate
    messages once, several as ``[a, b]``), or None."""
    msgs: list[str] = []
    for i, v in enumerate(values):
        why = label_value_problems(v)
        if why:  # ValidateLabelValue joins them with "; " in its field.Invalid
            msg = f"values[{i}][{key}]: Invalid value: {go_quote(v)}: {'; '.join(why)}"
            if msg not in msgs:
                msgs.append(msg)
    if not msgs:
        return None
    return msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"


def check_label_key(key: str, field: str) -> None:
    """Raise FieldError when ``key`` is not a valid label key (``ValidateLabelName``)."""
    problem = qualified_name_problem(key)
    if problem is not None:
        raise FieldError(field, f"invalid label key {key!r}: {problem}")


@attrs.frozen
class LabelSelectorRequirement:
    """One ``matchExpressions`` entry: ``key operator values``."""

    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Mirrors apimachinery labels.Requirement.Matches for In/NotIn/Exists/DoesNotExist."""
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        if self.operator == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == "Exists":
            return self.key in labels
        return self.key not in labels


@attrs.frozen
class LabelSelector:
    """metav1.LabelSelector. An empty selector matches everything (as in
    ``metav1.LabelSelectorAsSelector``)."""

    match_labels: Mapping[str, str] = attrs.field(factory=dict)
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()
    problem: str | None = attrs.field(default=None, eq=False, repr=False)
    """Why ``metav1.LabelSelectorAsSelector`` fails for this selector as stored, or None. The
    API server keeps serving stored selectors whose expression values are not valid label
    values (AllowInvalidLabelValueInSelector), so such a selector decodes; this is the message
    of its first failing expression, kept for the consumers that parse it (InterPodAffinity's
    ``framework.NewPodInfo``). Not part of equality."""

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy every matchLabels entry and every expression."""
        for k, v in self.match_labels.items():
            if labels.get(k) != v:
                return False
        return all(r.matches(labels) for r in self.match_expressions)

    @property
    def is_empty(self) -> bool:
        """No requirement at all: selects everything (``labels.Selector.Empty``)."""
        return not self.match_labels and not self.match_expressions

    def with_requirements(self, extra: Iterable[LabelSelectorRequirement]) -> LabelSelector:
        """This selector ANDed with ``extra`` (``labels.Selector.Add``)."""
        return LabelSelector(
            self.match_labels, (*self.match_expressions, *extra), problem=self.problem
        )

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> LabelSelector:
        """Decode a label selector and validate it as the API server does
        (``ValidateLabelSelector``: valid keys and matchLabels values, a known operator,
        values given for In/NotIn and absent for Exists/DoesNotExist); raises FieldError."""
        exprs = d.get_list(raw, "matchExpressions", path)
        ep = d.join(path, "matchExpressions")
        reqs = []
        problem: str | None = None
        for i in range(len(exprs)):
            e = d.get_mapping_item(exprs, i, ep)
            ip = f"{ep}[{i}]"
            op = d.get_str(e, "operator", ip)
            if op not in _OPERATORS:
                raise FieldError(f"{ip}.operator", f"unsupported value {op!r}")
            key = d.get_str(e, "key", ip)
            if not key:
                raise FieldError(f"{ip}.key", "required")
            check_label_key(key, f"{ip}.key")
            values = d.get_str_list(e, "values", ip)
            # ValidateLabelSelectorRequirement
            if op in ("In", "NotIn") and not values:
                raise FieldError(
                    f"{ip}.values", "required: must be specified when `operator` is 'In' or 'NotIn'"
                )
            if op in ("Exists", "DoesNotExist") and values:
                raise FieldError(
                    f"{ip}.values",
                    "forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            if problem is None and op in ("In", "NotIn"):
                problem = _requirement_problem(key, values)
            reqs.append(LabelSelectorRequirement(key=key, operator=op, values=frozenset(values)))
        match_labels = d.get_str_map(raw, "matchLabels", path)
        lp = d.join(path, "matchLabels")
        for k, v in match_labels.items():
            check_label_key(k, lp)
            if not label_value_ok(v):
                raise FieldError(d.key_path(lp, k), f"invalid label value {v!r}")
        return cls(match_labels=match_labels, match_expressions=tuple(reqs), problem=problem)
