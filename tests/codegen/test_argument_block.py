"""The packed argument block of a compiled pipeline's call (runtime/argument_block.py) and the
plain-arguments path of `Compiled.__call__`: the fast path writes exactly the descriptors the
general path (`describe_array`, `scalar_argument`) writes, and a wrong array or value is
still refused with its message after calls that went the fast way."""

from __future__ import annotations

import ctypes
import threading

import numpy as np
import pytest
from pixelweave.engine.errors import InputError
from pixelweave.engine.ir.types import Bool, Float, Int, UInt
from pixelweave.engine.reference import realize_reference
from pixelweave.engine.runtime.argument_block import ArgumentBlock
from pixelweave.engine.runtime.buffer import BufferStruct, DimensionStruct, describe_array, scalar_argument
from pixelweave.engine.runtime.jit import compile_pipeline

import pixelweave as pw
from tests.codegen.builders import buffer, scalar
from tests.codegen.test_memory import two_d_pipeline


def _descriptor_bytes(address: int, dimensions: int) -> tuple[bytes, bytes, int]:
    """(the pw_buffer_t's fields but its host and dim pointers, its dimensions' bytes, its host pointer)."""
    struct = BufferStruct.from_address(address)
    head = ctypes.string_at(
        address + BufferStruct.type_code.offset, BufferStruct.dim.offset - BufferStruct.type_code.offset
    )
    dims = ctypes.string_at(ctypes.addressof(struct.dim.contents), ctypes.sizeof(DimensionStruct) * dimensions)
    return head, dims, struct.host


ARRAYS = [
    (np.arange(12, dtype=np.uint8).reshape(3, 4), UInt(8), None),
    (np.zeros((1, 7), np.uint16), UInt(16), [3, -2]),  # an axis of extent 1
    (np.arange(20, dtype=np.int16).reshape(4, 5), Int(16), [0, 0]),  # 2-D at the origin: the shortest path
    (np.zeros((3, 2), np.uint8), UInt(8), [0, 1]),  # 2-D, not at the origin
    (np.zeros((5, 1), np.int32), Int(32), None),
    (np.zeros((2, 3, 4), np.float32), Float(32), [1, 2, 3]),
    (np.zeros(9, np.float64), Float(64), [-4]),
    (np.zeros((4, 6), np.bool_), Bool(), None),
    (np.zeros((6, 10), np.int16)[:, 2:7], Int(16), None),  # a strided view: the general path
    (np.zeros((6, 10), np.uint8)[::-1], UInt(8), None),  # copied by the general path
    (np.zeros((0, 4), np.uint8), UInt(8), None),  # empty: the general path
]


@pytest.mark.parametrize("array, elem, mins", ARRAYS)
def test_packed_descriptor_is_describe_arrays(array: np.ndarray, elem, mins) -> None:
    dims = array.ndim
    block_layout = ArgumentBlock([buffer("a", elem, dims), scalar("s", Int(32))])
    block, keep = block_layout.pack({"a": array, "s": 5}, {"a": mins} if mins else None)
    argv = (ctypes.c_void_p * 2).from_buffer(block)
    expected = describe_array(array, name="a", type=elem, dimensions=dims, mins=mins)
    got = _descriptor_bytes(argv[0], dims)
    want = _descriptor_bytes(expected.address, dims)
    assert got[:2] == want[:2]
    copied = expected.array is not array
    assert (got[2] == array.ctypes.data) == (not copied)
    assert ctypes.c_int32.from_address(argv[1]).value == 5
    del keep


@pytest.mark.parametrize(
    "elem, value",
    [(Int(8), -7), (UInt(16), 65535), (Int(64), -(2**40)), (UInt(64), 2**64 - 1), (Float(32), 0.1), (Bool(), True),
     (Float(64), np.float64(2.5)), (Int(32), np.int16(-3))],
)  # fmt: skip
def test_packed_scalars_are_scalar_arguments(elem, value) -> None:
    block, _ = ArgumentBlock([scalar("s", elem)]).pack({"s": value})
    address = ctypes.c_void_p.from_buffer(block).value
    expected = scalar_argument("s", elem, value)
    assert ctypes.string_at(address, ctypes.sizeof(expected)) == bytes(expected)


def test_scalars_out_of_their_type_are_refused() -> None:
    block = ArgumentBlock([scalar("s", UInt(8)), scalar("f", Float(32))])
    block.pack({"s": 255, "f": 1})
    for value in (256, -1, 2**70, 1.5, "3"):
        with pytest.raises(InputError, match="parameter `s`"):
            block.pack({"s": value, "f": 1.0})
    with pytest.raises(InputError, match="parameter `f`"):
        block.pack({"s": 1, "f": "x"})


