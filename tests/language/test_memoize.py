"""Func.memoize(eviction_key) against Halide 21: a memoized Func's values are kept across
realizations and reused when its key (its Params, its region, its inputs' contents) comes
back, never when anything that decides its values changed; the cache keeps to its size
limit, eviction keys remove entries, and what Halide refuses is refused."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import pixelweave as pw
from tests.language.halide_compare import assert_same


@pytest.fixture(autouse=True)
def empty_cache():
    pw.memoization_cache_cleanup()
    pw.memoization_cache_set_size(0)
    yield
    pw.memoization_cache_cleanup()
    pw.memoization_cache_set_size(0)


class StoreCounter:
    """Counts the values stored into traced Funcs while realizing (trace_stores events)."""

    def __init__(self) -> None:
        self.events: list[pw.TraceEvent] = []

    def __enter__(self) -> StoreCounter:
        pw.set_trace_handler(self.events.append)
        return self

    def __exit__(self, *exc) -> None:
        pw.set_trace_handler(None)

    def stores(self, func: str) -> int:
        return sum(1 for e in self.events if e.event == "store" and e.func == func)


def blur(m, *, traced: bool = False, schedule: str = "root"):
    x, y = m.Var("x"), m.Var("y")
    p = m.Param(m.Int(32), "p", 1)
    unused = m.Param(m.Int(32), "unused", 0)
    f = m.Func("f")
    f[x, y] = x * 10 + y * p
    out = m.Func("out")
    out[x, y] = f[x, y] + f[x + 1, y] + unused
    if schedule == "root":
        f.compute_root().memoize()
    elif schedule == "at_y":
        f.compute_at(out, y).memoize()
    elif schedule == "parallel":
        f.compute_at(out, y).memoize()
        out.parallel(y)
    if traced:
        f.trace_stores()
    return {"out": out, "f": f, "p": p, "unused": unused}


def test_memoized_values_are_halides_for_every_param_value_and_back():
    theirs_funcs, ours_funcs = blur(__import__("halide")), blur(pw)
    for value in (1, 2, 1, 5, 2):
        theirs_funcs["p"].set(value)
        ours_funcs["p"].set(value)
        theirs = np.asarray(theirs_funcs["out"].realize([6, 4])).copy()
        ours = np.asarray(ours_funcs["out"].realize([6, 4]))
        assert_same([ours], [theirs])
        reference = pw.Pipeline(ours_funcs["out"]).realize_reference([6, 4], inputs={"p": value})
        np.testing.assert_array_equal(ours, reference)


@pytest.mark.parametrize("schedule", ["root", "at_y", "parallel"])
def test_a_hit_does_not_compute_the_func_and_a_changed_param_does(schedule):
    funcs = blur(pw, traced=True, schedule=schedule)
    pipeline = pw.Pipeline(funcs["out"])
    counts, results = [], []
    for value in (1, 2, 1, 2):
        funcs["p"].set(value)
        with StoreCounter() as counter:
            results.append(np.asarray(pipeline.realize([7, 5])).copy())
        counts.append(counter.stores("f"))
    assert counts[0] == counts[1] == 8 * 5 and counts[2] == counts[3] == 0
    np.testing.assert_array_equal(results[0], results[2])
    np.testing.assert_array_equal(results[1], results[3])
    assert not np.array_equal(results[0], results[1])


def test_a_param_the_func_does_not_depend_on_keeps_the_hit():
    funcs = blur(pw, traced=True)
    with StoreCounter() as counter:
        funcs["out"].realize([4, 4])
        first = counter.stores("f")
        funcs["unused"].set(7)
        result = np.asarray(funcs["out"].realize([4, 4]))
    assert first == 20 and counter.stores("f") == 20
    np.testing.assert_array_equal(result, pw.Pipeline(funcs["out"]).realize_reference([4, 4], {"unused": 7}))


def test_a_larger_region_is_computed_not_taken_from_a_smaller_one():
    funcs = blur(pw, traced=True)
    with StoreCounter() as counter:
        small = np.asarray(funcs["out"].realize([3, 2])).copy()
        large = np.asarray(funcs["out"].realize([6, 4]))
    assert counter.stores("f") == 4 * 2 + 7 * 4
    np.testing.assert_array_equal(large[:2, :3], small)
    np.testing.assert_array_equal(large, pw.Pipeline(funcs["out"]).realize_reference([6, 4]))


@pytest.mark.parametrize("passed", ["set", "inputs"])
def test_an_input_changed_in_place_is_computed_again(passed):
    # Halide refuses an ImageParam here (and keys a Buffer by nothing, so an array changed
    # in place would bring back stale values); Pixelweave keys the input by its contents.
    x = pw.Var("x")
    data = np.arange(8, dtype=np.int32)
    source = pw.ImageParam(pw.Int(32), 1, "source")
    f = pw.Func("f")
    f[x] = source[x] * 2
    f.compute_root().memoize().trace_stores()
    out = pw.Func("out")
    out[x] = f[x] + 1
    pipeline = pw.Pipeline(out)
    if passed == "set":
        source.set(data)

    def run() -> list[int]:
        return list(np.asarray(pipeline.realize([4], inputs={"source": data} if passed == "inputs" else None)))

    with StoreCounter() as counter:
        assert run() == [1, 3, 5, 7]
        assert run() == [1, 3, 5, 7]
        assert counter.stores("f") == 4
        data[:] = 100
        assert run() == [201] * 4
        assert counter.stores("f") == 8
        data[6] = 0  # outside what f reads, inside the input: computed again, never stale
        assert run() == [201] * 4


def test_a_func_that_reads_a_memoized_producer_through_another_func_keys_its_params():
    x = pw.Var("x")
    p = pw.Param(pw.Int(32), "p", 1)
    g = pw.Func("g")
    g[x] = x + p
    g.compute_root()
    f = pw.Func("f")
    f[x] = g[x] * 3
    f.compute_root().memoize()
    out = pw.Func("out")
    out[x] = f[x]
    for value in (1, 4, 1):
        p.set(value)
        assert list(np.asarray(out.realize([3]))) == [(i + value) * 3 for i in range(3)]


def test_tuple_and_update_definitions_are_memoized_as_halide_computes_them():
    import halide as hl

    def build(m):
        x = m.Var("x")
        p = m.Param(m.Int(32), "p", 2)
        r = m.RDom([(0, 3)])
        f = m.Func("f")
        f[x] = m.Tuple([x * p, x + p])
        f[x] = m.Tuple([f[x][0] + r.x, f[x][1] * 2])
        f.compute_root().memoize()
        out = m.Func("out")
        out[x] = f[x][0] + f[x][1]
        return {"out": out, "p": p}

    theirs, ours = build(hl), build(pw)
    for value in (2, 3, 2):
        theirs["p"].set(value)
        ours["p"].set(value)
        assert_same([np.asarray(ours["out"].realize([5]))], [np.asarray(theirs["out"].realize([5])).copy()])


def test_the_size_limit_evicts_least_recently_used_entries():
    funcs = blur(pw, traced=True)
    entry_bytes = 5 * 4 * 4  # f over 5 x 4 int32 values
    pw.memoization_cache_set_size(entry_bytes)
    with StoreCounter() as counter:
        for value in (1, 2, 2, 1):
            funcs["p"].set(value)
            funcs["out"].realize([4, 4])
    # 1 is stored, then evicted by 2; 2 is a hit; 1 is computed again
    assert counter.stores("f") == 3 * 20
    pw.memoization_cache_set_size(2 * entry_bytes)
    with StoreCounter() as counter:
        for value in (2, 1, 2, 1):
            funcs["p"].set(value)
            funcs["out"].realize([4, 4])
    assert counter.stores("f") == 20  # only 2 was gone (evicted when 1 came back)


def test_an_eviction_key_removes_only_its_entries():
    funcs = blur(pw, traced=True, schedule="none")
    key = pw.Param(pw.Int(32), "key", 3)
    funcs["f"].compute_root().memoize(pw.EvictionKey(key))
    with StoreCounter() as counter:
        funcs["out"].realize([4, 4])
        pw.memoization_cache_evict(4)
        funcs["out"].realize([4, 4])
        assert counter.stores("f") == 20
        pw.memoization_cache_evict(3)
        result = np.asarray(funcs["out"].realize([4, 4]))
        assert counter.stores("f") == 40
    np.testing.assert_array_equal(result, pw.Pipeline(funcs["out"]).realize_reference([4, 4]))


def test_a_negative_eviction_key_is_the_uint64_halide_makes_of_it():
    funcs = blur(pw, traced=True, schedule="none")
    funcs["f"].compute_root().memoize(-1)
    with StoreCounter() as counter:
        funcs["out"].realize([4, 4])
        pw.memoization_cache_evict((1 << 64) - 1)
        funcs["out"].realize([4, 4])
    assert counter.stores("f") == 40


def test_pipelines_on_several_threads_share_the_cache_safely():
    funcs = blur(pw, schedule="parallel")
    pipeline = pw.Pipeline(funcs["out"])
    fn = pipeline.compile()
    expected = pipeline.realize_reference([64, 32])
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(10):
                np.testing.assert_array_equal(fn([64, 32]), expected)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def _refused(schedule, match: str, error=pw.ScheduleError) -> None:
    funcs = blur(pw, schedule="none")
    with pytest.raises(error, match=match):
        schedule(funcs)
        pw.Pipeline(funcs["out"]).compile()


def test_what_halide_refuses_is_refused():
    _refused(lambda fs: fs["out"].memoize(), "`out` cannot be memoized because it is an output of the pipeline")
    _refused(lambda fs: fs["f"].memoize(), "`f` cannot be memoized because it is computed inline")
    _refused(
        lambda fs: fs["f"].compute_at(fs["out"], pw.Var("y")).store_root().memoize(),
        "storage .* and its computation .* are scheduled at different loop levels",
    )
    _refused(lambda fs: fs["f"].compute_root().memoize(pw.EvictionKey(pw.f32(1.5))), "floating-point eviction key")
    _refused(
        lambda fs: fs["f"].compute_root().memoize(pw.EvictionKey(1)).memoize(pw.EvictionKey(2)),
        "can't redefine the eviction key",
    )
    _refused(lambda fs: fs["f"].compute_root().memoize(pw.Var("x")), "eviction key .* uses `x`")


def test_a_func_computed_inside_a_vectorized_loop_is_refused():
    def schedule(fs):
        x, xo, xi = pw.Var("x"), pw.Var("xo"), pw.Var("xi")
        fs["out"].split(x, xo, xi, 4).vectorize(xi)
        fs["f"].compute_at(fs["out"], xi).memoize()

    _refused(schedule, "inside loop out.xi of `out`, which is vectorized")
    # the fuzzer counts a refusal that does not say what is legal as a failure
    _refused(schedule, "compute it at another loop or at the root, or remove the memoize")


def test_the_same_eviction_key_twice_is_accepted():
    funcs = blur(pw, schedule="none")
    funcs["f"].compute_root().memoize(pw.EvictionKey(5)).memoize(pw.EvictionKey(5))
    np.testing.assert_array_equal(
        pw.Pipeline(funcs["out"]).realize([3, 3]), pw.Pipeline(funcs["out"]).realize_reference([3, 3])
    )


def test_exporting_a_memoized_pipeline_is_refused(tmp_path):
    funcs = blur(pw)
    with pytest.raises(pw.CompileError, match=r"memoizes a Func .* remove the memoize"):
        pw.Pipeline(funcs["out"]).compile_to_library("memoized", str(tmp_path))
    with pytest.raises(pw.CompileError, match="memoizes a Func"):
        funcs["out"].compile_to_static_library(str(tmp_path / "memoized"), [funcs["p"], funcs["unused"]], "memoized")


def test_a_func_memoized_inside_a_parallel_loop_that_reads_an_input_through_another_func():
    """Its key hashes the input, which nothing else in the parallel loop's body reads: the
    loop's closure must carry that buffer too (found by the schedule fuzzer)."""
    x, y = pw.Var("x"), pw.Var("y")
    image = pw.ImageParam(pw.UInt(16), 2, "image")
    h, g, out = pw.Func("h"), pw.Func("g"), pw.Func("out")
    h[x, y] = image[x, y] + 3
    g[x, y] = h[x, y] + 1
    out[x, y] = g[x, y] * 2
    h.compute_root()
    out.parallel(y)
    g.compute_at(out, y).memoize()
    pipeline = pw.Pipeline(out)
    fn = pipeline.compile()
    data = np.arange(30, dtype=np.uint16).reshape(5, 6)
    for changed in (0, 0, 7):  # again from the cache, then a changed input
        inputs = {"image": data + changed}
        np.testing.assert_array_equal(fn([6, 5], inputs), pipeline.realize_reference([6, 5], inputs))
