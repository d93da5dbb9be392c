"""Live editing through the compositor preview: a run-time edit keeps the built Funcs and
only sets Params, runs only the stages that lie downstream of the change and that the
picture needs, and reuses the memory of superseded stage images; every picture equals a
fresh computation's and the fused pipeline's."""

from pathlib import Path

import numpy as np
from pixelweave.engine.runtime.jit import clear_memory_cache
from pixelweave.nodes import compositor as compositor_module
from pixelweave.nodes.document import load_document
from pixelweave.nodes.editing import EditSession
from pixelweave.nodes.image_cache import ImageCache
from pixelweave.nodes.pipeline_build import build_document
from pixelweave.nodes.preview import PreviewComputer
from pixelweave.nodes.stage_regions import coordinate_scalars

import pixelweave as pw
from tests.nodes.document_samples import blur_gamma_session

REPO = Path(__file__).resolve().parents[2]
SCALE = 4



def _fused(session: EditSession, computer: PreviewComputer) -> np.ndarray:
    built = build_document(session.document, check_lowering=False)
    images = {
        i: computer.compositor.input_image(session.document, i, *built.input_format(i), SCALE)[0]
        for i in built.input_ids
    }
    return built.run(images)["output"]


def test_a_runtime_edit_keeps_the_built_funcs_and_sets_their_params() -> None:
    session = blur_gamma_session()
    computer = PreviewComputer()
    computer.compute(session.document, "output", scale=SCALE)
    graph, _ = computer.compositor.built_graph(session.document, "output")
    funcs = {node_id: node.outputs["out"].func for node_id, node in graph.nodes.items()}
    for value in (1.7, 0.6, 1.3):
        session.set_param("gamma", "gamma", value, merge=True)
        edited = computer.compute(session.document, "output", scale=SCALE)
        assert edited.compiles == 0
        graph, _ = computer.compositor.built_graph(session.document, "output")
        assert all(graph.nodes[i].outputs["out"].func is f for i, f in funcs.items())  # nothing rebuilt
        assert graph.nodes["gamma"].params["gamma"] == value
        fresh = PreviewComputer().compute(session.document, "output", scale=SCALE)
        np.testing.assert_array_equal(edited.array, fresh.array)
        np.testing.assert_array_equal(edited.array, _fused(session, computer))
    session.end_merge()
    session.set_param("box_blur", "radius", 3)  # a structural edit builds the node (and downstream) again
    graph, _ = computer.compositor.built_graph(session.document, "output")
    assert graph.nodes["box_blur"].outputs["out"].func is not funcs["box_blur"]
    assert graph.nodes["image_input"].outputs["out"].func is funcs["image_input"]


def test_an_edit_runs_only_the_stages_the_picture_needs() -> None:
    """Local Laplacian's alpha feeds its remapping table and what reads it, not the input
    pyramid; an undo finds the node's output cached and runs nothing, even once the
    superseded versions of the stages inside the node are gone."""
    doc = load_document(REPO / "resources" / "examples" / "local_laplacian.json")
    session = EditSession(doc)
    computer = PreviewComputer()
    stats = computer.compositor.stats
    first = computer.compute(session.document, "result", scale=SCALE)
    all_stages = set(stats.ran)
    for value in (1.5, 2.0, 2.5, 3.0):
        session.set_param("filter", "alpha", value, merge=True)
        edited = computer.compute(session.document, "result", scale=SCALE)
        ran = set(stats.ran[len(stats.ran) - edited.runs :])
        assert edited.compiles == 0 and 0 < edited.runs == len(ran) < len(all_stages)
        assert "filter.remap" in ran and "filter.out" in ran
        assert not ran & {"photo.out", "filter.gray", "filter.in_pyramid1"}  # upstream of alpha
    # the stages inside the node keep two versions; the third and fourth values took the
    # memory of the first ones
    assert computer.compositor.images.reused > 0
    fresh = PreviewComputer().compute(session.document, "result", scale=SCALE)
    np.testing.assert_array_equal(edited.array, fresh.array)
    session.end_merge()
    session.undo()
    undone = computer.compute(session.document, "result", scale=SCALE)
    assert undone.runs == 0 and undone.compiles == 0
    np.testing.assert_array_equal(undone.array, first.array)


