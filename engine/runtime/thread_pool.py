"""The parallel-for runtime, written in LLVM IR: a persistent pool of native worker threads.

`pw_parallel_for(fn, closure, min, extent)` runs `fn(closure, i)` for i in
[min, min + extent) on the calling thread plus the pool's workers and returns the first
nonzero code an iteration returned (0 when all succeeded); after a failure no thread takes
new iterations. Design (measured numbers in PLATFORM-NOTES and benchmarks/):

- Workers are created once, on first use (PIXELWEAVE_NUM_THREADS threads in all, default
  the number of online CPUs), with every signal blocked, and live as long as the process
  (an exported library joins them from a global destructor).
- One 32-bit word `state` is both the job generation and the futex the workers sleep on:
  it is odd while a job is open. A worker spins on it for a bounded time (WORKER_SPIN_NS
  of the monotonic clock, not a count of pauses, whose length differs fivefold between
  CPUs), yielding its core now and then, then sleeps in `futex(FUTEX_WAIT)`; the caller
  wakes sleepers only if there are any. A new worker is handed the state it must wait
  past by its spawner (reading it itself races with the first job and deadlocks).
- To join a job a worker increments `active`, then re-reads `state`: if the job it saw
  has closed meanwhile it leaves without touching the job's fields. The caller closes the
  job after running iterations itself, then waits (spin up to CALLER_SPIN_NS, then
  futex) for `active` to drop to zero, so a late worker can never run iterations of a
  finished job.
- Iterations are handed out one at a time by an atomic counter.
- One job runs at a time: a parallel loop started while the pool is busy (a nested
  parallel loop, or a second thread calling a pipeline) runs serially on its caller.
"""

from __future__ import annotations

from string import Template

from pixelweave.engine.codegen.llvm_ir import ModuleBuilder
from pixelweave.engine.errors import CompileError

PARALLEL_FOR = "pw_parallel_for"
PARALLEL_FOR_SIGNATURE = "i32 (ptr, ptr, i32, i32)"
STATS = "pw_runtime_stats"
SHUTDOWN = "pw_pool_shutdown"
NUM_THREADS_ENV = "PIXELWEAVE_NUM_THREADS"
MAX_THREADS = 256

# How long a thread spins (with `pause`) before sleeping in the kernel, in nanoseconds of
# CLOCK_MONOTONIC. A count of `pause` iterations is no measure of time: one `pause` takes
# ~26 ns on Zen 5 but ~11 ns on this Sapphire Rapids VM, where 2000 of them (22 µs) were
# shorter than the 70-110 µs between two calls from Python, so every call paid the futex
# wake (~25 µs on the caller, ~50 µs before the worker's first task). Workers spin long
# enough to bridge back-to-back calls from Python and the parallel loops of one pipeline;
# the caller spins while the last iterations finish, as a futex sleep and wake there
# costs more than the wait it saves.
WORKER_SPIN_NS = 200_000
CALLER_SPIN_NS = 200_000
# Pauses between two readings of the clock (a vDSO clock_gettime takes ~18 ns here).
SPIN_CLOCK_EVERY = 16
# A spinning thread calls sched_yield at each reading of the clock, as Halide's workers
# do, so that a thread of another pipeline or process waiting for this core gets it
# (~170 ns when nothing else is runnable).
SPIN_YIELDS = True

_FUTEX_SYSCALL = {"x86_64": 202, "aarch64": 98}
_FUTEX_WAIT_PRIVATE = 128
_FUTEX_WAKE_PRIVATE = 129
_SC_NPROCESSORS_ONLN = 84
_SIG_SETMASK = 2
_CLOCK_MONOTONIC = 1

_GLOBALS = Template(
    """\
@pw_pool.state = internal global i32 0, align 64
@pw_pool.sleepers = internal global i32 0, align 64
@pw_pool.active = internal global i32 0, align 64
@pw_pool.caller_waiting = internal global i32 0, align 64
@pw_pool.busy = internal global i32 0, align 64
@pw_pool.workers = internal global i32 -1, align 64
@pw_pool.fn = internal global ptr null, align 64
@pw_pool.closure = internal global ptr null, align 8
@pw_pool.min = internal global i32 0, align 8
@pw_pool.extent = internal global i32 0, align 8
@pw_pool.next = internal global i32 0, align 64
@pw_pool.error = internal global i32 0, align 64
@pw_pool.quit = internal global i32 0, align 64
@pw_pool.joins = internal global i64 0, align 64
@pw_pool.threads = internal global [$max_threads x i64] zeroinitializer, align 64
@pw_pool.env_name = private unnamed_addr constant [$env_len x i8] c"$env_name\\00", align 1"""
)

