"""Where tournaments and training runs do their work: worker processes on this machine
(:class:`LocalBackend`) or a Ray cluster (:class:`RayBackend`, the optional extra
``pip install 'taluva-ai[ray]'``; docs/ray.md).

A backend makes :class:`Executor` objects; an executor runs module-level functions
``fn(*args)`` (picklable, with picklable arguments and results) in its workers and hands back
their results. The arena (:func:`taluva_ai.tournament.run_tournament`) and the AlphaZero training
loop submit their work through an executor, so each holds one copy of its logic whatever runs
it:

- :class:`InlineExecutor`: in this process, one call at a time, run when it is waited for;
- :class:`ProcessExecutor`: ``slots`` spawned worker processes (:mod:`concurrent.futures`);
- :class:`RayExecutor`: Ray tasks (``stateful=False``: a task whose worker process dies is
  retried up to ``max_retries`` times) or ``slots`` Ray actors (``stateful=True``: workers
  that keep state between calls, such as self-play workers; an actor that dies is restarted
  up to ``max_restarts`` times and the call it was running is retried on the new actor).

A long job that alternates stateful workers and tasks (a training run: self-play actors, then
gating tasks, iteration after iteration) reserves its CPUs first (:meth:`Backend.reserve`; on
Ray a placement group of one-CPU bundles): its actors then sit in the bundles without holding
their CPUs, so the tasks run on the same CPUs while the actors are idle, and the actors live
from one iteration to the next.

A retried task or actor call runs its function again: such functions are written so that the
second run completes the work of the first (a tournament game's record is written atomically
and the game counted once, from the result the driver receives; a self-play worker keeps each
finished game in a journal and, restarted, plays only the games it had not finished).

Worker processes do not outlive the process that started them (:func:`watch_parent`): if it
dies without stopping them (SIGKILL, a crash), each worker ends at once, on Linux through a
parent-death signal, elsewhere within :data:`PARENT_POLL_S` seconds, and the work functions
call :func:`exit_if_orphaned` before they write into the run directory; so a killed run
leaves nothing running that writes into its directory, and its resume is exact.
"""

from __future__ import annotations

import concurrent.futures.process
import contextlib
import ctypes
import logging
import multiprocessing
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor
from concurrent.futures import wait as _futures_wait
from types import TracebackType
from typing import Any

from taluva_ai.errors import BackendError

#: How to install the Ray extra (named in the error raised when Ray is missing).
RAY_INSTALL = "pip install 'taluva-ai[ray]'"

#: Retries of a Ray task whose worker process died, and restarts of a Ray actor that died.
DEFAULT_MAX_RETRIES = 3
DEFAULT_MAX_RESTARTS = 3

_ADDRESS = re.compile(r"^(ray://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.\-]+):([0-9]{1,5})$")


def cpu_count() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        return os.cpu_count() or 1


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """Block SIGINT in this thread while worker processes are started: they inherit the
    blocked mask until their initializer unblocks it (or ignores SIGINT); a Ctrl-C meanwhile
    is delivered to this process (KeyboardInterrupt) as soon as the block is lifted."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


# -- orphaned workers -------------------------------------------------------------------------

#: Seconds between two checks of a worker's watch thread that its parent still lives.
PARENT_POLL_S = 0.5

#: Exit status of a worker that ended because its parent died.
ORPHAN_EXIT_STATUS = 3

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_parent_pid: int | None = None  # the process that started this worker (None: not a worker)


def set_parent_death_signal(signum: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send ``signum`` to this process when its parent ends (Linux
    ``prctl(PR_SET_PDEATHSIG)``, through :mod:`ctypes`). Linux sends it when the *thread* that
    started this process ends, so it is set only for workers started from their parent's main
    thread. Returns whether it was set (False on other systems, or if the call failed)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0)) == 0
    except (OSError, AttributeError):  # pragma: no cover (no libc prctl)
        return False


def orphaned() -> bool:
    """Whether this worker's parent (the process that started it, see :func:`watch_parent`)
    has ended: this process was reparented (``os.getppid()`` changed), or the pipe the
    parent holds open for it (:func:`multiprocessing.parent_process`) was closed. False in a
    process that is not such a worker."""
    if _parent_pid is None:
        return False
    if os.getppid() != _parent_pid:
        return True
    parent = multiprocessing.parent_process()
    return parent is not None and parent.pid == _parent_pid and not parent.is_alive()


def exit_if_orphaned() -> None:
    """End this worker at once (``os._exit``, status :data:`ORPHAN_EXIT_STATUS`: no cleanup,
    no file written) if its parent has ended (:func:`orphaned`). Work functions call it
    between games and before they write into a run directory."""
    if orphaned():
        os._exit(ORPHAN_EXIT_STATUS)


def watch_parent(parent_pid: int, death_signal: bool = True) -> None:
    """Make this worker process end when ``parent_pid`` (its parent) ends: a parent-death
    signal (SIGKILL, :func:`set_parent_death_signal`) where the system has one and
    ``death_signal`` is set, and everywhere a daemon thread that checks every
    :data:`PARENT_POLL_S` seconds (:func:`exit_if_orphaned`). A parent that died before the
    signal was set is noticed here, at once."""
    global _parent_pid
    _parent_pid = int(parent_pid)
    if death_signal:
        set_parent_death_signal(signal.SIGKILL)
    exit_if_orphaned()  # the parent may have died before the signal was set

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL_S)
            exit_if_orphaned()

    threading.Thread(target=watch, name="taluva-parent-watch", daemon=True).start()


def _start_worker(parent_pid: int, death_signal: bool,
                  initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    """A :class:`ProcessExecutor` worker's initializer: :func:`watch_parent`, then the
    executor's own ``initializer(*initargs)``."""
    watch_parent(parent_pid, death_signal)
    if initializer is not None:
        initializer(*initargs)


