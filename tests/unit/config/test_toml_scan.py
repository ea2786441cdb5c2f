"""The line scan that locates keys in a TOML text, and the redaction of quoted lines."""

from __future__ import annotations

import pytest

from charter.config.toml import KeyPath, key_positions, redact

TEXT = """\
# a comment: key = 1
[model]
backend = "x"   # trailing
"quoted key" = 1
[serve]
[[serve.tenants]]
name = "a"
[[serve.tenants]]
  name = "b"
[serve.tenants.extra]
depth = 1
[agent]
notes = \"\"\"
fake = 1
\"\"\"
list = [
  "[not.a.header]",
]
after = true
a.b.c = 1
[ 'x' . "y" ]
z = 1
"""


@pytest.mark.parametrize(
    ("path", "position"),
    [
        (("model",), (2, 2, 7)),
        (("model", "backend"), (3, 1, 8)),
        (("model", "quoted key"), (4, 1, 13)),
        (("serve", "tenants"), (6, 3, 16)),
        (("serve", "tenants", 0), (6, 3, 16)),
        (("serve", "tenants", 0, "name"), (7, 1, 5)),
        (("serve", "tenants", 1, "name"), (9, 3, 7)),
        (("serve", "tenants", 1, "extra", "depth"), (11, 1, 6)),
        (("agent", "notes"), (13, 1, 6)),
        (("agent", "after"), (19, 1, 6)),
        (("agent", "a"), (20, 1, 6)),
        (("agent", "a", "b", "c"), (20, 1, 6)),
        (("x", "y", "z"), (22, 1, 2)),
    ],
)
def test_positions(path: KeyPath, position: tuple[int, int, int]) -> None:
    assert key_positions(TEXT)[path] == position


@pytest.mark.parametrize(
    "path", [("agent", "fake"), ("not", "a", "header"), ("key",), ("agent", "list", "x")]
)
def test_no_keys_inside_strings_arrays_or_comments(path: KeyPath) -> None:
    assert path not in key_positions(TEXT)


def test_redact_known_values_and_secret_keys() -> None:
    text = (
        'url = "postgresql://u:pw-123@db/x"\n'
        'token = "abc"\n'
        "  api_key='k' # note\n"
        'name = "tok"\n'
        'other = "pw-123 again"\n'
    )
    assert redact(text, ["pw-123", ""]) == (
        'url = "postgresql://u:***@db/x"\n'
        'token = "***"\n'
        '  api_key= "***"\n'
        'name = "tok"\n'
        'other = "*** again"\n'
    )
