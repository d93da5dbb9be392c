"""Halide's `Target`: an arch-bits-os-features string, as Halide programs name what they compile for.

Only the features that change what Pixelweave generates are accepted: the x86 vector
extensions (which pick the instruction set), `profile` (a profiling build), `opencl`
(the OpenCL backend) and `jit` (a marker Halide adds to JIT targets). A Target maps onto
one of the engine's target names ("host", the portable "x86-64[-vN]" levels, "opencl")
through `engine_target()`; every public call that takes `target=` accepts either.
"""

from __future__ import annotations

import os
from enum import Enum
from typing import Any

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir.types import Type


class StmtOutputFormat(Enum):
    """The formats of compile_to_lowered_stmt, with Halide's names."""

    Text = "text"
    HTML = "html"


class TargetArch(Enum):
    ArchUnknown = "arch_unknown"
    X86 = "x86"
    ARM = "arm"


class TargetOS(Enum):
    OSUnknown = "os_unknown"
    Linux = "linux"
    OSX = "osx"
    Windows = "windows"


class TargetFeature(Enum):
    JIT = "jit"
    Profile = "profile"
    OpenCL = "opencl"
    SSE41 = "sse41"
    AVX = "avx"
    AVX2 = "avx2"
    FMA = "fma"
    F16C = "f16c"
    AVX512 = "avx512"
    AVX512_Skylake = "avx512_skylake"
    AVX512_Cannonlake = "avx512_cannonlake"
    AVX512_SapphireRapids = "avx512_sapphirerapids"
    AVXVNNI = "avxvnni"


CPU_FEATURES = frozenset(
    f.value
    for f in (
        TargetFeature.SSE41, TargetFeature.AVX, TargetFeature.AVX2, TargetFeature.FMA, TargetFeature.F16C,
        TargetFeature.AVX512, TargetFeature.AVX512_Skylake, TargetFeature.AVX512_Cannonlake,
        TargetFeature.AVX512_SapphireRapids, TargetFeature.AVXVNNI,
    )
)  # fmt: skip

# Halide feature -> the LLVM host features that must all be present for it.
_HOST_RULES = {
    "sse41": ("sse4.1",),
    "avx": ("avx",),
    "avx2": ("avx2",),
    "fma": ("fma",),
    "f16c": ("f16c",),
    "avx512": ("avx512f", "avx512cd"),
    "avx512_skylake": ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"),
    "avx512_cannonlake": ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "avx512ifma", "avx512vbmi"),
    "avx512_sapphirerapids": ("avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512bf16", "avx512fp16", "avxvnni"),
    "avxvnni": ("avxvnni",),
}

_FORMAT_HELP = (
    "Expected format is arch-bits-os-feature1-feature2-... where arch is one of "
    f"{', '.join(a.value for a in TargetArch)}, bits is 32 or 64, os is one of "
    f"{', '.join(o.value for o in TargetOS)}, and the features Pixelweave supports are "
    f"{', '.join(sorted(f.value for f in TargetFeature))}"
)