def test_node_outputs_keep_every_value_of_a_drag() -> None:
    session = blur_gamma_session()
    computer = PreviewComputer()
    cache = computer.compositor.images
    pictures = []
    for value in (0.5, 0.7, 0.9, 1.1, 1.3, 1.5):
        session.set_param("gamma", "gamma", value, merge=True)
        pictures.append(computer.compute(session.document, "output", scale=SCALE).array.copy())
    assert cache.reused == 0  # every node output is kept: nothing superseded yet
    assert len(cache) >= 2 * 6
    for picture, value in zip(pictures, (0.5, 0.7, 0.9, 1.1, 1.3, 1.5), strict=True):
        session.set_param("gamma", "gamma", value, merge=True)
        again = computer.compute(session.document, "output", scale=SCALE)
        assert again.runs == 0
        np.testing.assert_array_equal(again.array, picture)


def test_stage_versions_per_slot_and_spares_held_by_a_view_are_not_reused() -> None:
    cache = ImageCache(budget=1 << 20)
    box = ((0, 10), (0, 10))
    first = cache.empty((10, 10), np.float32)
    assert first.ctypes.data % 64 == 0
    first[:] = 1
    cache.put("v1", first, box, slot="stage", versions=2)
    del first
    for key in ("v2", "v3"):
        array = cache.empty((10, 10), np.float32)
        array[:] = 2
        cache.put(key, array, box, slot="stage", versions=2)
        del array
    assert "v1" not in cache and {"v2", "v3"} <= {k for k in ("v2", "v3") if k in cache}
    assert cache.reused == 0 and cache.evictions == 1
    reused = cache.empty((10, 10), np.float32)  # v1's memory, which nothing holds
    assert cache.reused == 1 and reused.ctypes.data % 64 == 0
    cache.put("v4", reused, box, slot="stage", versions=2)  # v2 goes
    del reused
    held = cache.get("v3", ((0, 5), (0, 5)))
    cache.put("v5", cache.empty((10, 10), np.float32), box, slot="stage", versions=2)  # v2's memory; v3 goes
    assert cache.reused == 2 and "v3" not in cache
    fresh = cache.empty((10, 10), np.float32)  # v3's memory is still seen through `held`
    assert cache.reused == 2 and not np.shares_memory(fresh, held)
    assert (held == 2).all()
    other = cache.empty((3, 7), np.float64)  # no spare of its size
    assert cache.reused == 2 and other.shape == (3, 7)


def test_an_unscheduled_stage_runs_its_rows_in_parallel_and_gives_the_same_picture() -> None:
    session = blur_gamma_session()
    computer = PreviewComputer()
    result = computer.compute(session.document, "output", scale=SCALE)
    graph, _ = computer.compositor.built_graph(session.document, "output")
    assert "parallel y" in computer.compositor.kernel_loop_nest(graph.nodes["gamma"].outputs["out"].func)
    np.testing.assert_array_equal(result.array, _fused(session, computer))
    session.set_schedule("gamma", {"out": [["vectorize", "x", 4]]})  # a schedule of its own is kept as it is
    graph, _ = computer.compositor.built_graph(session.document, "output")
    scheduled = graph.nodes["gamma"].outputs["out"].func
    assert computer.compositor.kernel_loop_nest(scheduled) is None  # its image is cached: no kernel yet
    computer.compositor.prepare([scheduled])
    loop_nest = computer.compositor.kernel_loop_nest(scheduled)
    assert "parallel" not in loop_nest and "vectorized" in loop_nest


def test_coordinate_scalars_are_the_params_a_coordinate_can_depend_on() -> None:
    image = pw.ImageParam(pw.Float(32), 1, "image")
    offset, gain, scale = (
        pw.Param(pw.Int(32), "offset", 1),
        pw.Param(pw.Float(32), "gain", 2.0),
        pw.Param(pw.Int(32), "scale", 3),
    )
    x = pw.Var("x")
    index = pw.Func("index")
    index[x] = x * scale  # its values are coordinates of `looked_up`
    looked_up = pw.Func("looked_up")
    looked_up[x] = image[pw.clamp(index[x], 0, 99)] * gain + image[x + offset]
    assert coordinate_scalars(pw.Pipeline([looked_up])) == {"offset", "scale"}


