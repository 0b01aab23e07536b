"""Where the runs of a sweep happen: in this process, in a local pool of worker processes, or on a
Dask cluster. Every executor runs the same function, `run_batch`, on batches of runs and hands
back the same rows, so a sweep gives identical tables whichever one ran it.

The coordinator (`tcplab.sweep`) keeps at most a few batches in flight and stores each result as
it arrives. An executor reports a batch as `done` (its rows), `lost` (its worker died), or, in
the local pool, `timeout` / `memory` (its worker was killed for not answering in time or for
using too much memory) or `returned` (it was queued behind the batch of a worker that died, and
never started), and the coordinator decides what to run again.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import multiprocessing.connection
import os
import signal
import sys
import time
from collections import deque
from typing import Any, Optional

from . import _core
from .rows import RunRows

# Rows of a run are built in the worker; the coordinator only inserts them.
RESULT_TABLES = ("connections", "links", "transfers", "objects", "pages", "udp")

# Workers dying this many times (plus one per worker) in a row, with no batch finished in
# between, mean the pool cannot work (a broken installation), not one bad run.
MAX_DEATHS_IN_A_ROW = 5
# A pool worker that has not answered within (runs in its batch) x run_timeout + this grace is
# killed: a run's own wall budget stops it in the event loop, so only a run stuck outside the
# loop (building a huge world, serialising a huge result) gets this far.
WATCHDOG_GRACE_S = 5.0
# How often the pool reads its workers' resident memory when runs have a memory limit.
MEMORY_CHECK_EVERY_S = 0.1
# A worker's first message: it has started and imported what its batches need, so the watchdog's
# clock does not count the start of a process (seconds on a loaded machine).
READY = "ready"


from .errors import ExecutorError  # noqa: E402  (defined apart so that `import tcplab` stays light)


def run_batch(base_json: str, tasks: list, run_timeout: Optional[float] = None) -> dict:
    """Run `tasks`, a list of (key, seed, sets), on the scenario `base_json`, each within
    `run_timeout` seconds of wall time. A run that fails (an invalid combination, a panic in the
    core) becomes a failed row with its message, one over its time a `timeout` row with how far it
    got; the batch goes on. Returns the runs (status, error, timings) and the rows of each result
    table, each row carrying its run's key.

    A task may carry a fourth element, (directory, `[[series]]` entries): the run then records
    those series and writes them to Parquet under the directory (`tcplab.series.write_run`).

    Each table comes as a list of `rows.RunRows`, one per run with rows: the run's columns as the
    core hands them over (numeric ones as packed bytes, not a Python object per value), which the
    store joins into plain columns (`rows.merge`) only as it inserts them. Neither the workers nor
    the coordinator import pyarrow, pandas or numpy for them (pyarrow imports pandas as soon as it
    builds an array: together a few hundred ms of a fresh process, which on a busy machine the
    coordinator takes from the workers)."""
    t_batch = time.perf_counter()
    limits = {} if run_timeout is None else {"max_wall_s": run_timeout}
    runs = []
    rows: dict = {name: [] for name in RESULT_TABLES}
    with_series: dict = {}
    for key, seed, sets, *extra in tasks:
        t0 = time.perf_counter()
        try:
            if extra and extra[0]:
                from . import series as _series

                directory, entries = extra[0]
                if directory not in with_series:
                    with_series[directory] = json.dumps({**json.loads(base_json), "series": entries})
                out, recorded = _core.run_scenario(with_series[directory], "json", seed, list(sets), series=True, columns=True, **limits)
                _series.write_run(recorded, directory, key)
            else:
                out = _core.run_scenario(base_json, "json", seed, list(sets), columns=True, **limits)
        except _core.RunLimitError as e:
            runs.append(
                {
                    "key": key, "status": "timeout", "error": f"RunLimitError: {e}", "wall_time_s": time.perf_counter() - t0,
                    "sim_time_s": e.sim_time_s, "events": e.events, "completed": False,
                }
            )  # fmt: skip
            continue
        except Exception as e:  # ScenarioError, CoreError, anything else: record it, keep going
            runs.append({"key": key, "status": "failed", "error": f"{type(e).__name__}: {e}", "wall_time_s": time.perf_counter() - t0})
            continue
        wall = time.perf_counter() - t0
        m = json.loads(out["json"])["meta"]
        runs.append(
            {
                "key": key,
                "status": "ok",
                "error": None,
                "wall_time_s": wall,
                "sim_time_s": m["sim_time_s"],
                "events": m["events"],
                "completed": m["completed"],
            }
        )
        for name, (columns, absent, n) in out["tables"].items():
            if n and name in rows:
                rows[name].append(RunRows(key, columns, absent, n))
    tables = {name: (r or None) for name, r in rows.items()}
    return {"runs": runs, "tables": tables, "batch_wall_s": time.perf_counter() - t_batch, "pid": os.getpid()}


# --- in this process ----------------------------------------------------------------------------


class SerialExecutor:
    """Runs each batch in the coordinator's own process, one at a time (`workers=0`)."""

    kind = "serial"
    parallelism = 1
    target_batch_s = 0.2

    def __init__(self, run_timeout: Optional[float] = None) -> None:
        self._queue: deque = deque()
        self.run_timeout = run_timeout

    def capacity(self) -> int:
        return 1 - len(self._queue)

    def submit(self, batch_id: int, base_json: str, tasks: list) -> None:
        self._queue.append((batch_id, base_json, tasks))

    def wait(self, timeout: float) -> list:
        if not self._queue:
            return []
        batch_id, base_json, tasks = self._queue.popleft()
        return [("done", batch_id, run_batch(base_json, tasks, self.run_timeout))]

    def close(self) -> None:
        self._queue.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --- a local process pool -----------------------------------------------------------------------