class Target:
    """What code is compiled for (Halide's `Target`), e.g. `Target("x86-64-linux-avx2")` or
    `Target("host-profile")`; `Target()` is the unknown target, as in Halide."""

    def __init__(self, spec: str | None = None) -> None:
        self.arch = TargetArch.ArchUnknown
        self.bits = 0
        self.os = TargetOS.OSUnknown
        self._features: set[str] = set()
        if spec is None:
            return
        if not isinstance(spec, str):
            raise CompileError(f"Target needs a target string such as 'host' or 'x86-64-linux-avx2', got {spec!r}")
        tokens = spec.split("-")
        if tokens[0] == "host":
            host = get_host_target()
            self.arch, self.bits, self.os, self._features = host.arch, host.bits, host.os, set(host._features)
            tokens = tokens[1:]
        else:
            if len(tokens) < 3:
                raise CompileError(f"Did not understand target {spec!r}. {_FORMAT_HELP}")
            self.arch = _parse_enum(TargetArch, tokens[0], spec)
            if tokens[1] not in ("32", "64"):
                raise CompileError(f"Did not understand target {spec!r}: bits must be 32 or 64. {_FORMAT_HELP}")
            self.bits = int(tokens[1])
            self.os = _parse_enum(TargetOS, tokens[2], spec)
            tokens = tokens[3:]
        for token in tokens:
            self._features.add(_parse_enum(TargetFeature, token, spec).value)

    # ------------------------------------------------------------------ Halide's methods
    def has_feature(self, feature: TargetFeature | str) -> bool:
        return _feature_name(feature) in self._features

    def features_all_of(self, features: list[TargetFeature | str]) -> bool:
        return all(self.has_feature(f) for f in features)

    def features_any_of(self, features: list[TargetFeature | str]) -> bool:
        return any(self.has_feature(f) for f in features)

    def with_feature(self, feature: TargetFeature | str) -> Target:
        copy = self._copy()
        copy._features.add(_feature_name(feature))
        return copy

    def without_feature(self, feature: TargetFeature | str) -> Target:
        copy = self._copy()
        copy._features.discard(_feature_name(feature))
        return copy

    def set_feature(self, feature: TargetFeature | str, value: bool = True) -> None:
        name = _feature_name(feature)
        if value:
            self._features.add(name)
        else:
            self._features.discard(name)

    def set_features(self, features: list[TargetFeature | str], value: bool = True) -> None:
        for f in features:
            self.set_feature(f, value)

    def has_gpu_feature(self) -> bool:
        """Whether code for this target runs on a GPU (Halide's name; OpenCL is Pixelweave's GPU backend)."""
        return self.has_feature(TargetFeature.OpenCL)

    def natural_vector_size(self, t: Type) -> int:
        """Lanes of t in the widest vector register the target has."""
        if self.has_feature("avx512_skylake") or self.has_feature("avx512"):
            width = 64
        elif self.features_any_of(["avx", "avx2"]):
            width = 32
        else:
            width = 16
        return max(1, width // t.bytes())

    def supported(self) -> bool:
        """Whether Pixelweave can generate code for this target."""
        try:
            self.engine_target()
        except CompileError:
            return False
        return True

    def to_string(self) -> str:
        parts = [self.arch.value, str(self.bits), self.os.value, *sorted(self._features)]
        return "-".join(parts)

    @staticmethod
    def validate_target_string(spec: str) -> bool:
        try:
            Target(spec)
        except CompileError:
            return False
        return True

    # ------------------------------------------------------------------ the engine's view
    def engine_target(self) -> str:
        """The engine target name code for this Target is compiled with."""
        if self.has_feature("opencl"):
            return "opencl"
        host = get_host_target()
        cpu = self._features & CPU_FEATURES
        if (self.arch, self.bits, self.os) == (host.arch, host.bits, host.os) and cpu == host._features & CPU_FEATURES:
            return "host"
        if self.arch != TargetArch.X86 or self.bits != 64:
            raise CompileError(
                f"Pixelweave generates code for the host ({host}) and for 64-bit x86, not for target {self}"
            )
        if self.has_feature("avx512_skylake"):
            return "x86-64-v4"
        if self.has_feature("avx2"):
            return "x86-64-v3"
        if self.has_feature("sse41"):
            return "x86-64-v2"
        return "x86-64"

    def profile(self) -> bool:
        return self.has_feature("profile")

    def _copy(self) -> Target:
        copy = Target()
        copy.arch, copy.bits, copy.os, copy._features = self.arch, self.bits, self.os, set(self._features)
        return copy

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Target):
            return NotImplemented
        return self.to_string() == other.to_string()

    def __hash__(self) -> int:
        return hash(self.to_string())

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"<pixelweave.Target {self.to_string()}>"


def _feature_name(feature: TargetFeature | str) -> str:
    if isinstance(feature, TargetFeature):
        return feature.value
    return _parse_enum(TargetFeature, feature, feature).value


def _parse_enum(enum: Any, token: str, spec: str) -> Any:
    for member in enum:
        if member.value == token:
            return member
    raise CompileError(f"Did not understand target {spec!r}: unknown {enum.__name__} `{token}`. {_FORMAT_HELP}")


def get_host_target() -> Target:
    """The machine this process runs on, with the CPU features it has (Halide's name)."""
    import platform

    import llvmlite.binding as llvm
    from pixelweave.engine.codegen.target import initialize_llvm

    initialize_llvm()
    target = Target()
    machine = platform.machine().lower()
    target.arch = TargetArch.X86 if machine in ("x86_64", "amd64", "i386", "i686") else TargetArch.ARM
    target.bits = 64 if platform.architecture()[0] == "64bit" else 32
    system = platform.system()
    target.os = {"Linux": TargetOS.Linux, "Darwin": TargetOS.OSX, "Windows": TargetOS.Windows}.get(
        system, TargetOS.OSUnknown
    )
    if target.arch == TargetArch.X86:
        host = llvm.get_host_cpu_features()
        for feature, needs in _HOST_RULES.items():
            if all(host.get(n, False) for n in needs):
                target._features.add(feature)
    return target


def get_target_from_environment() -> Target:
    """HL_TARGET if set, otherwise the host (Halide's name)."""
    return Target(os.environ.get("HL_TARGET") or "host")


def get_jit_target_from_environment() -> Target:
    """HL_JIT_TARGET if set, otherwise the host, with the `jit` feature (Halide's name)."""
    return Target(os.environ.get("HL_JIT_TARGET") or "host").with_feature(TargetFeature.JIT)


# engine target name -> the Halide features (on the host's arch and OS) that select it
_ENGINE_TARGET_FEATURES = {
    "x86-64": [],
    "x86-64-v2": ["sse41"],
    "x86-64-v3": ["sse41", "avx", "avx2", "fma", "f16c"],
    "x86-64-v4": ["sse41", "avx", "avx2", "fma", "f16c", "avx512", "avx512_skylake"],
}


def as_target(target: Target | str) -> Target:
    """A Target for a Target or an engine target name ("host", "opencl", "x86-64-v3", ...),
    so code written for Halide can ask a Pixelweave target Halide's questions."""
    if isinstance(target, Target):
        return target
    if target == "opencl":
        return Target("host-opencl")
    if target in _ENGINE_TARGET_FEATURES:
        host = get_host_target()
        return Target("-".join([host.arch.value, "64", host.os.value, *_ENGINE_TARGET_FEATURES[target]]))
    return Target(target)


def engine_target_name(target: Target | str) -> str:
    """The engine target name for a Target or a name (names pass through unchanged)."""
    return target.engine_target() if isinstance(target, Target) else target
