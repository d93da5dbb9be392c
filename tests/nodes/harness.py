"""Running one node type on arrays, compiled and through the reference evaluator.

`run_node("box_blur", {"image": planar_u8}, {"radius": 2})` builds image-input nodes for
the arrays (scalars become Constant nodes), the node under test, and an Output node (type
kept) per output port; it returns {output port: (compiled, reference)}.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pixelweave.nodes.graph import NodeSpec, build_graph
from pixelweave.nodes.node_type import node_type
from pixelweave.nodes.run import GraphRunner

ELEMENTS = {np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16", np.dtype(np.float32): "f32"}


def input_specs(inputs: dict[str, Any]) -> tuple[list[NodeSpec], dict[str, np.ndarray]]:
    specs, images = [], {}
    for port, value in inputs.items():
        node_id = f"input_{port}"
        if isinstance(value, np.ndarray):
            layout = {2: "gray", 3: "colour"}[value.ndim]
            specs.append(NodeSpec(node_id, "image_input", {"element": ELEMENTS[value.dtype], "layout": layout}))
            images[node_id] = value
        else:
            specs.append(NodeSpec(node_id, "constant", {"value": float(value), "element": "f32"}))
    return specs, images


def run_node(
    type_name: str, inputs: dict[str, Any], params: dict[str, Any] | None = None, target: str = "host"
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    cls = node_type(type_name)
    specs, images = input_specs(inputs)
    links = {port: (f"input_{port}", "out") for port in inputs}
    specs.append(NodeSpec("node", type_name, dict(params or {}), links))
    for port in cls.outputs:
        specs.append(NodeSpec(f"out_{port.name}", "output", {"element": "same"}, {"image": ("node", port.name)}))
    runner = GraphRunner(build_graph(specs))
    compiled = runner.run(images, target=target)
    reference = runner.run(images, target="reference")
    return {port.name: (compiled[f"out_{port.name}"], reference[f"out_{port.name}"]) for port in cls.outputs}


def run_node_once(type_name: str, inputs: dict[str, Any], params: dict[str, Any] | None = None) -> np.ndarray:
    """The compiled output (asserted equal to the reference's) of a one-output node."""
    ((compiled, reference),) = run_node(type_name, inputs, params).values()
    assert_same(compiled, reference)
    return compiled


def assert_same(compiled: np.ndarray, reference: np.ndarray) -> None:
    """Floats within a tight tolerance; integers equal, except that a value computed in
    float and rounded may land one level apart on a few pixels, because compiled code
    fuses multiply-adds (as Halide does) and the reference evaluator does not."""
    assert compiled.shape == reference.shape and compiled.dtype == reference.dtype
    if np.issubdtype(compiled.dtype, np.floating):
        np.testing.assert_allclose(compiled, reference, rtol=1e-5, atol=1e-5)
        return
    diff = np.abs(compiled.astype(np.int64) - reference.astype(np.int64))
    assert diff.max(initial=0) <= 1, f"compiled and reference differ by up to {diff.max()}"
    assert np.count_nonzero(diff) <= max(1, diff.size // 1000), f"{np.count_nonzero(diff)} values differ by one"
