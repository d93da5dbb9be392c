"""Stencil nodes against OpenCV or NumPy, compiled and through the reference evaluator."""

import cv2
import numpy as np
import pytest

from tests.nodes.harness import run_node_once


@pytest.mark.parametrize("radius", [1, 3])
@pytest.mark.parametrize(
    ("boundary", "border"),
    [("clamp", cv2.BORDER_REPLICATE), ("mirror", cv2.BORDER_REFLECT), ("mirror_interior", cv2.BORDER_REFLECT_101)],
)
def test_box_blur_matches_opencv(astronaut_planar, radius, boundary, border):
    image = astronaut_planar[:, :200, :240]
    out = run_node_once("box_blur", {"image": image}, {"radius": radius, "boundary": boundary})
    n = 2 * radius + 1
    expected = cv2.blur(np.moveaxis(image, 0, -1), (n, n), borderType=border)
    # OpenCV rounds the mean the same way (to nearest); allow one level where its fixed-point differs
    assert np.abs(np.moveaxis(out, 0, -1).astype(int) - expected).max() <= 1
