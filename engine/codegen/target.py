"""Targets and optimization levels: which CPU the code is for and how hard LLVM works on it.

A `TargetSpec` names the triple, CPU and feature string; "host" detects them from the
running machine (AVX2/AVX-512 on x86, NEON on ARM), while "x86-64", "x86-64-v3" and
"x86-64-v4" give portable code for exported libraries. `compile_ir_to_object` parses,
verifies, optimizes and emits one module; the JIT and the library exporter share it.
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass

import llvmlite.binding as llvm
from pixelweave.engine.errors import CompileError

LEVELS = ("fast", "full")
PORTABLE_X86 = ("x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4")
TARGETS = ("host", *PORTABLE_X86)

_init_lock = threading.Lock()
_initialized = False


# LLVM command-line options set once per process, before any compile. The backend's loop
# strength reduction took 20-45 % of code generation (0.2 s of local Laplacian's 0.75 s,
# 46 % of a small stage kernel's) on the address arithmetic lowering emits, which is already
# linear in the loop variables; without it the apps of benchmarks/apps.py compute the same
# bytes at the same speed (run CPU time within the noise of the shared machine).
# Part of the object cache's key (engine/runtime/jit.py). LLVM's options are process-wide:
# another user of llvmlite in the same process (numba) compiles without it too.
#
# IR passes of level "full"'s pipeline that cost time and find nothing in the IR lowering
# emits (it is already simplified, hoisted and shared): skipped by LLVM's pass gate
# (-opt-disable, matched against the pipeline's pass names). Each one alone left the object
# code of unsharp, camera pipe, interpolate and local Laplacian byte-identical (together,
# local Laplacian's differs a little); with -O2 below, LLVM's optimization CPU fell 7-11 %
# on those and bilateral grid (optimization + code generation 4-9 %), and every app of
# benchmarks/apps.py computed the same bytes at the same speed (old and new alternating in
# one process, 15 runs each). Like every option here they apply to every LLVM pipeline in
# the process; indvars, constraint-elimination, licm and the vectorizers do find work (and
# skipping indvars made histogram equalization 10 % slower), so they run.
PASSES_THAT_FIND_NOTHING = (
    "aggressive-instcombine",
    "bdce",
    "callsite-splitting",
    "chr",
    "div-rem-pairs",
    "dse",
    "instsimplify",
    "loop-distribute",
    "loop-idiom",
    "loop-instsimplify",
    "loop-load-elim",
    "memcpyopt",
    "mldst-motion",
    "speculative-execution",
)
# LLVM exits the process on a command-line option it does not know, and the pass gate's
# option is recent: it is set only with the LLVM it was measured on (22, llvmlite 0.50) or later.
PASS_GATE_LLVM = (22,)
BACKEND_OPTIONS = ("-disable-lsr",) + (
    ("-opt-disable=" + ",".join(PASSES_THAT_FIND_NOTHING),) if tuple(llvm.llvm_version_info) >= PASS_GATE_LLVM else ()
)


def initialize_llvm() -> None:
    """Initialize LLVM's native target and BACKEND_OPTIONS once per process (llvm.initialize() now raises)."""
    global _initialized
    with _init_lock:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            llvm.initialize_native_asmparser()
            for option in BACKEND_OPTIONS:
                llvm.set_option("pixelweave", option)
            _initialized = True


# Features each portable x86-64 level guarantees (the ones that matter for code generation).
_LEVEL_FEATURES = {
    "x86-64": [],
    "x86-64-v2": ["popcnt", "sse4.2", "ssse3"],
    "x86-64-v3": ["popcnt", "sse4.2", "ssse3", "avx", "avx2", "bmi2", "fma", "f16c"],
    "x86-64-v4": ["popcnt", "sse4.2", "ssse3", "avx", "avx2", "bmi2", "fma", "f16c", "avx512f", "avx512bw",
                  "avx512dq", "avx512vl"],
}  # fmt: skip


@dataclass(frozen=True)
class TargetSpec:
    """What the code is generated for: triple, CPU name and LLVM feature string."""

    name: str
    triple: str
    cpu: str
    features: str

    @property
    def arch(self) -> str:
        return self.triple.split("-", 1)[0]

    def has_feature(self, feature: str) -> bool:
        """Whether the feature string enables feature (portable levels imply theirs)."""
        return f"+{feature}" in self.features.split(",") or feature in _LEVEL_FEATURES.get(self.cpu, [])

    def vector_bits(self) -> int:
        """The widest SIMD register of the target in bits (a hint for choosing lanes)."""
        if self.arch == "x86_64":
            if self.has_feature("avx512f"):
                return 512
            return 256 if self.has_feature("avx2") else 128
        return 128


def resolve_target(target: str = "host") -> TargetSpec:
    """The TargetSpec for a target name; CompileError naming the legal ones otherwise."""
    initialize_llvm()
    if target == "host":
        return TargetSpec(
            "host",
            llvm.get_process_triple(),
            llvm.get_host_cpu_name(),
            llvm.get_host_cpu_features().flatten(),
        )
    if target in PORTABLE_X86:
        triple = llvm.get_process_triple()
        if not triple.startswith("x86_64"):
            llvm.initialize_all_targets()
            llvm.initialize_all_asmprinters()
            triple = "x86_64-unknown-linux-gnu"
        return TargetSpec(target, triple, target, "")
    raise CompileError(f"unknown target `{target}`; legal targets are {', '.join(TARGETS)}, and opencl for GPUs")