def test_wrong_arrays_are_refused_after_fast_calls(rng) -> None:
    fn = compile_pipeline(two_d_pipeline(False))
    inp = rng.standard_normal((6, 8)).astype(np.float32)
    out = np.zeros((6, 8), np.float32)
    for _ in range(3):
        fn({"inp": inp}, {"out": out})
    np.testing.assert_array_equal(out, inp * 2 + np.arange(6, dtype=np.float32)[:, None])
    with pytest.raises(InputError, match=r"element type float32 .* dtype float64"):
        fn({"inp": inp.astype(np.float64)}, {"out": out})
    with pytest.raises(InputError, match="has 2 dimensions, but the array given has 1"):
        fn({"inp": inp.ravel()}, {"out": out})
    with pytest.raises(InputError, match="needs a NumPy array, got list"):
        fn({"inp": inp.tolist()}, {"out": out})
    read_only = np.zeros((6, 8), np.float32)
    read_only.flags.writeable = False
    with pytest.raises(InputError, match="read-only"):
        fn({"inp": inp}, {"out": read_only})
    with pytest.raises(InputError, match="does not fit in 32 bits"):
        fn({"inp": inp}, {"out": out}, mins={"out": (0, 2**31 - 3)})
    with pytest.raises(InputError, match="no value given for output `out`"):
        fn({"inp": inp}, {})
    out[:] = 0
    fn({"inp": inp[::-1]}, {"out": out})  # a reversed input is still copied
    np.testing.assert_array_equal(out, inp[::-1] * 2 + np.arange(6, dtype=np.float32)[:, None])


def test_concurrent_calls_use_their_own_arrays(rng) -> None:
    fn = compile_pipeline(two_d_pipeline(True))
    inputs = [rng.standard_normal((16, 64)).astype(np.float32) for _ in range(4)]
    outputs = [np.zeros((16, 64), np.float32) for _ in inputs]

    def run(k: int) -> None:
        for _ in range(50):
            fn({"inp": inputs[k]}, {"out": outputs[k]})

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows = np.arange(16, dtype=np.float32)[:, None]
    for inp, out in zip(inputs, outputs, strict=True):
        np.testing.assert_array_equal(out, inp * 2 + rows)


def _gain_pipeline() -> tuple[pw.Pipeline, pw.ImageParam, pw.Param]:
    image = pw.ImageParam(pw.UInt(8), 2, "image")
    gain = pw.Param(pw.Int(32), "gain", 3)
    gain.set_range(0, 10)
    x, y = pw.Var("x"), pw.Var("y")
    f = pw.Func("scaled")
    f[x, y] = pw.cast(pw.Int(32), image[x, y]) * gain + x - y
    return pw.Pipeline(f), image, gain


def test_compiled_call_checks_every_call(rng) -> None:
    """Calls that take the plain-arguments path still refuse what resolve_inputs refuses,
    and a Buffer with mins (the general path) gives the reference's values."""
    pipeline, image, gain = _gain_pipeline()
    fn = pipeline.compile()
    data = rng.integers(0, 256, (5, 7), dtype=np.uint8)
    out = np.zeros((5, 7), np.int32)
    for g in (0, 4, 10):
        fn([7, 5], {"image": data, "gain": g}, out=out)
        np.testing.assert_array_equal(out, realize_reference(pipeline, [7, 5], {"image": data, "gain": g}))
    fn([7, 5], {"image": data}, out=out)  # gain's default
    np.testing.assert_array_equal(out, realize_reference(pipeline, [7, 5], {"image": data, "gain": 3}))
    with pytest.raises(InputError, match="does not fit its type"):
        fn([7, 5], {"image": data, "gain": 2**40}, out=out)
    with pytest.raises(InputError, match="must be at most 10"):
        fn([7, 5], {"image": data, "gain": 11}, out=out)
    with pytest.raises(InputError, match="element type uint8"):
        fn([7, 5], {"image": data.astype(np.int8), "gain": 1}, out=out)
    with pytest.raises(InputError, match="`nope` is not an input"):
        fn([7, 5], {"image": data, "nope": 1}, out=out)
    with pytest.raises(InputError, match="no array given for input image `image`"):
        fn([7, 5], {"gain": 1}, out=out)
    image.dim(0).set_min(1)  # a constraint added after compiling is checked on the next call
    with pytest.raises(InputError, match="constrained to min 1"):
        fn([7, 5], {"image": data, "gain": 1}, out=out)
    shifted = pw.Buffer(data)
    shifted.set_min([1, 0])
    result = fn([6, 5], {"image": shifted, "gain": 2}, mins=[1, 0])
    np.testing.assert_array_equal(
        result, realize_reference(pipeline, [6, 5], {"image": shifted, "gain": 2}, mins=[1, 0])
    )