_PARALLEL_FOR = Template(
    """\
define $linkage i32 @pw_parallel_for(ptr %fn, ptr %closure, i32 %min, i32 %extent) nounwind {
entry:
  %empty = icmp slt i32 %extent, 1
  br i1 %empty, label %nothing, label %nonempty
nothing:
  ret i32 0
nonempty:
  %single = icmp eq i32 %extent, 1
  br i1 %single, label %serial, label %trylock
trylock:
  %cx = cmpxchg ptr @pw_pool.busy, i32 0, i32 1 acquire monotonic, align 4
  %got = extractvalue { i32, i1 } %cx, 1
  br i1 %got, label %locked, label %serial
locked:
  %w0 = load i32, ptr @pw_pool.workers, align 4
  %unstarted = icmp slt i32 %w0, 0
  br i1 %unstarted, label %start, label %started
start:
  call void @pw_pool_start()
  br label %started
started:
  %w = load i32, ptr @pw_pool.workers, align 4
  %alone = icmp eq i32 %w, 0
  br i1 %alone, label %unlock_serial, label %publish
unlock_serial:
  store atomic i32 0, ptr @pw_pool.busy release, align 4
  br label %serial
publish:
  store ptr %fn, ptr @pw_pool.fn, align 8
  store ptr %closure, ptr @pw_pool.closure, align 8
  store i32 %min, ptr @pw_pool.min, align 4
  store i32 %extent, ptr @pw_pool.extent, align 4
  store atomic i32 0, ptr @pw_pool.next monotonic, align 4
  store atomic i32 0, ptr @pw_pool.error monotonic, align 4
  %s = load atomic i32, ptr @pw_pool.state monotonic, align 4
  %open = add i32 %s, 1
  store atomic i32 %open, ptr @pw_pool.state seq_cst, align 4
  %sleepers = load atomic i32, ptr @pw_pool.sleepers seq_cst, align 4
  %any_asleep = icmp ne i32 %sleepers, 0
  br i1 %any_asleep, label %wake, label %work
wake:
  %wk = call i64 (i64, ...) @syscall(i64 $futex, ptr @pw_pool.state, i32 $wake_op, i32 2147483647)
  br label %work
work:
  call void @pw_pool_work()
  %closed = add i32 %s, 2
  store atomic i32 %closed, ptr @pw_pool.state seq_cst, align 4
  %a0 = load atomic i32, ptr @pw_pool.active seq_cst, align 4
  %idle0 = icmp eq i32 %a0, 0
  br i1 %idle0, label %finished, label %spin_start
spin_start:
  %deadline = call i64 @pw_pool_deadline(i64 $caller_spin_ns)
  br label %spin
spin:
  %k = phi i32 [ 0, %spin_start ], [ %k1, %spin_pause ]
  %a = load atomic i32, ptr @pw_pool.active seq_cst, align 4
  %idle = icmp eq i32 %a, 0
  br i1 %idle, label %finished, label %spin_count
spin_count:
  %k1 = add i32 %k, 1
  %more = call i1 @pw_pool_keep_spinning(i32 %k1, i64 %deadline)
  br i1 %more, label %spin_pause, label %sleep_begin
spin_pause:
  $pause
  br label %spin
sleep_begin:
  store atomic i32 1, ptr @pw_pool.caller_waiting seq_cst, align 4
  br label %sleep
sleep:
  %a2 = load atomic i32, ptr @pw_pool.active seq_cst, align 4
  %idle2 = icmp eq i32 %a2, 0
  br i1 %idle2, label %sleep_end, label %sleep_wait
sleep_wait:
  %fw = call i64 (i64, ...) @syscall(i64 $futex, ptr @pw_pool.active, i32 $wait_op, i32 %a2, ptr null)
  br label %sleep
sleep_end:
  store atomic i32 0, ptr @pw_pool.caller_waiting seq_cst, align 4
  br label %finished
finished:
  %err = load atomic i32, ptr @pw_pool.error seq_cst, align 4
  store atomic i32 0, ptr @pw_pool.busy release, align 4
  ret i32 %err
serial:
  br label %serial_loop
serial_loop:
  %i = phi i32 [ 0, %serial ], [ %i1, %serial_next ]
  %index = add i32 %min, %i
  %r = call i32 %fn(ptr %closure, i32 %index)
  %failed = icmp ne i32 %r, 0
  br i1 %failed, label %serial_failed, label %serial_next
serial_next:
  %i1 = add i32 %i, 1
  %again = icmp slt i32 %i1, %extent
  br i1 %again, label %serial_loop, label %serial_done
serial_done:
  ret i32 0
serial_failed:
  ret i32 %r
}

define internal void @pw_pool_work() nounwind {
entry:
  %fn = load ptr, ptr @pw_pool.fn, align 8
  %closure = load ptr, ptr @pw_pool.closure, align 8
  %min = load i32, ptr @pw_pool.min, align 4
  %extent = load i32, ptr @pw_pool.extent, align 4
  br label %loop
loop:
  %e = load atomic i32, ptr @pw_pool.error monotonic, align 4
  %stop = icmp ne i32 %e, 0
  br i1 %stop, label %done, label %claim
claim:
  %i = atomicrmw add ptr @pw_pool.next, i32 1 monotonic, align 4
  %past = icmp sge i32 %i, %extent
  br i1 %past, label %done, label %run
run:
  %index = add i32 %min, %i
  %r = call i32 %fn(ptr %closure, i32 %index)
  %failed = icmp ne i32 %r, 0
  br i1 %failed, label %fail, label %loop
fail:
  %cx = cmpxchg ptr @pw_pool.error, i32 0, i32 %r seq_cst seq_cst, align 4
  br label %done
done:
  ret void
}

define internal i64 @pw_pool_now_ns() nounwind {
entry:
  %ts = alloca { i64, i64 }, align 8
  %rc = call i32 @clock_gettime(i32 $clock_monotonic, ptr %ts)
  %sec = load i64, ptr %ts, align 8
  %nsec_at = getelementptr { i64, i64 }, ptr %ts, i32 0, i32 1
  %nsec = load i64, ptr %nsec_at, align 8
  %sec_ns = mul i64 %sec, 1000000000
  %now = add i64 %sec_ns, %nsec
  ret i64 %now
}

define internal i64 @pw_pool_deadline(i64 %spin_ns) nounwind {
entry:
  %now = call i64 @pw_pool_now_ns()
  %deadline = add i64 %now, %spin_ns
  ret i64 %deadline
}

; Whether a spin loop at its k-th pause goes on: every $clock_every pauses it yields
; the core to any other runnable thread and reads the clock, and it stops once the
; deadline has passed.
define internal i1 @pw_pool_keep_spinning(i32 %k, i64 %deadline) nounwind {
entry:
  %phase = and i32 %k, $clock_mask
  %skip = icmp ne i32 %phase, 0
  br i1 %skip, label %yes, label %check
check:
$yield_call
  %now = call i64 @pw_pool_now_ns()
  %early = icmp slt i64 %now, %deadline
  ret i1 %early
yes:
  ret i1 true
}

define internal void @pw_pool_leave() nounwind {
entry:
  %old = atomicrmw sub ptr @pw_pool.active, i32 1 seq_cst, align 4
  %last = icmp eq i32 %old, 1
  br i1 %last, label %check, label %done
check:
  %waiting = load atomic i32, ptr @pw_pool.caller_waiting seq_cst, align 4
  %must_wake = icmp ne i32 %waiting, 0
  br i1 %must_wake, label %wake, label %done
wake:
  %r = call i64 (i64, ...) @syscall(i64 $futex, ptr @pw_pool.active, i32 $wake_op, i32 1)
  br label %done
done:
  ret void
}

define internal ptr @pw_worker_main(ptr %arg) nounwind {
entry:
  %first_seen = ptrtoint ptr %arg to i32
  br label %wait
wait:
  %seen = phi i32 [ %first_seen, %entry ], [ %seen, %woke ], [ %s, %not_open ], [ %s, %backoff ], [ %s, %ran ]
  %deadline = call i64 @pw_pool_deadline(i64 $worker_spin_ns)
  br label %spin
spin:
  %k = phi i32 [ 0, %wait ], [ %k1, %spin_pause ]
  %s = load atomic i32, ptr @pw_pool.state acquire, align 4
  %changed = icmp ne i32 %s, %seen
  br i1 %changed, label %change, label %spin_count
spin_count:
  %k1 = add i32 %k, 1
  %more = call i1 @pw_pool_keep_spinning(i32 %k1, i64 %deadline)
  br i1 %more, label %spin_pause, label %sleep
spin_pause:
  $pause
  br label %spin
sleep:
  %sl = atomicrmw add ptr @pw_pool.sleepers, i32 1 seq_cst, align 4
  %s2 = load atomic i32, ptr @pw_pool.state seq_cst, align 4
  %same = icmp eq i32 %s2, %seen
  br i1 %same, label %futex_wait, label %woke
futex_wait:
  %fw = call i64 (i64, ...) @syscall(i64 $futex, ptr @pw_pool.state, i32 $wait_op, i32 %seen, ptr null)
  br label %woke
woke:
  %sl2 = atomicrmw sub ptr @pw_pool.sleepers, i32 1 seq_cst, align 4
  br label %wait
change:
  %q = load atomic i32, ptr @pw_pool.quit acquire, align 4
  %quit = icmp ne i32 %q, 0
  br i1 %quit, label %exit, label %check_open
check_open:
  %odd = and i32 %s, 1
  %is_open = icmp ne i32 %odd, 0
  br i1 %is_open, label %join, label %not_open
not_open:
  br label %wait
join:
  %ac = atomicrmw add ptr @pw_pool.active, i32 1 seq_cst, align 4
  %s3 = load atomic i32, ptr @pw_pool.state seq_cst, align 4
  %still_open = icmp eq i32 %s3, %s
  br i1 %still_open, label %run, label %backoff
run:
  %j = atomicrmw add ptr @pw_pool.joins, i64 1 monotonic, align 8
  call void @pw_pool_work()
  call void @pw_pool_leave()
  br label %ran
ran:
  br label %wait
backoff:
  call void @pw_pool_leave()
  br label %wait
exit:
  ret ptr null
}

define internal void @pw_pool_start() nounwind {
entry:
  %all = alloca [128 x i8], align 16
  %old = alloca [128 x i8], align 16
  %env = call ptr @getenv(ptr @pw_pool.env_name)
  %has_env = icmp ne ptr %env, null
  br i1 %has_env, label %parse, label %count
parse:
  %asked = call i64 @strtol(ptr %env, ptr null, i32 10)
  %valid = icmp sgt i64 %asked, 0
  br i1 %valid, label %chosen, label %count
count:
  %cpus = call i64 @sysconf(i32 $nprocs)
  br label %chosen
chosen:
  %n0 = phi i64 [ %asked, %parse ], [ %cpus, %count ]
  %lo = icmp slt i64 %n0, 1
  %n1 = select i1 %lo, i64 1, i64 %n0
  %hi = icmp sgt i64 %n1, $max_threads
  %n2 = select i1 %hi, i64 $max_threads, i64 %n1
  %n = trunc i64 %n2 to i32
  %want = sub i32 %n, 1
  %fill = call i32 @sigfillset(ptr %all)
  %m1 = call i32 @pthread_sigmask(i32 $sig_setmask, ptr %all, ptr %old)
  %s = load atomic i32, ptr @pw_pool.state monotonic, align 4
  %s64 = zext i32 %s to i64
  %arg = inttoptr i64 %s64 to ptr
  br label %loop
loop:
  %k = phi i32 [ 0, %chosen ], [ %k1, %created ]
  %more = icmp slt i32 %k, %want
  br i1 %more, label %create, label %done
create:
  %k64 = zext i32 %k to i64
  %slot = getelementptr [$max_threads x i64], ptr @pw_pool.threads, i64 0, i64 %k64
  %rc = call i32 @pthread_create(ptr %slot, ptr null, ptr @pw_worker_main, ptr %arg)
  %ok = icmp eq i32 %rc, 0
  br i1 %ok, label %created, label %done
created:
  %k1 = add i32 %k, 1
  br label %loop
done:
  %m2 = call i32 @pthread_sigmask(i32 $sig_setmask, ptr %old, ptr null)
  store i32 %k, ptr @pw_pool.workers, align 4
  ret void
}

define $linkage void @pw_pool_shutdown() nounwind {
entry:
  %cx = cmpxchg ptr @pw_pool.busy, i32 0, i32 1 acquire monotonic, align 4
  %got = extractvalue { i32, i1 } %cx, 1
  br i1 %got, label %locked, label %done
locked:
  %w = load i32, ptr @pw_pool.workers, align 4
  %any = icmp sgt i32 %w, 0
  br i1 %any, label %stop, label %unlock
stop:
  store atomic i32 1, ptr @pw_pool.quit seq_cst, align 4
  %s = load atomic i32, ptr @pw_pool.state monotonic, align 4
  %s1 = add i32 %s, 2
  store atomic i32 %s1, ptr @pw_pool.state seq_cst, align 4
  %wk = call i64 (i64, ...) @syscall(i64 $futex, ptr @pw_pool.state, i32 $wake_op, i32 2147483647)
  br label %join
join:
  %k = phi i32 [ 0, %stop ], [ %k1, %join ]
  %k64 = zext i32 %k to i64
  %slot = getelementptr [$max_threads x i64], ptr @pw_pool.threads, i64 0, i64 %k64
  %tid = load i64, ptr %slot, align 8
  %rc = call i32 @pthread_join(i64 %tid, ptr null)
  %k1 = add i32 %k, 1
  %again = icmp slt i32 %k1, %w
  br i1 %again, label %join, label %joined
joined:
  store i32 0, ptr @pw_pool.workers, align 4
  store atomic i32 0, ptr @pw_pool.quit seq_cst, align 4
  br label %unlock
unlock:
  store atomic i32 0, ptr @pw_pool.busy release, align 4
  br label %done
done:
  ret void
}"""
)