def missing_host_features(spec: TargetSpec) -> list[str]:
    """CPU features code for spec needs that this machine lacks (it could not run it)."""
    if spec.name == "host":
        return []
    if not llvm.get_process_triple().startswith("x86_64"):
        return ["x86-64"]
    host = llvm.get_host_cpu_features()
    return [f for f in _LEVEL_FEATURES.get(spec.name, []) if not host.get(f, False)]


def check_level(level: str) -> None:
    if level not in LEVELS:
        raise CompileError(f"unknown optimization level `{level}`; legal levels are {', '.join(LEVELS)}")


# Backend (instruction selection, register allocation) level per optimization level.
# Measured with benchmarks/compile_latency.py and hand-lowered stencils (2 busy cores, so
# +-30%): backend O0 compiles ~3x faster than anything else but runs scalar (unvectorized)
# loops 2.5-3x slower; instcombine + simplifycfg + backend O2 compiles in about a third of
# O3's time and runs within ~10-30% of it (explicitly vectorized code: the same speed).
_BACKEND_OPT = {"fast": 2, "full": 3}


def create_target_machine(spec: TargetSpec, level: str, *, pic: bool = False, jit: bool = True) -> llvm.TargetMachine:
    """A TargetMachine for spec; `pic` for shared libraries, the large code model for the JIT."""
    initialize_llvm()
    check_level(level)
    target = llvm.Target.from_triple(spec.triple)
    return target.create_target_machine(
        cpu=spec.cpu,
        features=spec.features,
        opt=_BACKEND_OPT[level],
        reloc="pic" if pic else "default",
        codemodel="jitdefault" if jit else "default",
        jit=jit,
    )


@functools.cache
def data_layout(spec: TargetSpec) -> str:
    """The data layout string of spec's target (cached: it needs a TargetMachine)."""
    return str(create_target_machine(spec, "fast").target_data)


# What level "full" runs, for the object cache's key: changing the pipeline changes it.
FULL_PIPELINE = "O2 loop-vectorize slp-vectorize no-interleave no-unroll"


def full_pipeline_tuning() -> llvm.PipelineTuningOptions:
    """LLVM's -O2 pipeline without loop interleaving and unrolling (the schedule unrolls),
    with the loop and SLP vectorizers on. Interleaving and unrolling spent LLVM's time
    making copies of loop bodies: LLVM's time on local Laplacian 1.51 -> 1.30 s, bilateral
    grid 0.47 -> 0.36 s, the same output bytes. The loop vectorizer stays: a loop the
    schedule leaves serial (camera pipe's `corrected`, 16 scalar pixels per vector of its
    consumer) becomes vector code, and without it camera pipe ran at 1.06x Halide's time
    instead of 0.88x (`benchmarks.run_apps --only camera_pipe --runs 9`, quiet machine).
    -O2 rather than -O3: what -O3 adds here is non-trivial loop unswitching, which copies
    loops for conditions our lowering already partitioned; without it every app's output
    is byte-identical and runs at the same speed."""
    pto = llvm.create_pipeline_tuning_options(speed_level=2)
    pto.loop_vectorization = True
    pto.loop_interleaving = False
    pto.loop_unrolling = False
    pto.slp_vectorization = True
    return pto


def _optimize(module: llvm.ModuleRef, tm: llvm.TargetMachine, level: str) -> None:
    if level == "full":
        pass_builder = llvm.create_pass_builder(tm, full_pipeline_tuning())
        pass_builder.getModulePassManager().run(module, pass_builder)
        return
    # "fast": two cheap cleanups (folding the index arithmetic, merging blocks) before a
    # default-level backend: most of O3's run-time speed for a third of its compile time.
    pto = llvm.create_pipeline_tuning_options(speed_level=1)
    pass_builder = llvm.create_pass_builder(tm, pto)
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_instruction_combine_pass()
    mpm.add_simplify_cfg_pass()
    mpm.run(module, pass_builder)


@dataclass
class ObjectCode:
    data: bytes
    seconds: float


def compile_ir_to_object(
    ir_text: str, spec: TargetSpec, level: str, *, pic: bool = False, jit: bool = True
) -> ObjectCode:
    """Parse, verify, optimize and emit ir_text as an object file for spec."""
    start = time.perf_counter()
    initialize_llvm()
    try:
        module = llvm.parse_assembly(ir_text, context=llvm.create_context())  # private: threads may compile at once
        module.verify()
    except RuntimeError as exc:
        raise CompileError(f"internal error: the LLVM backend produced invalid IR: {exc}") from exc
    tm = create_target_machine(spec, level, pic=pic, jit=jit)
    module.triple = spec.triple
    _optimize(module, tm, level)
    data = tm.emit_object(module)
    return ObjectCode(data, time.perf_counter() - start)


def optimize_module(module: llvm.ModuleRef, tm: llvm.TargetMachine, level: str) -> None:
    """Run the optimization pipeline of `level` on a parsed module (as compile_ir_to_object does)."""
    _optimize(module, tm, level)