def test_the_common_call_refuses_what_the_general_path_refuses(rng) -> None:
    """`fn(sizes, inputs, out=array)` with plain arguments takes Compiled's one-pass path;
    anything unusual about the sizes or the out= array falls back to the general path and
    its messages, and both write the same values into the array they return."""
    pipeline, _, _ = _gain_pipeline()
    fn = pipeline.compile()
    data = rng.integers(0, 256, (5, 7), dtype=np.uint8)
    inputs = {"image": data, "gain": 4}
    out = np.zeros((5, 7), np.int32)
    assert fn([7, 5], inputs, out=out) is out
    expected = realize_reference(pipeline, [7, 5], inputs)
    np.testing.assert_array_equal(out, expected)
    general = np.zeros((5, 7), np.int32)
    assert fn((np.int64(7), 5), inputs, out=general) is general  # not a list of ints: the general path
    np.testing.assert_array_equal(general, expected)
    with pytest.raises(InputError, match="must have shape"):
        fn([7, 5], inputs, out=np.zeros((4, 7), np.int32))
    with pytest.raises(InputError, match="dtype int32"):
        fn([7, 5], inputs, out=np.zeros((5, 7), np.int64))
    read_only = np.zeros((5, 7), np.int32)
    read_only.flags.writeable = False
    with pytest.raises(InputError, match="read-only"):
        fn([7, 5], inputs, out=read_only)
    with pytest.raises(InputError, match="negative"):
        fn([-7, 5], inputs, out=out)
    with pytest.raises(InputError, match="2 dimensions, but 1 size was given"):
        fn([7], inputs, out=out)


@pytest.mark.parametrize("array, elem, mins", [a for a in ARRAYS if a[2] is None])
def test_in_order_packing_is_packs_or_declines(array: np.ndarray, elem, mins) -> None:
    """pack_in_order writes what pack writes (a read-only input's pointer taken the slow way
    too), or declines, raising nothing, where pack takes its general path."""
    layout = ArgumentBlock([buffer("a", elem, array.ndim), scalar("s", Int(32))])
    for value in (array, _read_only(array)):
        packed = layout.pack_in_order([value, 5])
        block, keep = layout.pack({"a": value, "s": 5})
        if packed is None:
            assert keep[0] is not value  # pack described a copy (or refused nothing): its general path
            continue
        argv = (ctypes.c_void_p * 2).from_buffer(packed[0])
        want = (ctypes.c_void_p * 2).from_buffer(block)
        assert _descriptor_bytes(argv[0], array.ndim) == _descriptor_bytes(want[0], array.ndim)
        assert _descriptor_bytes(argv[0], array.ndim)[2] == array.ctypes.data
        assert ctypes.c_int32.from_address(argv[1]).value == 5


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


def test_in_order_packing_declines_what_pack_checks() -> None:
    layout = ArgumentBlock([buffer("a", UInt(8), 2), scalar("s", UInt(8)), scalar("f", Float(32))])
    a = np.zeros((3, 4), np.uint8)
    assert layout.pack_in_order([a, 255, 1.5]) is not None
    for values in ([a, 256, 1.5], [a, -1, 1.5], [a, 1, 2], [a, True, 1.5], [a.astype(np.int8), 1, 1.5],
                   [a.tolist(), 1, 1.5], [a[:, ::2], 1, 1.5], [a, np.uint8(1), 1.5], [a, 1]):  # fmt: skip
        assert layout.pack_in_order(values) is None, values