def test_regions_are_remembered_across_edits_of_values_no_coordinate_reads() -> None:
    session = EditSession()
    session.add_node("image_input", (0, 0), {"sample": "camera.png", "element": "f32", "layout": "gray"})
    session.add_node("crop", (200, 0), {"x": 8, "y": 4, "width": 40, "height": 30})
    session.add_node("gamma", (400, 0))
    session.add_node("output", (600, 0))
    session.connect("image_input", "out", "crop", "image")
    session.connect("crop", "out", "gamma", "image")
    session.connect("gamma", "out", "output", "image")
    computer = PreviewComputer()
    regions = computer.compositor.regions
    computer.compute(session.document, "output", scale=SCALE)
    assert regions.computed == 1
    session.set_param("gamma", "gamma", 1.7)  # a value: the regions are known
    gamma_edit = computer.compute(session.document, "output", scale=SCALE)
    assert regions.computed == 1 and gamma_edit.runs >= 1
    np.testing.assert_array_equal(gamma_edit.array, _fused(session, computer))
    session.set_param("crop", "x", 20)  # a coordinate: the regions are inferred again
    crop_edit = computer.compute(session.document, "output", scale=SCALE)
    assert regions.computed == 2 and crop_edit.compiles == 0
    np.testing.assert_array_equal(crop_edit.array, _fused(session, computer))
    assert not np.array_equal(crop_edit.array, gamma_edit.array)


def test_a_structural_edit_runs_a_quick_kernel_first_and_the_scheduled_one_after(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PIXELWEAVE_CACHE_DIR", str(tmp_path))  # nothing compiled yet
    monkeypatch.setattr(compositor_module, "UPGRADE_PAUSE", 1.5)  # seconds without a picture
    clear_memory_cache()
    session = blur_gamma_session()
    session.set_schedule("box_blur", {"out": [["compute_root"], ["vectorize", "x", 8]]})
    computer = PreviewComputer()
    compositor = computer.compositor

    def blur_loop_nest() -> str:
        graph, _ = compositor.built_graph(session.document, "output")
        return compositor.kernel_loop_nest(graph.nodes["box_blur"].outputs["out"].func) or ""

    computer.compute(session.document, "output", scale=SCALE)
    assert compositor.stats.upgrades == 0 and "vectorized" in blur_loop_nest()  # an opening: scheduled at once

    session.set_param("box_blur", "radius", 3)
    edited = computer.compute(session.document, "output", scale=SCALE)
    assert edited.compiles == 1 and "parallel" in blur_loop_nest() and "vectorized" not in blur_loop_nest()
    np.testing.assert_array_equal(edited.array, _fused(session, computer))
    session.set_param("gamma", "gamma", 1.4)  # editing goes on: the scheduled kernel waits for a pause
    assert computer.compute(session.document, "output", scale=SCALE).compiles == 0
    assert compositor.stats.upgrades == 0 and "vectorized" not in blur_loop_nest()

    compositor.finish_background()
    assert compositor.stats.upgrades == 1 and "vectorized" in blur_loop_nest()
    session.set_param("gamma", "gamma", 1.6)  # the scheduled kernel computes the next edits
    again = computer.compute(session.document, "output", scale=SCALE)
    assert again.compiles == 0
    np.testing.assert_array_equal(again.array, _fused(session, computer))


def test_the_quick_kernel_is_refused_to_stages_vector_code_computes_differently(tmp_path, monkeypatch) -> None:
    """exp, log, pow... of float vectors are computed within an ulp of libm's: a stage that
    calls them waits for its scheduled kernel, whose image the fused pipeline's matches."""
    monkeypatch.setenv("PIXELWEAVE_CACHE_DIR", str(tmp_path))
    clear_memory_cache()
    session = blur_gamma_session()
    session.set_schedule("gamma", {"out": [["compute_root"], ["vectorize", "x", 8]]})
    computer = PreviewComputer()
    computer.compute(session.document, "output", scale=SCALE)
    session.set_schedule("gamma", {"out": [["compute_root"], ["vectorize", "x", 4]]})  # a new kernel for a pow() stage
    session.set_param("gamma", "gamma", 1.3)
    edited = computer.compute(session.document, "output", scale=SCALE)
    graph, _ = computer.compositor.built_graph(session.document, "output")
    assert edited.compiles == 1
    assert "vectorized" in computer.compositor.kernel_loop_nest(graph.nodes["gamma"].outputs["out"].func)
    np.testing.assert_array_equal(edited.array, _fused(session, computer))
