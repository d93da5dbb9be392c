"""The C subset: C's semantics kept exactly (truncating division, wrap-around, promotions),
the shapes of loops the lifter reads, and a clear refusal, with file and line, of the rest."""

from __future__ import annotations

from pathlib import Path

import pytest
from pixelweave.nodes.lift.c_lift import lift_c
from pixelweave.nodes.lift.errors import LiftError
from pixelweave.nodes.lift.prove import prove
from pixelweave.nodes.lift.verify import differential

HEAD = "#include <stdint.h>\n#include <stdlib.h>\n"


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "k.c"
    path.write_text(HEAD + body)
    return path


def test_signed_division_and_remainder_truncate_as_in_c(tmp_path):
    path = write(
        tmp_path,
        """
void k(const uint8_t *src, int16_t *dst, int width, int height, int rowBytes, int stride) {
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            int v = src[y * rowBytes + x] - 128;
            dst[y * stride + x] = (int16_t)(v / 7 * 100 + v % 7 + (v >> 2));
        }
}
""",
    )
    lift = lift_c(path, "k")
    assert differential(lift, trials=4).held
    proof = prove(lift)
    assert proof.applicable and proof.held, proof.detail


def test_unsigned_wrap_around_and_narrowing_casts(tmp_path):
    path = write(
        tmp_path,
        """
void k(const uint16_t *src, uint8_t *dst, int n) {
    for (int i = 0; i < n; i++) {
        uint32_t v = src[i] * 40503u;
        dst[i] = (uint8_t)((v >> 3) ^ (uint8_t)v);
    }
}
""",
    )
    lift = lift_c(path, "k")
    assert differential(lift, trials=4).held
    assert prove(lift).held


def test_downward_loop_and_if_else_become_selects(tmp_path):
    path = write(
        tmp_path,
        """
void k(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    for (int y = height - 1; y >= 0; y--) {
        for (int x = 0; x < width; x++) {
            int v = src[y * rowBytes + x];
            if (v > 200) { v = 255; } else if (v < 50) { v = 0; } else { v = v * 2 - 150; }
            dst[y * rowBytes + x] = (uint8_t)v;
        }
    }
}
""",
    )
    lift = lift_c(path, "k")
    assert differential(lift, trials=4).held
    assert prove(lift).held


def test_conditional_store_keeps_the_old_value_elsewhere(tmp_path):
    path = write(
        tmp_path,
        """
void k(const uint8_t *mask, uint8_t *dst, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            if (mask[y * rowBytes + x] & 1) dst[y * rowBytes + x] = 7;
}
""",
    )
    lift = lift_c(path, "k")
    assert "dst_in" in lift.engine.images  # unwritten pixels come from the buffer's old contents
    assert differential(lift, trials=4).held


def test_a_wrong_engine_definition_is_caught_by_the_proof(tmp_path):
    path = write(
        tmp_path,
        """
void a(const uint8_t *src, uint8_t *dst, int n) { for (int i = 0; i < n; i++) dst[i] = (uint8_t)(src[i] / 3); }
void b(const uint8_t *src, uint8_t *dst, int n) { for (int i = 0; i < n; i++) dst[i] = (uint8_t)(src[i] * 85 >> 8); }
""",
    )
    right, wrong = lift_c(path, "a"), lift_c(path, "b")
    right.engine = wrong.engine  # b's engine code claimed for a: they differ (e.g. at 255)
    proof = prove(right)
    assert proof.applicable and not proof.held
    assert "differs" in proof.detail


REFUSALS = [
    ("int f(const uint8_t *p, int n) { return n <= 0 ? 0 : f(p, n - 1); }", "f", 3, "recursion"),
    (
        "void f(const uint8_t *s, uint8_t *d, int n) { int i = 0; while (i < n) { d[i] = s[i]; i++; } }",
        "f",
        3,
        "while loop",
    ),
    (
        "void f(const uint8_t *s, uint8_t *d, int n) {\n for (int i = 0; i < n; i++) {\n if (s[i] == 0) break;\n"
        " d[i] = s[i]; } }",
        "f",
        5,
        "break",
    ),
    (
        "void f(const uint8_t *s, uint8_t *a, uint8_t *b, int n) {\n for (int i = 0; i < n; i++) {\n"
        " uint8_t *d = s[i] ? a : b;\n d[i] = 1; } }",
        "f",
        5,
        "aliasing",
    ),
    (
        "void g(uint8_t *p);\nvoid f(uint8_t *d, int n) {\n for (int i = 0; i < n; i++) g(d); }",
        "f",
        5,
        "unknown function",
    ),
    (
        "void f(const uint8_t *s, uint8_t *d, int n) {\n for (int i = 0; i < n; i += n) d[i] = s[i]; }",
        "f",
        4,
        "non-zero constant",
    ),
]


@pytest.mark.parametrize(("code", "name", "line", "words"), REFUSALS, ids=[r[3] for r in REFUSALS])
def test_outside_the_subset_is_refused_with_file_line_and_construct(tmp_path, code, name, line, words):
    path = write(tmp_path, code)
    with pytest.raises(LiftError) as e:
        lift_c(path, name)
    message = str(e.value)
    assert f"k.c:{line}:" in message and "cannot lift" in message
    assert words in message


def test_unknown_function_name_lists_the_defined_ones(tmp_path):
    path = write(tmp_path, "void a(uint8_t *d) { d[0] = 1; }\n")
    with pytest.raises(LiftError, match=r"`nope`.*defined: a"):
        lift_c(path, "nope")