def test_compiled_call_in_order_checks_what_changed_after_compiling(rng, monkeypatch) -> None:
    """The one-pass call (Compiled._call_in_order) runs the common call, reads a Param's
    range and an ImageParam's constraints at every call (a range set after compiling
    refuses the next call with its message), and leaves anything else to the general path."""
    from pixelweave.engine.compiled import Compiled

    pipeline, image, gain = _gain_pipeline()
    fn = pipeline.compile()
    data = rng.integers(0, 256, (5, 7), dtype=np.uint8)
    out = np.zeros((5, 7), np.int32)
    ran = []
    original = Compiled._call_in_order
    monkeypatch.setattr(Compiled, "_call_in_order", lambda self, *a: ran.append(original(self, *a)) or ran[-1])
    fn([7, 5], {"image": data, "gain": 4}, out=out)
    np.testing.assert_array_equal(out, realize_reference(pipeline, [7, 5], {"image": data, "gain": 4}))
    fresh = fn([7, 5], {"image": data, "gain": 2})
    np.testing.assert_array_equal(fresh, realize_reference(pipeline, [7, 5], {"image": data, "gain": 2}))
    assert ran == [True, True]
    gain.set_range(0, 3)
    with pytest.raises(InputError, match="must be at most 3"):
        fn([7, 5], {"image": data, "gain": 4}, out=out)
    fn([7, 5], {"image": data, "gain": np.int32(3)}, out=out)  # converted by the general path
    np.testing.assert_array_equal(out, realize_reference(pipeline, [7, 5], {"image": data, "gain": 3}))
    assert ran[-2:] == [False, False]
    with pytest.raises(InputError, match="out= for output `scaled` must have shape"):
        fn([7, 5], {"image": data, "gain": 1}, out=np.zeros((5, 6), np.int32))
    with pytest.raises(InputError, match=r"must have shape .* and dtype int32"):
        fn([7, 5], {"image": data, "gain": 1}, out=np.zeros((5, 7), np.int16))


def test_reused_blocks_give_each_call_its_own_values_failures_and_profile(rng) -> None:
    """call_in_order reuses a finished call's block (its arguments and its context): each
    call still sees its own arrays and scalars, a failure's message is that call's, the
    call after a failure runs, and a profile build's counters are each call's own."""
    pipeline, image, gain = _gain_pipeline()
    fn = pipeline.compile()
    for g, shape in [(1, (5, 7)), (9, (3, 4)), (2, (5, 7)), (0, (1, 1))]:
        data = rng.integers(0, 256, shape, dtype=np.uint8)
        out = np.full(shape, -5, np.int32)
        sizes = [shape[1], shape[0]]
        fn(sizes, {"image": data, "gain": g}, out=out)
        np.testing.assert_array_equal(out, realize_reference(pipeline, sizes, {"image": data, "gain": g}))
    assert len(fn.native._spare_blocks) == 1  # one block, reused by every call
    x = pw.Var("x")
    inp = pw.ImageParam(pw.UInt(8), 1, "inp")
    f = pw.Func("shifted")
    f[x] = inp[x + 3]
    shifted = pw.Pipeline(f).compile()
    a = np.arange(10, dtype=np.uint8)
    np.testing.assert_array_equal(shifted([7], {"inp": a}, out=np.zeros(7, np.uint8)), a[3:])
    with pytest.raises(pw.RuntimeFailure, match="read at x = 10"):
        shifted([8], {"inp": a}, out=np.zeros(8, np.uint8))
    with pytest.raises(pw.RuntimeFailure, match="read at x = 11"):
        shifted([9], {"inp": a}, out=np.zeros(9, np.uint8))
    np.testing.assert_array_equal(shifted([2], {"inp": a}, out=np.zeros(2, np.uint8)), a[3:5])
    profiled = pipeline.compile(profile=True)
    big = rng.integers(0, 256, (300, 400), dtype=np.uint8)
    big_out = np.zeros((300, 400), np.int32)
    profiled([400, 300], {"image": big, "gain": 2}, out=big_out)
    first = profiled.last_profile["scaled"]
    for _ in range(5):
        profiled([2, 1], {"image": big[:1, :2], "gain": 2}, out=big_out[:1, :2].copy())
    assert 0 < profiled.last_profile["scaled"] < first  # not the sum of the calls


def test_calls_from_several_threads_never_share_a_block(rng) -> None:
    pipeline, image, gain = _gain_pipeline()
    fn = pipeline.compile()
    datas = [rng.integers(0, 256, (40, 30), dtype=np.uint8) for _ in range(4)]
    outs = [[np.zeros((40, 30), np.int32) for _ in range(60)] for _ in datas]

    def run(k: int) -> None:
        for i, out in enumerate(outs[k]):
            fn([30, 40], {"image": datas[k], "gain": (k + i) % 11}, out=out)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(datas))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, data in enumerate(datas):
        for i, out in enumerate(outs[k]):
            want = realize_reference(pipeline, [30, 40], {"image": data, "gain": (k + i) % 11})
            np.testing.assert_array_equal(out, want)