# -- executors --------------------------------------------------------------------------------


@contextlib.contextmanager
def sigint_deferred(enabled: bool = True) -> Iterator[threading.Event]:
    """While workers play, a Ctrl-C only sets the yielded event, which the caller's wait loop
    checks (waiting with a timeout) and turns into ``KeyboardInterrupt`` there: an exception
    raised asynchronously inside ``concurrent.futures`` or Ray (between a lock's acquire and
    its ``with``) can leave a lock held, and an executor thread then blocks the interpreter's
    exit forever (seen under heavy load). A Ctrl-C after the last check is raised on leaving.
    Not ``enabled`` (calls that run in this process, :attr:`Executor.in_process`, where a
    Ctrl-C must interrupt the call itself) or outside the main thread, nothing changes."""
    event = threading.Event()
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield event
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: event.set())
    try:
        yield event
    finally:
        signal.signal(signal.SIGINT, previous)
        if event.is_set():
            raise KeyboardInterrupt


class Executor:
    """Runs ``fn(*args)`` calls in workers (see the module docstring).

    Attributes:
        slots: how many calls run at the same time.
        in_process: the calls run in this process (inside :meth:`wait`).
    """

    slots: int = 1
    in_process: bool = False

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Queue ``fn(*args)``; returns its handle (hashable)."""
        raise NotImplementedError

    def wait(self, handles: Iterable[Any], timeout: float | None = None) -> list[Any]:
        """The handles among ``handles`` whose calls have finished, waiting up to ``timeout``
        seconds (None: until one has) for the first; empty when none finished in time."""
        raise NotImplementedError

    def result(self, handle: Any) -> Any:
        """The result of a finished call; raises the call's error."""
        raise NotImplementedError

    def close(self, cancel: bool = False) -> None:
        """Stop the workers; with ``cancel``, at once (calls in progress are abandoned),
        otherwise after the submitted calls have finished."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(cancel=exc is not None)


class _Call:
    __slots__ = ("args", "done", "error", "fn", "value")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn, self.args = fn, args
        self.done = False
        self.value: Any = None
        self.error: Exception | None = None


class InlineExecutor(Executor):
    """Runs the calls in this process, one at a time: a call runs when :meth:`wait` is asked
    for it (so calls submitted ahead and never waited for never run)."""

    in_process = True

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        return _Call(fn, args)

    def wait(self, handles: Iterable[Any], timeout: float | None = None) -> list[Any]:
        calls = list(handles)
        done = [c for c in calls if c.done]
        if done or not calls:
            return done
        c = calls[0]
        try:
            c.value = c.fn(*c.args)
        except Exception as e:
            c.error = e
        c.done = True
        return [c]

    def result(self, handle: Any) -> Any:
        if handle.error is not None:
            raise handle.error
        return handle.value


class ProcessExecutor(Executor):
    """``slots`` worker processes (``spawn``), each started with ``initializer(*initargs)``;
    they live until :meth:`close`, or until this process ends (:func:`watch_parent`: a worker
    whose parent was killed ends too, writing nothing more). Calls are submitted from the
    thread that made the executor (the workers start in it, and Linux's parent-death signal,
    set when that thread is the main thread, follows the thread)."""

    def __init__(self, slots: int, initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = ()) -> None:
        self.slots = slots
        main = threading.current_thread() is threading.main_thread()
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(
            max_workers=slots, mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker, initargs=(os.getpid(), main, initializer, initargs))

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self._pool is None:
            raise RuntimeError("the executor is closed")
        with sigint_blocked():  # a submit may start a worker process
            return self._pool.submit(fn, *args)

    def wait(self, handles: Iterable[Any], timeout: float | None = None) -> list[Any]:
        done, _ = _futures_wait(list(handles), timeout=timeout, return_when=FIRST_COMPLETED)
        return list(done)

    def result(self, handle: Any) -> Any:
        return handle.result()

    def close(self, cancel: bool = False) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if not cancel:
            pool.shutdown(wait=True)
            return
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=10)
        # let the pool's manager thread finish closing its wake-up pipe now: left running, it
        # races the interpreter's exit hook that writes to that pipe ("Exception ignored in
        # <module 'threading'>: OSError: Bad file descriptor" on stderr after a Ctrl-C)
        manager = getattr(pool, "_executor_manager_thread", None)
        if manager is not None and manager.is_alive():
            manager.join(timeout=10)
        # A manager still closing after that (a loaded machine) races the exit hook all the same:
        # it was woken by the shutdown above and needs no second wake-up, so take it out of the
        # hook's list (CPython 3.11's concurrent.futures.process._threads_wakeups; the
        # interpreter still waits for the thread at exit)
        wakeups = getattr(concurrent.futures.process, "_threads_wakeups", None)
        if manager is not None and wakeups is not None:
            wakeups.pop(manager, None)


def _ray_call(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """A Ray task: ``fn(*args)``."""
    return fn(*args)


class _RayWorker:
    """A Ray actor that runs ``fn(*args)`` calls (state kept in its process's modules)."""

    def __init__(self, initializer: Callable[..., None] | None,
                 initargs: tuple[Any, ...]) -> None:
        if initializer is not None:
            initializer(*initargs)

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        return fn(*args)


class RayExecutor(Executor):
    """Calls as Ray tasks (``stateful=False``) or on ``slots`` Ray actors (``stateful=True``,
    each started with ``initializer(*initargs)``; the ``i``-th call goes to actor
    ``i mod slots``). Each task or actor takes one CPU of the cluster; inside a reservation
    (:meth:`RayBackend.reserve`) actor ``i`` sits in bundle ``i`` and holds no CPU. Made by
    :meth:`RayBackend.executor`.

    Raises:
        BackendError: more actors than the reservation's bundles.
    """

    def __init__(self, backend: RayBackend, slots: int, stateful: bool,
                 initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = ()) -> None:
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        self.ray = backend.ray
        self.slots = slots
        group = backend.group
        task_opts: dict[str, Any] = {"num_cpus": 1, "max_retries": backend.max_retries}
        if group is not None:
            task_opts["scheduling_strategy"] = PlacementGroupSchedulingStrategy(group)
        self._task = backend.remote_task.options(**task_opts)
        self._submitted: set[Any] = set()  # the tasks whose result has not been taken
        self.actors: list[Any] = []
        if stateful:
            if group is not None and slots > group.bundle_count:
                raise BackendError(f"{slots} actors for a reservation of "
                                   f"{group.bundle_count} CPUs")
            for i in range(slots):
                opts: dict[str, Any] = {"num_cpus": 1, "max_restarts": backend.max_restarts,
                                        "max_task_retries": backend.max_restarts}
                if group is not None:
                    opts["num_cpus"] = 0
                    opts["scheduling_strategy"] = PlacementGroupSchedulingStrategy(
                        group, placement_group_bundle_index=i)
                self.actors.append(backend.remote_actor.options(**opts).remote(initializer,
                                                                               initargs))
        self._next = 0

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self.actors:
            ref = self.actors[self._next % len(self.actors)].call.remote(fn, args)
            self._next += 1
        else:
            ref = self._task.remote(fn, args)
            self._submitted.add(ref)
        return ref

    def wait(self, handles: Iterable[Any], timeout: float | None = None) -> list[Any]:
        refs = list(handles)
        if not refs:
            return []
        ready, rest = self.ray.wait(refs, num_returns=1, timeout=timeout)
        if ready and rest:
            more, _ = self.ray.wait(rest, num_returns=len(rest), timeout=0)
            ready = [*ready, *more]
        return list(ready)

    def result(self, handle: Any) -> Any:
        """The call's result; a call that raised raises its own exception here (not Ray's
        wrapper, whose message carries the remote traceback), so its one-line message
        reaches the user as with local workers."""
        self._submitted.discard(handle)
        try:
            return self.ray.get(handle)
        except self.ray.exceptions.RayTaskError as e:
            cause = getattr(e, "cause", None)
            if isinstance(cause, Exception):
                raise cause from None
            raise

    def close(self, cancel: bool = False) -> None:
        if cancel:
            for ref in self._submitted:
                with contextlib.suppress(Exception):
                    self.ray.cancel(ref, force=True)
        self._submitted = set()
        actors, self.actors = self.actors, []
        for a in actors:
            with contextlib.suppress(Exception):
                self.ray.kill(a, no_restart=True)


# -- backends ---------------------------------------------------------------------------------


class Backend:
    """Makes executors.

    Attributes:
        name: ``"local"`` or ``"ray"``.
        worker_device: the torch device of the self-play workers, or None for the driver's
            (Ray's actors are CPU workers: the nodes need not have the driver's GPU).
    """

    name = "local"
    worker_device: str | None = None

    def connect(self) -> None:
        """Make sure the workers can be reached (for Ray: join the cluster).

        Raises:
            BackendError: they cannot.
        """

    def cpus(self) -> int:
        """CPUs available to the workers (this machine's, or the cluster's)."""
        return cpu_count()

    @contextlib.contextmanager
    def reserve(self, cpus: int) -> Iterator[None]:
        """Hold ``cpus`` CPUs for the executors made inside the block (see the module
        docstring); nothing to do on this machine.

        Raises:
            BackendError: the cluster cannot give them.
        """
        yield

    def executor(self, slots: int, *, stateful: bool = False,
                 initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = ()) -> Executor:
        """An executor of ``slots`` workers (>= 1); ``stateful``: workers that keep state
        between calls (processes always do; with Ray, actors instead of tasks);
        ``initializer(*initargs)`` starts each worker process or actor.

        Raises:
            ValueError: ``slots`` < 1.
        """
        raise NotImplementedError

    def describe(self) -> str:
        """The backend, in words."""
        return f"local ({self.cpus()} CPUs)"

    def close(self) -> None:
        """Let go of what the backend started."""


class LocalBackend(Backend):
    """Worker processes on this machine; one slot runs in this process."""

    def executor(self, slots: int, *, stateful: bool = False,
                 initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = ()) -> Executor:
        if slots < 1:
            raise ValueError(f"slots must be >= 1, got {slots}")
        if slots == 1:
            return InlineExecutor()
        return ProcessExecutor(slots, initializer, initargs)


def import_ray() -> Any:
    """The ``ray`` module.

    Raises:
        BackendError: Ray is not installed (the message says how to install it).
    """
    try:
        import ray
    except ImportError as e:
        raise BackendError(f"--ray needs Ray, which is not installed here ({e}); install it "
                           f"with: {RAY_INSTALL}") from None
    return ray


def parse_ray_address(text: str) -> str:
    """Check a ``--ray`` value: ``"auto"`` (the Ray cluster this machine belongs to, else a
    new Ray instance on this machine), ``"local"`` (a new Ray instance on this machine),
    ``"HOST:PORT"`` (the head node of a cluster, the address ``ray start --head`` prints) or
    ``"ray://HOST:PORT"`` (Ray Client). Returns it stripped.

    Raises:
        BackendError: anything else (the message lists the accepted forms).
    """
    t = str(text).strip()
    if t in ("auto", "local"):
        return t
    m = _ADDRESS.match(t)
    if m is not None and 1 <= int(m.group(3)) <= 65535:
        return t
    raise BackendError(f"--ray: {text!r} is not a Ray address; give auto, local, HOST:PORT "
                       "(e.g. 10.0.0.5:6379, the address 'ray start --head' prints) or "
                       "ray://HOST:PORT")


#: The environment variable that marks the processes of a Ray instance this process starts
#: (:class:`RayBackend` with ``--ray local`` or ``auto``): its value, a random token, is in the
#: environment Ray's processes start with (set only while ``ray.init`` starts them), so that
#: :data:`_RAY_REAPER` tells them from the driver's other children.
RAY_OWNER_ENV = "TALUVA_RAY_OWNER"

#: The program of the reaper that a :class:`RayBackend` starts beside a Ray instance of its
#: own (Linux; ``python -c _RAY_REAPER DRIVER_PID MARK``). Every 2 s it notes the processes of
#: the instance: the driver's children whose starting environment holds ``MARK`` (the GCS, the
#: raylet, ...) and all their descendants, with their start times. It ends when the driver
#: closes its pipe: after ``done`` (the driver shut Ray down), at once; without it (the driver
#: died: SIGKILL, a crash), after killing every noted process still running. Ray ends the
#: driver's children with it (a parent-death signal), but the raylet's agents
#: (``ray::DashboardAgent``, ``ray::RuntimeEnvAgent``), seeing their raylet die, report it to
#: the dead GCS and wait 60 s for an answer: without the reaper they outlived a killed run by a
#: minute or more. (Their own environment cannot be read to tell them: their process title
#: overwrites it.)
_RAY_REAPER = r"""
import os, select, signal, sys, time
for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
    signal.signal(s, signal.SIG_IGN)
driver, mark, me = int(sys.argv[1]), sys.argv[2].encode(), os.getpid()

def processes():
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    rest = f.read().rsplit(b")", 1)[1].split()
                if rest[0] != b"Z":  # a zombie has ended: nothing to kill
                    out[int(name)] = (int(rest[1]), rest[19])  # parent, start time
            except (OSError, IndexError, ValueError):
                pass
    return out

def marked(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return mark in f.read().split(b"\0")
    except OSError:
        return False

roots, checked, noted, got = set(), set(), {}, b""
while True:
    if select.select([0], [], [], 2.0)[0]:
        data = os.read(0, 64)
        if data:
            got = (got + data)[-4:]
            continue
        break
    procs = processes()
    for pid, (parent, start) in procs.items():
        if parent == driver and pid != me and (pid, start) not in checked:
            checked.add((pid, start))
            if marked(pid):
                roots.add((pid, start))
    kids = {}
    for pid, (parent, start) in procs.items():
        kids.setdefault(parent, []).append((pid, start))
    todo = [r for r in roots if procs.get(r[0], (0, None))[1] == r[1]]
    while todo:
        pid, start = todo.pop()
        noted[pid] = start
        todo += kids.get(pid, [])
if got == b"done":
    sys.exit(0)
end = time.monotonic() + 10
while noted and time.monotonic() < end:
    procs = processes()
    noted = {p: s for p, s in noted.items() if procs.get(p, (0, None))[1] == s}
    for pid in noted:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.2)
"""


class RayBackend(Backend):
    """Work on a Ray cluster (docs/ray.md). Connects on first use (:meth:`connect`); a Ray
    already initialised in this process (``ray.init``) is used as it is.

    Args:
        address: see :func:`parse_ray_address`.
        max_retries: retries of a task whose worker process died.
        max_restarts: restarts of an actor that died (and retries of the call it ran).

    Raises:
        BackendError: Ray is not installed, or a malformed address.
    """

    name = "ray"
    worker_device = "cpu"

    def __init__(self, address: str = "auto", *, max_retries: int = DEFAULT_MAX_RETRIES,
                 max_restarts: int = DEFAULT_MAX_RESTARTS) -> None:
        self.address = parse_ray_address(address)
        self.ray = import_ray()
        self.max_retries = max_retries
        self.max_restarts = max_restarts
        self._started = False
        self._remote: tuple[Any, Any] | None = None
        self.group: Any = None  # the placement group of reserve()
        self._reaper: subprocess.Popen[bytes] | None = None

    def connect(self) -> None:
        """Join the cluster (``ray.init``) unless this process already has.

        Raises:
            BackendError: no cluster answers at the address.
        """
        ray = self.ray
        if not ray.is_initialized():
            address = {"auto": None, "local": "local"}.get(self.address, self.address)
            if address not in (None, "local"):
                _check_reachable(self.address)
            token = None
            if address in (None, "local") and sys.platform.startswith("linux"):
                token = secrets.token_hex(16)  # marks the processes of a new Ray instance
                os.environ[RAY_OWNER_ENV] = token
            try:
                ray.init(address=address, include_dashboard=False,
                         logging_level=logging.WARNING)
            except (ConnectionError, ValueError, RuntimeError, TimeoutError) as e:
                raise BackendError(
                    f"--ray {self.address}: no Ray cluster could be reached ({e}); start "
                    "one with 'ray start --head' (docs/ray.md)") from None
            finally:
                if token is not None:
                    os.environ.pop(RAY_OWNER_ENV, None)
            self._started = True
            if token is not None:
                self._start_reaper(f"{RAY_OWNER_ENV}={token}")
        if self._remote is None:
            self._remote = (ray.remote(_ray_call), ray.remote(_RayWorker))

    @property
    def remote_task(self) -> Any:
        """The Ray remote function that runs a call."""
        self.connect()
        assert self._remote is not None
        return self._remote[0]

    @property
    def remote_actor(self) -> Any:
        """The Ray actor class of stateful workers."""
        self.connect()
        assert self._remote is not None
        return self._remote[1]

    def cpus(self) -> int:
        self.connect()
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    @contextlib.contextmanager
    def reserve(self, cpus: int, timeout: float = 120.0) -> Iterator[None]:
        """A placement group of ``cpus`` one-CPU bundles (spread over the nodes) for the
        executors made inside the block: actors in one bundle each, holding no CPU, and tasks
        taking one CPU of any bundle. Removed (its actors with it) when the block ends.

        Raises:
            BackendError: the cluster has fewer CPUs, or they are not free within ``timeout``
                seconds.
        """
        from ray.util.placement_group import placement_group, remove_placement_group

        have = self.cpus()
        if cpus > have:
            raise BackendError(f"the Ray cluster has {have} CPUs; {cpus} workers need one "
                               "each (set workers in the config, or add nodes)")
        group = placement_group([{"CPU": 1}] * cpus, strategy="SPREAD")
        ready, _ = self.ray.wait([group.ready()], timeout=timeout)
        if not ready:
            remove_placement_group(group)
            raise BackendError(f"the Ray cluster did not free {cpus} CPUs within {timeout:g} "
                               "s (other jobs hold them; see 'ray status')")
        self.group = group
        try:
            yield
        finally:
            self.group = None
            with contextlib.suppress(Exception):
                remove_placement_group(group)

    def executor(self, slots: int, *, stateful: bool = False,
                 initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = ()) -> Executor:
        if slots < 1:
            raise ValueError(f"slots must be >= 1, got {slots}")
        self.connect()
        return RayExecutor(self, slots, stateful, initializer, initargs)

    def describe(self) -> str:
        self.connect()
        nodes = sum(1 for n in self.ray.nodes() if n.get("Alive"))
        return f"Ray ({nodes} node{'s' if nodes != 1 else ''}, {self.cpus()} CPUs)"

    def _start_reaper(self, mark: str) -> None:
        """Start :data:`_RAY_REAPER` for the Ray processes whose starting environment holds
        ``mark`` and their descendants (in a session of its own, so a Ctrl-C to the terminal's
        group leaves it to its pipe)."""
        env = {k: v for k, v in os.environ.items() if k != RAY_OWNER_ENV}
        try:
            self._reaper = subprocess.Popen(
                [sys.executable, "-c", _RAY_REAPER, str(os.getpid()), mark],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                start_new_session=True)
        except OSError:  # pragma: no cover  (no reaper: the agents outlive a killed run)
            self._reaper = None

    def close(self) -> None:
        if self._started and self.ray.is_initialized():
            self.ray.shutdown()
        self._started = False
        self._remote = None
        reaper, self._reaper = self._reaper, None
        if reaper is not None and reaper.stdin is not None:
            with contextlib.suppress(OSError):
                reaper.stdin.write(b"done")
                reaper.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                reaper.wait(timeout=5)


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast when nothing listens at a ``HOST:PORT`` address (``ray.init`` would retry
    for minutes).

    Raises:
        BackendError: no connection within ``timeout`` seconds.
    """
    m = _ADDRESS.match(address)
    assert m is not None  # checked by parse_ray_address
    host, port = m.group(2).strip("[]"), int(m.group(3))
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as e:
        raise BackendError(f"--ray {address}: no Ray cluster answers there "
                           f"({e.strerror or e}); start one with 'ray start --head' on the "
                           "head node (docs/ray.md)") from None


def make_backend(ray_address: str | None) -> Backend:
    """:class:`LocalBackend` for None, else a :class:`RayBackend` for the ``--ray`` value.

    Raises:
        BackendError: Ray is not installed, or a malformed address.
    """
    if ray_address is None:
        return LocalBackend()
    return RayBackend(ray_address)