_STATS = """\
define void @pw_runtime_stats(ptr %out) nounwind {
entry:
  %w = load atomic i32, ptr @pw_pool.workers acquire, align 4
  %w64 = sext i32 %w to i64
  store i64 %w64, ptr %out, align 8
  %j = load atomic i64, ptr @pw_pool.joins monotonic, align 8
  %p1 = getelementptr i64, ptr %out, i64 1
  store i64 %j, ptr %p1, align 8
  ret void
}"""


def _pause_instruction(arch: str) -> str:
    if arch == "x86_64":
        return "call void @llvm.x86.sse2.pause()"
    if arch == "aarch64":
        return "call void @llvm.aarch64.hint(i32 1)"
    return "fence seq_cst"


def add_thread_pool(module: ModuleBuilder, *, arch: str, export: bool, with_destructor: bool) -> None:
    """Add the pool to module; `export` makes pw_parallel_for and pw_runtime_stats visible
    to other JIT libraries, otherwise everything is internal (an exported library)."""
    if SPIN_CLOCK_EVERY & (SPIN_CLOCK_EVERY - 1):
        raise CompileError(f"SPIN_CLOCK_EVERY must be a power of two, not {SPIN_CLOCK_EVERY}")
    if arch not in _FUTEX_SYSCALL:
        raise CompileError(
            f"parallel loops need the native thread pool, which runs on x86_64 and aarch64 Linux, not {arch}; "
            "remove parallel() from the schedule to compile for this machine"
        )
    module.declare("syscall", "i64 (i64, ...)")
    module.declare("getenv", "ptr (ptr)")
    module.declare("strtol", "i64 (ptr, ptr, i32)")
    module.declare("sysconf", "i64 (i32)")
    module.declare("sigfillset", "i32 (ptr)")
    module.declare("pthread_sigmask", "i32 (i32, ptr, ptr)")
    module.declare("pthread_create", "i32 (ptr, ptr, ptr, ptr)")
    module.declare("pthread_join", "i32 (i64, ptr)")
    module.declare("clock_gettime", "i32 (i32, ptr)")
    module.declare("sched_yield", "i32 ()")
    if arch == "x86_64":
        module.intrinsic("llvm.x86.sse2.pause", "void", [])
    elif arch == "aarch64":
        module.intrinsic("llvm.aarch64.hint", "void", ["i32"])
    values = {
        "linkage": "" if export else "internal",
        "futex": _FUTEX_SYSCALL[arch],
        "wait_op": _FUTEX_WAIT_PRIVATE,
        "wake_op": _FUTEX_WAKE_PRIVATE,
        "pause": _pause_instruction(arch),
        "worker_spin_ns": WORKER_SPIN_NS,
        "caller_spin_ns": CALLER_SPIN_NS,
        "clock_every": SPIN_CLOCK_EVERY,
        "clock_mask": SPIN_CLOCK_EVERY - 1,
        "clock_monotonic": _CLOCK_MONOTONIC,
        "yield_call": "  %yielded = call i32 @sched_yield()" if SPIN_YIELDS else "",
        "nprocs": _SC_NPROCESSORS_ONLN,
        "sig_setmask": _SIG_SETMASK,
        "max_threads": MAX_THREADS,
        "env_name": NUM_THREADS_ENV,
        "env_len": len(NUM_THREADS_ENV) + 1,
    }
    module.add_global(_GLOBALS.substitute(values))
    module.add_function(_PARALLEL_FOR.substitute(values))
    if export:
        module.add_function(_STATS)
    if with_destructor:
        module.trailer.append(
            "@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] "
            "[{ i32, ptr, ptr } { i32 65535, ptr @pw_pool_shutdown, ptr null }]"
        )