def _die_with_parent() -> None:
    """Linux: the kernel kills this worker if the coordinator dies (even by SIGKILL)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            PR_SET_PDEATHSIG = 1
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except Exception:
            pass  # best effort: without it the worker still exits when its pipe closes


def _release_freed_memory() -> Any:
    """glibc keeps freed heap pages; `malloc_trim(0)` hands them back, so that the resident memory
    the pool measures is the next run's, not what an earlier run left behind. None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


def _worker_main(conn, run_timeout: Optional[float] = None, trim: bool = False) -> None:
    """A pool worker: receive (batch id, scenario, tasks), send back (batch id, rows); exit when
    the coordinator says so or goes away."""
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's to handle
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked while the pool started us
    malloc_trim = _release_freed_memory() if trim else None
    try:
        conn.send(READY)
    except (BrokenPipeError, OSError):
        _exit_now()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            break
        if msg is None:
            break
        batch_id, base_json, tasks = msg
        res = run_batch(base_json, tasks, run_timeout)
        if malloc_trim is not None:
            malloc_trim(0)
        try:
            conn.send((batch_id, res))
        except (BrokenPipeError, OSError):
            break
    _exit_now()


def _exit_now() -> None:
    """End a worker without the interpreter's shutdown: it holds nothing to clean up (its results
    went down the pipe, its series files are closed), and unloading the core and the modules it
    imported would keep the coordinator waiting for it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(0)


def _death(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit status {exitcode}"


def _rss_bytes(pid: int) -> Optional[int]:
    """Resident memory of a process (Linux: /proc; elsewhere psutil), None if it is gone."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except FileNotFoundError:
        if sys.platform.startswith("linux"):
            return None
    except (OSError, ValueError, IndexError):
        return None
    try:
        import psutil

        return psutil.Process(pid).memory_info().rss
    except Exception:
        return None


def _size(n: float) -> str:
    """Bytes in the units of `run_memory` (1 KB = 1024 B)."""
    if n < 1024:
        return f"{n:.0f} B"
    for unit in ("KB", "MB"):
        n /= 1024
        if n < 1024:
            return f"{n:.1f} {unit}"
    return f"{n / 1024:.1f} GB"


