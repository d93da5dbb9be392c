"""Exporting a pipeline for target 'opencl': NAME.o, libNAME.so, NAME.h and NAME.cl.

The library has the CPU library's C ABI (engine/runtime/library.py): NAME(buffers...,
scalars...), NAME_argv, NAME_error_message and NAME_release_memory. Inside, the host part
is the LLVM code of engine/codegen/opencl_host_llvm.py (compiled under the name
NAME_opencl_host, its symbols made local to the object) and a small C runtime, compiled
here with `cc`, that on the first call picks a device the way
engine/runtime/opencl_device.py does ($PIXELWEAVE_OPENCL_DEVICE="platform:device", else the
first device on which a trivial kernel builds and runs), builds the embedded kernel source
there once, and then runs every call under one lock (the device buffers kept between calls
are the library's). NAME.cl is the kernel source, for reading. The library links the
system's libOpenCL.so.1 (the ICD loader).
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pixelweave.engine.codegen.llvm import ErrorCode
from pixelweave.engine.codegen.opencl import DeviceLimits, OpenCLProgram, generate_opencl
from pixelweave.engine.codegen.opencl_host_llvm import (
    FLAG_INPUTS_IN_PLACE,
    STATE_FLAGS_OFFSET,
    bind_symbol,
    generate_host_module,
    state_bytes_symbol,
)
from pixelweave.engine.codegen.target import compile_ir_to_object, data_layout, resolve_target
from pixelweave.engine.errors import CompileError
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime.opencl_device import DEVICE_ENV, select_device

_OPENCL_SONAMES = ("libOpenCL.so", "libOpenCL.so.1")


@dataclass(frozen=True)
class ExportedOpenCLLibrary:
    """Paths of the files export_opencl_library wrote."""

    name: str
    object_path: Path
    shared_library_path: Path
    header_path: Path
    kernel_source_path: Path


def opencl_link_flag() -> str:
    """How to link the OpenCL ICD loader here: -lOpenCL where the development symlink is
    installed, else its runtime name (Debian's ocl-icd-libopencl1 has only libOpenCL.so.1)."""
    for directory in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"):
        if (Path(directory) / "libOpenCL.so").exists():
            return "-lOpenCL"
    return "-l:libOpenCL.so.1"


def host_name(name: str) -> str:
    """The symbol prefix of the host part's LLVM code inside an exported library."""
    return f"{name}_opencl_host"


def export_limits(limits: DeviceLimits | None = None) -> DeviceLimits:
    """The limits an exported library's kernels are generated for: `limits` if given, else
    those of the OpenCL device here (the one the library picks at its first call, by the
    same rule), else, with no usable device, the common ones (256 work-items per group,
    32 KiB of local memory) that any OpenCL 1.2 device has. Generic limits would refuse
    schedules the device runs, e.g. Halide's Harris tiles of 32x16 work-items."""
    if limits is not None:
        return limits
    from pixelweave.engine.runtime.opencl_host import device_limits

    try:
        return device_limits(select_device())
    except CompileError:
        return DeviceLimits()


def export_opencl_library(
    lowered: LoweredPipeline,
    name: str | None = None,
    directory: str | Path = ".",
    *,
    level: str = "full",
    limits: DeviceLimits | None = None,
) -> ExportedOpenCLLibrary:
    """Write NAME.o, libNAME.so, NAME.h and NAME.cl for a pipeline lowered for 'opencl',
    its kernels within `export_limits(limits)`."""
    name = name or lowered.name
    if name != lowered.name:
        lowered = dataclasses.replace(lowered, name=name)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    header_path = directory / f"{name}.h"
    header_path.write_text(opencl_header(lowered))
    kernel_source_path = directory / f"{name}.cl"
    object_path = directory / f"{name}.o"
    program = write_opencl_object(lowered, object_path, level=level, limits=limits)
    kernel_source_path.write_text(program.source)
    library_path = directory / f"lib{name}.so"
    compiler = _tool("cc")
    _run([compiler, "-shared", "-o", str(library_path), str(object_path), "-lm", "-lpthread", opencl_link_flag()])
    return ExportedOpenCLLibrary(name, object_path, library_path, header_path, kernel_source_path)


def host_module_ir(lowered: LoweredPipeline, limits: DeviceLimits | None = None) -> str:
    """The LLVM IR of the host part an exported library holds (compiled as NAME_opencl_host)."""
    program = generate_opencl(lowered, export_limits(limits))
    spec = resolve_target("host")
    host = dataclasses.replace(lowered, name=host_name(lowered.name))
    return generate_host_module(host, program, triple=spec.triple, datalayout=data_layout(spec), embed_runtime=True).ir


def write_opencl_object(
    lowered: LoweredPipeline, object_path: Path, *, level: str = "full", limits: DeviceLimits | None = None
) -> OpenCLProgram:
    """Write the position-independent object of an exported library (its host code and C
    runtime, the kernels embedded); returns the program whose kernels it embeds. The
    kernels are generated within `export_limits(limits)`: the device here, else the common
    limits any OpenCL 1.2 device has. On a device with less, a kernel that needs more
    fails with that device's OpenCL error, reported through NAME_error_message."""
    compiler, linker, objcopy = _tool("cc"), _tool("ld"), _tool("objcopy")
    program = generate_opencl(lowered, export_limits(limits))
    spec = resolve_target("host")
    host = dataclasses.replace(lowered, name=host_name(lowered.name))
    module = generate_host_module(host, program, triple=spec.triple, datalayout=data_layout(spec), embed_runtime=True)
    with tempfile.TemporaryDirectory(prefix="pw-opencl-export-") as scratch:
        work = Path(scratch)
        (work / "host.o").write_bytes(compile_ir_to_object(module.ir, spec, level, pic=True, jit=False).data)
        (work / f"{lowered.name}.h").write_text(opencl_header(lowered))
        (work / "runtime.c").write_text(runtime_source(lowered, program))
        _run([compiler, "-c", "-fPIC", "-O2", "-I", str(work), "-o", str(work / "runtime.o"), str(work / "runtime.c")])
        _run([linker, "-r", "-o", str(object_path), str(work / "host.o"), str(work / "runtime.o")])
    _run([objcopy, "--wildcard", f"--localize-symbol={host_name(lowered.name)}*", str(object_path)])
    return program


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise CompileError(f"exporting for target opencl needs `{name}` on PATH (a C compiler and binutils)")
    return path


def _run(command: list[str]) -> None:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise CompileError(f"exporting for target opencl failed:\n{' '.join(command)}\n{result.stderr}")


def opencl_header(lowered: LoweredPipeline) -> str:
    """The CPU library's header, with what differs for an OpenCL library said before the prototypes."""
    from pixelweave.engine.runtime.library import c_header

    name = lowered.name
    header = c_header(lowered, target="opencl")
    note = (
        "/* Target opencl: the first call picks the OpenCL device ($" + DEVICE_ENV + '="platform:device",\n'
        " * else the first one on which a trivial kernel builds and runs) and builds the kernels\n"
        f" * there (their source is in {name}.cl, for reading); PW_DEVICE_ERROR if that fails. Calls\n"
        " * run one at a time. Link with -lOpenCL (or -l:libOpenCL.so.1) besides -lm -lpthread. */\n\n"
    )
    marker = "/* Runs the pipeline."
    return header.replace(marker, note + marker, 1)


def _c_string(text: str) -> str:
    """text as a C string literal, one source line per line of text."""
    lines = []
    for line in text.splitlines(keepends=True):
        escaped = line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
        lines.append(f'    "{escaped}"')
    return "\n".join(lines) or '    ""'


def runtime_source(lowered: LoweredPipeline, program: OpenCLProgram) -> str:
    """The C runtime of an exported OpenCL library: device choice, program build and the
    public entry points around the host code."""
    from pixelweave.engine.runtime.library import c_header, c_identifier

    name = lowered.name
    host = host_name(name)
    prototype = next(line for line in c_header(lowered).splitlines() if line.startswith(f"int32_t {name}("))
    host_prototype = prototype.replace(f"int32_t {name}(", f"int32_t {host}(", 1)
    call_args = ", ".join(c_identifier(a.name) for a in lowered.arguments)
    kernel_names = ", ".join(f'"{k.name}"' for k in program.kernels) or "0"
    return f"""\
/* The OpenCL runtime of {name}: generated by Pixelweave. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "{name}.h"

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef void *cl_handle;

extern cl_int clGetPlatformIDs(cl_uint, cl_handle *, cl_uint *);
extern cl_int clGetDeviceIDs(cl_handle, uint64_t, cl_uint, cl_handle *, cl_uint *);
extern cl_int clGetDeviceInfo(cl_handle, cl_uint, size_t, void *, size_t *);
extern cl_handle clCreateContext(const intptr_t *, cl_uint, const cl_handle *, void *, void *, cl_int *);
extern cl_handle clCreateCommandQueue(cl_handle, cl_handle, uint64_t, cl_int *);
extern cl_handle clCreateProgramWithSource(cl_handle, cl_uint, const char **, const size_t *, cl_int *);
extern cl_int clBuildProgram(cl_handle, cl_uint, const cl_handle *, const char *, void *, void *);
extern cl_int clGetProgramBuildInfo(cl_handle, cl_handle, cl_uint, size_t, void *, size_t *);
extern cl_handle clCreateKernel(cl_handle, const char *, cl_int *);
extern cl_handle clCreateBuffer(cl_handle, uint64_t, size_t, void *, cl_int *);
extern cl_int clSetKernelArg(cl_handle, cl_uint, size_t, const void *);
extern cl_int clEnqueueNDRangeKernel(cl_handle, cl_handle, cl_uint, const size_t *, const size_t *, const size_t *,
                                     cl_uint, const void *, void *);
extern cl_int clEnqueueReadBuffer(cl_handle, cl_handle, cl_uint, size_t, size_t, void *, cl_uint, const void *,
                                  void *);
extern cl_int clFinish(cl_handle);
extern cl_int clReleaseMemObject(cl_handle);
extern cl_int clReleaseKernel(cl_handle);
extern cl_int clReleaseProgram(cl_handle);
extern cl_int clReleaseCommandQueue(cl_handle);
extern cl_int clReleaseContext(cl_handle);

#define PW_CL_DEVICE_TYPE_ALL 0xFFFFFFFFull
#define PW_CL_DEVICE_NAME 0x102B
#define PW_CL_DEVICE_TYPE 0x1000
#define PW_CL_DEVICE_TYPE_CPU 2ull
#define PW_CL_DEVICE_HOST_UNIFIED_MEMORY 0x1035
#define PW_CL_PROGRAM_BUILD_LOG 0x1183
#define PW_CL_MEM_READ_WRITE 1

{host_prototype}
int32_t {host}_argv(void **args);
const char *{host}_error_message(void);
void {host}_release_memory(void);
void {bind_symbol(host)}(void *state);
int64_t {state_bytes_symbol(host)}(void);

static const char *pw_kernel_source =
{_c_string(program.source)};
static const char *pw_kernel_names[] = {{{kernel_names}}};
enum {{ PW_KERNELS = {len(program.kernels)} }};

static const char *pw_probe_source =
    "__kernel void pw_probe(__global int *out) {{ out[get_global_id(0)] = (int)get_global_id(0) * 2; }}";

static pthread_mutex_t pw_lock = PTHREAD_MUTEX_INITIALIZER;
static int pw_ready;      /* 1: the device and kernels are ready; -1: they failed (pw_failure says why) */
static char pw_failure[2048];
static __thread int pw_failed_here; /* this thread's last call failed before the host code ran */
static void **pw_state;
static char pw_device_name[256];
static cl_handle pw_kernels[PW_KERNELS > 0 ? PW_KERNELS : 1];

/* A context and queue on device when a trivial kernel builds and runs there. */
static int pw_probe(cl_handle device, cl_handle *context_out, cl_handle *queue_out) {{
    cl_int err = 0;
    cl_handle context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (!context || err) return 0;
    cl_handle queue = clCreateCommandQueue(context, device, 0, &err);
    if (!queue || err) {{ clReleaseContext(context); return 0; }}
    int ok = 0;
    cl_handle program = clCreateProgramWithSource(context, 1, &pw_probe_source, NULL, &err);
    if (program && !err && clBuildProgram(program, 1, &device, "", NULL, NULL) == 0) {{
        cl_handle kernel = clCreateKernel(program, "pw_probe", &err);
        cl_handle out = clCreateBuffer(context, PW_CL_MEM_READ_WRITE, 4 * sizeof(int32_t), NULL, &err);
        if (kernel && out) {{
            int32_t got[4] = {{-1, -1, -1, -1}};
            size_t global = 4;
            if (clSetKernelArg(kernel, 0, sizeof(out), &out) == 0 &&
                clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL) == 0 &&
                clEnqueueReadBuffer(queue, out, 1, 0, sizeof(got), got, 0, NULL, NULL) == 0)
                ok = got[0] == 0 && got[1] == 2 && got[2] == 4 && got[3] == 6;
        }}
        if (out) clReleaseMemObject(out);
        if (kernel) clReleaseKernel(kernel);
    }}
    if (program) clReleaseProgram(program);
    if (!ok) {{ clReleaseCommandQueue(queue); clReleaseContext(context); return 0; }}
    *context_out = context;
    *queue_out = queue;
    return 1;
}}

/* The devices of platform p (at most 64), or 0 when it has none. */
static cl_uint pw_devices(cl_handle platform, cl_handle *devices) {{
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, PW_CL_DEVICE_TYPE_ALL, 64, devices, &count) != 0) return 0;
    return count < 64 ? count : 64;
}}

static int pw_choose(cl_handle *device, cl_handle *context, cl_handle *queue) {{
    cl_handle platforms[16], devices[64];
    cl_uint platform_count = 0;
    if (clGetPlatformIDs(16, platforms, &platform_count) != 0) platform_count = 0;
    if (platform_count > 16) platform_count = 16;
    const char *choice = getenv("{DEVICE_ENV}");
    if (choice && *choice) {{
        int p = -1, d = 0;
        char extra = 0;
        int fields = sscanf(choice, "%d:%d%c", &p, &d, &extra);
        if (fields < 1 || fields > 2 || p < 0 || d < 0) {{
            snprintf(pw_failure, sizeof pw_failure,
                     "{DEVICE_ENV}=%s is not of the form \\"platform:device\\" (indices, e.g. \\"0:0\\")", choice);
            return 0;
        }}
        cl_uint count = (cl_uint)p < platform_count ? pw_devices(platforms[p], devices) : 0;
        if ((cl_uint)d >= count) {{
            snprintf(pw_failure, sizeof pw_failure, "there is no OpenCL device %s ({DEVICE_ENV})", choice);
            return 0;
        }}
        if (!pw_probe(devices[d], context, queue)) {{
            snprintf(pw_failure, sizeof pw_failure, "OpenCL device %s ({DEVICE_ENV}) cannot build kernels", choice);
            return 0;
        }}
        *device = devices[d];
        return 1;
    }}
    for (cl_uint p = 0; p < platform_count; p++) {{
        cl_uint count = pw_devices(platforms[p], devices);
        for (cl_uint d = 0; d < count; d++) {{
            if (pw_probe(devices[d], context, queue)) {{
                *device = devices[d];
                return 1;
            }}
        }}
    }}
    snprintf(pw_failure, sizeof pw_failure,
             "{name} needs an OpenCL device and none is usable here (install an OpenCL driver: on Debian or "
             "Ubuntu `apt-get install pocl-opencl-icd ocl-icd-libopencl1` gives a CPU device)");
    return 0;
}}

/* Choose the device and build the kernels, once; 0 on success. */
static int pw_prepare(void) {{
    if (pw_ready) return pw_ready > 0 ? 0 : 1;
    pw_ready = -1;
    cl_handle device = NULL, context = NULL, queue = NULL;
    if (!pw_choose(&device, &context, &queue)) return 1;
    if (clGetDeviceInfo(device, PW_CL_DEVICE_NAME, sizeof pw_device_name - 1, pw_device_name, NULL) != 0)
        strcpy(pw_device_name, "the OpenCL device");
    cl_int err = 0;
    if (PW_KERNELS > 0) {{
        cl_handle program = clCreateProgramWithSource(context, 1, &pw_kernel_source, NULL, &err);
        if (!program || err || clBuildProgram(program, 1, &device, "", NULL, NULL) != 0) {{
            int used = snprintf(pw_failure, sizeof pw_failure,
                                "the OpenCL kernels of {name} did not build on %s:\\n", pw_device_name);
            if (program && used > 0 && (size_t)used < sizeof pw_failure)
                clGetProgramBuildInfo(program, device, PW_CL_PROGRAM_BUILD_LOG, sizeof pw_failure - (size_t)used - 1,
                                      pw_failure + used, NULL);
            return 1;
        }}
        for (int k = 0; k < PW_KERNELS; k++) {{
            pw_kernels[k] = clCreateKernel(program, pw_kernel_names[k], &err);
            if (!pw_kernels[k] || err) {{
                snprintf(pw_failure, sizeof pw_failure, "OpenCL kernel %s of {name} is missing on %s",
                         pw_kernel_names[k], pw_device_name);
                return 1;
            }}
        }}
    }}
    pw_state = calloc(1, (size_t){state_bytes_symbol(host)}());
    if (!pw_state) {{
        snprintf(pw_failure, sizeof pw_failure, "out of memory");
        return 1;
    }}
    pw_state[0] = context;
    pw_state[1] = queue;
    pw_state[2] = pw_device_name;
    pw_state[3] = pw_kernels;
    /* on a CPU device the kernels read inputs where the caller has them (no copy); outputs
       are still copied back, since the caller's arrays may overlap its inputs */
    uint64_t type = 0;
    cl_uint unified = 0;
    if (clGetDeviceInfo(device, PW_CL_DEVICE_TYPE, sizeof type, &type, NULL) == 0 && (type & PW_CL_DEVICE_TYPE_CPU) &&
        clGetDeviceInfo(device, PW_CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL) == 0 && unified)
        pw_state[{STATE_FLAGS_OFFSET // 8}] = (void *)(uintptr_t){FLAG_INPUTS_IN_PLACE};
    {bind_symbol(host)}(pw_state);
    pw_ready = 1;
    return 0;
}}

static int pw_begin(void) {{
    pthread_mutex_lock(&pw_lock);
    pw_failed_here = pw_prepare() != 0;
    if (pw_failed_here) pthread_mutex_unlock(&pw_lock);
    return pw_failed_here;
}}

{prototype[:-1]} {{
    if (pw_begin()) return {int(ErrorCode.DEVICE_ERROR)};
    int32_t rc = {host}({call_args});
    pthread_mutex_unlock(&pw_lock);
    return rc;
}}

int32_t {name}_argv(void **args) {{
    if (pw_begin()) return {int(ErrorCode.DEVICE_ERROR)};
    int32_t rc = {host}_argv(args);
    pthread_mutex_unlock(&pw_lock);
    return rc;
}}

const char *{name}_error_message(void) {{
    return pw_failed_here ? pw_failure : {host}_error_message();
}}

void {name}_release_memory(void) {{
    pthread_mutex_lock(&pw_lock);
    if (pw_ready > 0) {host}_release_memory();
    pthread_mutex_unlock(&pw_lock);
}}
"""


__all__ = [
    "ExportedOpenCLLibrary",
    "export_limits",
    "export_opencl_library",
    "host_module_ir",
    "host_name",
    "opencl_header",
    "opencl_link_flag",
    "runtime_source",
    "write_opencl_object",
]
