"""The editor's target selector: the host CPU and each usable OpenCL device (the pocl CPU
device here). Choosing OpenCL makes the schedule panel edit the OpenCL schedules with its GPU
mapping controls live, and the preview, loop nest and benchmark follow; edits are undoable."""

import numpy as np
from pixelweave.app.editor.main_window import EXAMPLES
from pixelweave.nodes.targets import target_choices
from PySide6 import QtCore

LEFT = QtCore.Qt.MouseButton.LeftButton


def assert_same_picture(gpu: np.ndarray, cpu: np.ndarray) -> None:
    """Equal, but for one level on a few pixels: compiled CPU code fuses multiply-adds, the
    OpenCL kernels do not (they equal the reference evaluator, tests/nodes/test_examples_opencl.py)."""
    assert gpu.shape == cpu.shape and gpu.dtype == cpu.dtype
    diff = np.abs(gpu.astype(np.int64) - cpu.astype(np.int64))
    assert diff.max() <= 1 and np.count_nonzero(diff) <= diff.size // 1000


def test_the_selector_lists_the_host_and_the_opencl_device(window):
    labels = [window.target_combo.itemText(i) for i in range(window.target_combo.count())]
    assert labels[0] == "Host CPU" and len(labels) >= 2
    assert all(label.startswith("OpenCL ") for label in labels[1:])
    assert [c.target for c in target_choices()][:2] == ["host", "opencl"]


def test_choose_opencl_edit_a_gpu_directive_and_undo(window, qtbot):
    window.open_example(EXAMPLES / "blur.json")
    assert window.wait_idle()
    window.canvas.select(["result"])
    assert window.wait_idle()
    cpu_picture = window.preview.current_array().copy()
    assert "gpu_block" not in window.loop_nest_text()
    assert not window.schedule.gpu_button.isEnabled()

    window.set_target("opencl")
    assert window.wait_idle(120_000)
    assert window.schedule.title.text() == "OpenCL schedule of `result`"
    assert window.schedule.schedule == {"out": [["gpu_tile", "x", "y", "xo", "yo", "xi", "yi", 16, 16]]}
    assert "gpu_block" in window.loop_nest_text() and "gpu_thread" in window.loop_nest_text()
    assert_same_picture(window.preview.current_array(), cpu_picture)

    # remove the example's GPU mapping, then map the output again through the panel's controls
    window.session.set_schedule("blur", {}, "opencl")
    window.session.set_schedule("result", {}, "opencl")
    assert window.wait_idle(120_000)
    assert window.inspection.ok and "gpu_block" not in window.loop_nest_text()
    window.schedule.func_combo.setCurrentText("out")
    window.schedule.gpu_xsize.setValue(8)
    window.schedule.gpu_ysize.setValue(8)
    qtbot.mouseClick(window.schedule.gpu_button, LEFT)
    assert window.wait_idle(120_000)
    node = window.session.document.node("result")
    assert node.schedules["opencl"] == {"out": [["gpu_tile", "x", "y", "bx", "by", "tx", "ty", 8, 8]]}
    assert node.schedule["out"][0] == ["split", "x", "xo", "xi", 64]  # the CPU schedule is untouched
    nest = window.loop_nest_text()
    assert "gpu_block y.by" in nest and "gpu_thread x.tx" in nest
    assert_same_picture(window.preview.current_array(), cpu_picture)
    assert window.session.undo_label() == "OpenCL schedule result"

    window.session_undo()
    assert window.wait_idle(120_000)
    assert window.session.document.node("result").schedules == {}
    assert "gpu_block" not in window.loop_nest_text()
    window.session_undo()
    window.session_undo()
    assert window.session.document.node("result").schedules["opencl"]["out"][0][0] == "gpu_tile"
    assert window.session.document.node("blur").schedules["opencl"]["blur_x"][1] == ["gpu_threads", "x", "y"]
    assert window.wait_idle(120_000)
    assert "gpu_thread y" in window.loop_nest_text()

    window.set_target("host")
    assert window.wait_idle(120_000)
    assert window.schedule.schedule == window.session.document.node("result").schedule
    assert "gpu_block" not in window.loop_nest_text()


def test_the_benchmark_follows_the_target(window, qtbot):
    window.open_example(EXAMPLES / "unsharp_mask.json")
    assert window.wait_idle()
    window.set_target("opencl")
    assert window.wait_idle(120_000)
    window.benchmark.runs.setValue(2)
    with qtbot.waitSignal(window.benchmark.finished, timeout=120_000) as blocker:
        window.run_benchmark()
    result = blocker.args[0]
    assert result.target == "opencl" and len(result.times) == 2 and result.per_node_ms == {}
    assert "gpu_block" in result.loop_nest
    assert (
        window.benchmark.history()[0].schedule
        == "OpenCL: sharpen.blur_x: compute_at, gpu_threads; result.out: gpu_tile"
    )