class _Worker:
    """A pool worker process, with the interface of `multiprocessing.Process` that the pool uses
    (pid, sentinel, is_alive, kill, join, exitcode).

    On POSIX it is `python -c "... _worker_entry(fd, ...)"` with one end of a socket pair, not a
    multiprocessing child: a *spawn* child imports the coordinator's main module again (the
    `tcplab` command's, or a script's with everything it imports, pandas included) before it can
    run anything, and multiprocessing starts a resource tracker process besides, which outlived
    the command by a moment. Such a worker imports only this module and what the runs need. Its
    sentinel is a pidfd (Linux) or its end of the pipe, which closes when it dies."""

    def __init__(self, slot: int, run_timeout: Optional[float], trim: bool) -> None:
        import socket
        import subprocess

        ours, theirs = socket.socketpair()
        self.conn = mp.connection.Connection(ours.detach())
        fd = theirs.fileno()
        code = (
            f"import sys; sys.path[:] = {sys.path!r}; "
            f"from tcplab.executors import _worker_entry; _worker_entry({fd}, {slot}, {run_timeout!r}, {trim!r})"
        )
        args = [sys.executable, *subprocess._args_from_interpreter_flags(), "-c", code]
        try:
            self._proc = subprocess.Popen(args, pass_fds=(fd,), stdin=subprocess.DEVNULL)
        finally:
            theirs.close()
        self.pid = self._proc.pid
        self._pidfd = None
        if hasattr(os, "pidfd_open"):
            try:
                self._pidfd = os.pidfd_open(self.pid)
            except OSError:
                pass
        self.sentinel = self._pidfd if self._pidfd is not None else self.conn

    @property
    def exitcode(self) -> Optional[int]:
        return self._proc.poll()

    def is_alive(self) -> bool:
        return self._proc.poll() is None

    def kill(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()

    def join(self, timeout: Optional[float] = None) -> None:
        import subprocess

        try:
            self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


def _worker_entry(fd: int, slot: int, run_timeout: Optional[float], trim: bool) -> None:
    """The start of a `_Worker` process: named as a multiprocessing child of the pool would be."""
    mp.current_process().name = f"tcplab-sweep-worker-{slot}"
    _worker_main(mp.connection.Connection(fd), run_timeout, trim)


# Batches in flight per worker: the one it runs and the next, already in its pipe, so that it
# starts the next as soon as it has sent a result, whatever the coordinator is doing (a commit,
# reading another worker's rows, waiting for a CPU on a busy machine).
PIPELINE_DEPTH = 2


class LocalPool:
    """`workers` processes, each with its own pipe and its own queue of at most PIPELINE_DEPTH
    batches, run in order, so the coordinator always knows which batch a dead worker was running
    (the first of its queue; those behind it come back as `returned`, to be run elsewhere). A
    dead worker is replaced.

    With `run_timeout` each run gets that wall budget in the core, and a worker that has not
    answered within its batch's runs x run_timeout + WATCHDOG_GRACE_S is killed (its batch comes
    back as `timeout`). With `run_memory` (bytes) a worker whose resident memory passes it is
    killed (`memory`).

    The workers never see Ctrl-C (only the coordinator does, and closes the pool), and `close()`
    waits for every worker to exit: a closed pool leaves no process behind."""

    kind = "local"
    target_batch_s = 0.2

    def __init__(self, workers: int, run_timeout: Optional[float] = None, run_memory: Optional[int] = None) -> None:
        if workers < 1:
            raise ExecutorError(f"a local pool needs at least 1 worker, got {workers}")
        if run_memory is not None and not sys.platform.startswith("linux"):
            try:
                import psutil  # noqa: F401
            except ImportError:
                raise ExecutorError("run_memory needs Linux (/proc) or the psutil package to read the workers' memory") from None
        self.parallelism = workers
        self.run_timeout, self.run_memory = run_timeout, run_memory
        # No fork of a coordinator holding a DuckDB handle and threads. Elsewhere than POSIX,
        # multiprocessing's spawn (which imports the main module again in every worker).
        self._ctx = mp.get_context("spawn")
        self._slots: dict = {}  # slot -> (process, connection)
        self._queue: dict = {}  # slot -> deque of (batch id, runs) sent to its worker, oldest first
        self._ready: set = set()  # slots whose worker has said READY
        self._deadline: dict = {}  # slot -> (monotonic deadline, allowed seconds) of its first batch
        self._killed: dict = {}  # slot -> (kind, message): why the pool killed that worker
        self._memory_checked = 0.0
        self._deaths_in_a_row = 0
        try:
            for i in range(workers):
                self._start(i)
        except BaseException:
            self.close()
            raise

    def _start(self, slot: int) -> None:
        trim = self.run_memory is not None
        # The worker starts with SIGINT blocked (a signal mask survives fork and exec), so a
        # Ctrl-C sent to the terminal's process group cannot interrupt it while it starts up;
        # it then ignores SIGINT. Here, a Ctrl-C waits the few milliseconds of the start.
        masked = hasattr(signal, "pthread_sigmask")
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if masked else None
        try:
            if os.name == "posix":
                p = _Worker(slot, self.run_timeout, trim)
                parent = p.conn
            else:
                parent, child = self._ctx.Pipe(duplex=True)
                p = self._ctx.Process(target=_worker_main, args=(child, self.run_timeout, trim), name=f"tcplab-sweep-worker-{slot}", daemon=True)
                try:
                    p.start()
                finally:
                    child.close()
        finally:
            if masked:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
        self._slots[slot] = (p, parent)
        self._queue[slot] = deque()

    @property
    def pids(self) -> list:
        return [p.pid for p, _ in self._slots.values()]

    def capacity(self) -> int:
        return sum(PIPELINE_DEPTH - len(q) for q in self._queue.values())

    def submit(self, batch_id: int, base_json: str, tasks: list) -> None:
        slot = min((s for s in self._slots if len(self._queue[s]) < PIPELINE_DEPTH), key=lambda s: len(self._queue[s]))
        self._queue[slot].append((batch_id, len(tasks)))
        self._arm(slot)
        try:
            self._slots[slot][1].send((batch_id, base_json, tasks))
        except (BrokenPipeError, OSError):
            pass  # the worker is dead; wait() sees its sentinel and reports the batch lost

    def wait(self, timeout: float) -> list:
        self._watch()
        if self._deadline or self.run_memory is not None:
            timeout = min(timeout, MEMORY_CHECK_EVERY_S)  # come back to watch the workers
        by_conn = {self._slots[s][1]: s for s in self._slots if self._queue[s]}
        by_sentinel = {p.sentinel: s for s, (p, _) in self._slots.items()}
        ready = mp.connection.wait(list(by_conn) + list(by_sentinel), timeout)
        events = []
        for slot in dict.fromkeys(by_conn.get(r, by_sentinel.get(r)) for r in ready):
            events.extend(self._collect(slot))
        return events

    def _arm(self, slot: int) -> None:
        """Start the watchdog's clock of a slot's first batch, once its worker is ready."""
        if self.run_timeout is not None and self._queue.get(slot) and slot in self._ready and slot not in self._deadline:
            allowed = self._queue[slot][0][1] * self.run_timeout + WATCHDOG_GRACE_S
            self._deadline[slot] = (time.monotonic() + allowed, allowed)

    def _watch(self) -> None:
        """Kill a busy worker past its batch's deadline or over the memory limit; `_collect`
        then reports its batch with the reason."""
        if self.run_timeout is None and self.run_memory is None:
            return
        now = time.monotonic()
        check_memory = self.run_memory is not None and now - self._memory_checked >= MEMORY_CHECK_EVERY_S
        if check_memory:
            self._memory_checked = now
        for slot, q in self._queue.items():
            p, _ = self._slots[slot]
            if not q or slot in self._killed or not p.is_alive():
                continue
            deadline = self._deadline.get(slot)
            if deadline is not None and now > deadline[0]:
                why = ("timeout", f"no answer from the worker within {deadline[1]:g} s (the runs' run_timeout of {self.run_timeout:g} s each + {WATCHDOG_GRACE_S:g} s); worker killed")
            elif check_memory and (rss := _rss_bytes(p.pid)) is not None and rss > self.run_memory:
                why = ("memory", f"the worker's resident memory reached {_size(rss)}, over the run_memory limit of {_size(self.run_memory)}; worker killed")
            else:
                continue
            self._killed[slot] = why
            p.kill()

    def _collect(self, slot: int) -> list:
        p, conn = self._slots[slot]
        q = self._queue[slot]
        events = []
        if slot not in self._killed:
            try:
                while conn.poll():
                    msg = conn.recv()
                    if msg == READY:
                        self._ready.add(slot)
                        self._arm(slot)
                        continue
                    batch_id, res = msg
                    q.popleft()
                    self._deadline.pop(slot, None)
                    self._arm(slot)  # the worker has started its next batch
                    self._deaths_in_a_row = 0
                    events.append(("done", batch_id, res))
            except (EOFError, OSError):
                pass
        if p.is_alive():
            return events
        # The worker is gone: report its batches and start another in its place.
        p.join()
        conn.close()
        killed = self._killed.pop(slot, None)
        self._deadline.pop(slot, None)
        self._ready.discard(slot)
        if killed is None:
            self._deaths_in_a_row += 1  # a run the pool stopped says nothing about the installation
        if self._deaths_in_a_row > MAX_DEATHS_IN_A_ROW + len(self._slots):
            raise ExecutorError(f"sweep workers keep dying ({_death(p.exitcode)}, {self._deaths_in_a_row} times with no batch finished)")
        self._start(slot)
        if not q:
            return events
        batch_id, _ = q.popleft()
        if killed is not None:
            events.append((killed[0], batch_id, killed[1]))
        else:
            events.append(("lost", batch_id, f"worker process died ({_death(p.exitcode)})"))
        events.extend(("returned", b, None) for b, _ in q)  # never started: not the cause
        return events

    def close(self) -> None:
        """Stop every worker and wait for it: an idle one is told to exit, one with batches still
        queued (the sweep was interrupted or failed) is killed, as no one will read them."""
        for slot, (p, conn) in self._slots.items():
            if self._queue.get(slot):
                p.kill()
                continue
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        deadline = time.monotonic() + 5.0
        for p, conn in self._slots.values():
            p.join(max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join()
            conn.close()
        self._slots.clear()
        self._queue.clear()
        self._deadline.clear()
        self._killed.clear()
        self._ready.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --- Dask distributed ---------------------------------------------------------------------------


class DaskExecutor:
    """Batches as Dask tasks: `"local"` starts a LocalCluster of `workers` single-threaded
    processes; an address (`tcp://host:8786`) connects to a running scheduler; a `Client` is used
    as it is. Workers need this tcplab installed. Dask reschedules a task whose worker dies; a task
    that keeps killing workers comes back as `lost`."""

    kind = "dask"
    target_batch_s = 0.5  # a Dask task costs about a millisecond of scheduling

    def __init__(self, dask: Any, workers: Optional[int] = None, run_timeout: Optional[float] = None) -> None:
        self.run_timeout = run_timeout
        try:
            import distributed
        except ImportError as e:  # pragma: no cover - a dependency of tcplab
            raise ExecutorError(f"--dask needs the distributed package ({e})") from None
        self._distributed = distributed
        self._own_client = self._cluster = None
        if isinstance(dask, distributed.Client):
            self.client = dask
        elif dask == "local":
            import logging

            n = workers or _cores()
            self._cluster = distributed.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
            )
            self.client = self._own_client = distributed.Client(self._cluster)
        elif isinstance(dask, str) and ("://" in dask or ":" in dask):
            # As Dask takes it: `tcp://host:8786`, or `host:8786` (tcp:// understood).
            try:
                self.client = self._own_client = distributed.Client(dask, timeout="20s")
            except OSError as e:
                raise ExecutorError(f"cannot reach the Dask scheduler at {dask}: {e}") from None
        else:
            raise ExecutorError(f"--dask takes a scheduler address (tcp://host:8786 or host:8786) or 'local', got {dask!r}")
        threads = sum(w.get("nthreads", 1) for w in self.client.scheduler_info().get("workers", {}).values())
        self.parallelism = max(1, threads)
        self._inflight: dict = {}  # future -> batch id
        import uuid  # here, not at the top: a pool worker imports this module and needs neither

        self._token = uuid.uuid4().hex[:12]

    def capacity(self) -> int:
        return 2 * self.parallelism - len(self._inflight)  # one running and one queued per thread

    def submit(self, batch_id: int, base_json: str, tasks: list) -> None:
        fut = self.client.submit(run_batch, base_json, tasks, self.run_timeout, key=f"tcplab-batch-{self._token}-{batch_id}", pure=False)
        self._inflight[fut] = batch_id

    def wait(self, timeout: float) -> list:
        if not self._inflight:
            return []
        try:
            self._distributed.wait(list(self._inflight), timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return []
        events = []
        for fut in [f for f in self._inflight if f.done()]:
            batch_id = self._inflight.pop(fut)
            if fut.status == "finished":
                events.append(("done", batch_id, fut.result()))
            else:
                exc = fut.exception()
                events.append(("lost", batch_id, f"Dask task failed ({type(exc).__name__}: {exc})"))
            fut.release()
        return events

    def close(self) -> None:
        for fut in self._inflight:
            fut.cancel()
        self._inflight.clear()
        if self._own_client is not None:
            self._own_client.close()
        if self._cluster is not None:
            self._cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def make_executor(workers: Optional[int] = None, dask: Any = None, run_timeout: Optional[float] = None, run_memory: Optional[int] = None):
    """The executor for `tcplab.sweep`'s `workers`, `dask`, `run_timeout` (seconds) and
    `run_memory` (bytes) arguments. Every executor gives each run its wall budget in the core;
    only the local pool can also kill a worker, so `run_memory` needs it."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 0):
        raise ExecutorError(f"workers must be an integer >= 0 (0 = in this process), got {workers!r}")
    dasked = dask is not None and dask is not False
    if run_memory is not None and (dasked or workers == 0):
        where = "on Dask give the workers a memory limit (dask worker --memory-limit)" if dasked else "use workers >= 1"
        raise ExecutorError(f"run_memory is enforced by the local pool, which kills a worker over it; {where}")
    if dasked:
        return DaskExecutor(dask, workers, run_timeout)
    if workers == 0:
        return SerialExecutor(run_timeout)
    return LocalPool(workers or _cores(), run_timeout, run_memory)
