"""Node-affinity parse errors in kube-scheduler's words.

component-helpers/scheduling/corev1/nodeaffinity (``nodeSelectorRequirementsAsSelector``,
``nodeSelectorRequirementsAsFieldSelector``) reports bad terms as ``field.Error``s, whose text
quotes a string value with Go's ``%q`` and prints a ``[]string`` as ``%#v``; NodeAffinity's
PreScore/Filter return that text (node_affinity_test.go "PreScore returns error when an
incoming Pod has a broken affinity" checks the full message for a bad key).
"""

from __future__ import annotations

import pytest

from schedsim.api.core import NodeSelectorRequirement as Req
from schedsim.api.core import NodeSelectorTerm
from schedsim.api.core.nodeaffinity import compile_term
from schedsim.api.labels import qualified_name_problem


@pytest.mark.parametrize(
    ("term", "want"),
    [
        (
            NodeSelectorTerm(match_fields=(Req("metadata.name", "In", ("a", "b")),)),
            '[0].matchFields[0].values: Invalid value: []string{"a", "b"}: must have one element',
        ),
        (
            NodeSelectorTerm(match_fields=(Req("metadata.name", "Gt", ("a",)),)),
            '[0].matchFields[0].operator: Unsupported value: "Gt": supported values: "In", "NotIn"',
        ),
        (
            NodeSelectorTerm(match_expressions=(Req("k", "Gt", ("x",)),)),
            "[0].matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, "
            "the value must be an integer",
        ),
        (
            NodeSelectorTerm(match_expressions=(Req("invalid key", "In", ("bar",)),)),
            '[0].matchExpressions[0].key: Invalid value: "invalid key": '
            + str(qualified_name_problem("invalid key")),
        ),
    ],
)
def test_term_errors_in_go_wording(term: NodeSelectorTerm, want: str) -> None:
    """The first error of a broken term, as upstream's field.Error prints it."""
    _, errs = compile_term(term, "[0]")
    assert errs[0] == want


def test_qualified_name_problem_is_apimachinerys() -> None:
    """validation.IsQualifiedName's message, RegexError examples and regex included (the text
    node_affinity_test.go expects), prefix problems first, several joined by '; '."""
    assert qualified_name_problem("invalid key") == (
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
        "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
        "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    )
    assert qualified_name_problem("Example.com/-x-") == (
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
        "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'); name part must "
        "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
        "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    )
    problem = qualified_name_problem("a/b/c")
    assert problem is not None and problem.startswith("a qualified name must consist of")
    assert qualified_name_problem("example.com/MyName") is None
