"""Which lines of a loop nest or lowered statement belong to which node."""

from __future__ import annotations

from pixelweave.nodes.loop_nest_map import lines_of_node, map_loop_nest, map_statement, node_at_line
from pixelweave.nodes.pipeline_build import open_document

NEST = """\
produce result.out:
  parallel y.yo:
    for x.xo:
      store sharpen.blur_x:
        produce sharpen.blur_x:
          for y:
            vectorized x.v0 in [0, 7]:
              sharpen.blur_x(...) = ...
        consume sharpen.blur_x:
          for y.yi:
            unrolled x.xi in [0, 3]:
              result.out(...) = ...
"""


def test_loops_belong_to_the_enclosing_produce_block():
    mapping = map_loop_nest(NEST, ["sharpen", "result", "photo"])
    assert [m.node for m in mapping] == ["result"] * 3 + ["sharpen"] * 6 + ["result"] * 3
    assert [m.kind for m in mapping] == [
        "produce", "loop", "loop", "store", "produce", "loop", "loop", "compute", "consume", "loop", "loop", "compute"
    ]  # fmt: skip
    assert [m.loop_kind for m in mapping if m.kind == "loop"] == [
        "parallel",
        "for",
        "for",
        "vectorized",
        "for",
        "unrolled",
    ]
    assert mapping[3].func == "sharpen.blur_x" and mapping[10].func == "result.out"
    assert lines_of_node(mapping, "sharpen") == [3, 4, 5, 6, 7, 8]
    assert lines_of_node(mapping, "photo") == []
    assert node_at_line(mapping, 9) == "result"
    assert node_at_line(mapping, 99) is None


def test_funcs_of_unknown_nodes_and_odd_lines_belong_to_nobody():
    mapping = map_loop_nest("produce other.out:\n  for x:\n\nsomething else\n", ["result"])
    assert [m.node for m in mapping] == [None, None, None, None]
    assert mapping[1].func == "other.out"


def test_statement_lines_name_their_func():
    stmt = """\
let result.out.s0.y.max = ((result.out.min.1 + result.out.extent.1) - 1)
produce result.out {
  parallel (result.out.s0.y.yo, 0, 4) {
    allocate sharpen.blur_x[float32 * 64]
    produce sharpen.blur_x {
      for (sharpen.blur_x.s0.y, 0, 38) {
        sharpen.blur_x[ramp(sharpen.blur_x.s0.x.base, 1, 8)] = photo[0]
      }
    }
    free sharpen.blur_x
  }
}
"""
    mapping = map_statement(stmt, ["photo", "sharpen", "result"])
    assert [m.node for m in mapping] == [
        "result", "result", "result", "sharpen", "sharpen", "sharpen", "sharpen", None, None, "sharpen", None, None
    ]  # fmt: skip
    assert [m.kind for m in mapping][:7] == ["let", "produce", "loop", "allocate", "produce", "loop", "compute"]
    assert mapping[2].loop_kind == "parallel" and mapping[9].kind == "free"
    assert mapping[3].func == "sharpen.blur_x"


def test_every_line_of_real_loop_nests_that_names_a_node_is_mapped_to_it():
    built = open_document("resources/examples/unsharp_mask.json")
    nest = built.loop_nest()
    mapping = map_loop_nest(nest, built.funcs())
    for line, m in zip(nest.splitlines(), mapping, strict=True):
        if line.strip().startswith(("produce", "consume", "store")):
            assert m.node == line.split()[1].split(".")[0]
        if line.strip().startswith(("for", "parallel", "vectorized")):
            assert m.node in ("sharpen", "result")
    assert {m.node for m in mapping} == {"sharpen", "result"}
