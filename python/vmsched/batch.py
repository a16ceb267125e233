"""One batch layer: many independent runs on local processes or a Ray cluster.

`vmsched sweep`, `alert`, `compare` and `reproduce` all hand their runs to
`run_batches` (or `run_all`): a module-level function `fn` and a list of items,
each `fn(item)` independent of the others. The items are cut into *batches*
(several items per task, so each task does enough work to pay for sending it),
the batches run on

- `backend="local"` (the default): `jobs` processes forked from this one (default:
  every CPU), each fed one batch at a time through its own pipe, or this process
  alone when `jobs` is 1;
- `backend="ray"`: tasks on a Ray cluster (`address="HOST:PORT"` of an existing
  one; without an address Ray starts a private one on this machine, which is
  shut down at the end). Ray is an optional extra: `pip install 'vmsched[ray]'`.

Results come back batch by batch as they finish (`run_batches` is a generator),
so a caller can write each batch to disk at once (and can have the worker encode
the batch first, `encode=`, so that the main process, which serves every worker,
does little per run; `Workers` starts the workers ahead, while the caller plans);
`run_all` collects them in item order, so results never depend on the backend,
the number of workers or the order batches finish in. A run that raises is
recorded as a `Failure` (the error's type and text) and the other runs go on;
`run_all(..., fail_fast=True)` re-raises the first error instead, as a command
whose every run is needed does.

Interrupting (Ctrl-C, or SIGTERM where the command turns it into
KeyboardInterrupt) stops the workers at once: local workers are terminated,
Ray tasks cancelled, and nothing of an unfinished batch is returned.

Resuming: `run_all(..., store=RunStore(folder, resume))` keeps each finished
run's result in `folder/.vmsched-runs/` (one file per finished batch, written
whole or not at all; a run is named by a hash of the function and the item), so
a command that was interrupted and is started again with `resume=True`
(`--resume`) skips the runs already done and ends with the results an
uninterrupted command gives (a run is deterministic: the same item gives the
same result). `sweep` keeps its own Parquet parts instead, being one row set.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import pickle
import signal
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vmsched.errors import ScenarioError, WorkerLost

#: The backends `backend=` accepts.
BACKENDS = ("local", "ray")
#: Batches per worker when the batch size is chosen automatically: enough that the
#: workers finish together and progress moves, few enough that each task carries
#: many runs.
BATCHES_PER_WORKER = 8
#: Largest automatic batch (runs per task).
MAX_AUTO_BATCH = 50


@dataclass(frozen=True)
class Failure:
    """A run that raised: the exception's type and message (and the exception, when it
    could be carried back)."""

    error_type: str
    message: str
    exception: BaseException | None = None

    def __str__(self) -> str:
        return f"{self.error_type}: {self.message}"


def check_backend(backend: str, address: str | None = None, *, path: str = "--backend") -> str:
    """The backend name, checked (ScenarioError if unknown or if Ray is not installed)."""
    if backend not in BACKENDS:
        raise ScenarioError(
            f'"{backend}" is not a backend; expected one of {", ".join(BACKENDS)}', path=path
        )
    if address is not None and backend != "ray":
        raise ScenarioError(
            f"{address} applies to the ray backend only; expected --backend ray as well",
            path="--address",
        )
    if backend == "ray":
        try:
            import ray  # noqa: F401
        except ModuleNotFoundError:
            raise ScenarioError(
                "ray is not installed; expected it installed with: pip install 'vmsched[ray]'",
                path=path,
            ) from None
    return backend


def check_jobs(jobs: int | None, n_items: int | None = None, *, path: str = "--jobs") -> int:
    """`jobs`, checked (an integer >= 1), or the number of CPUs (at most one per item)."""
    if jobs is None:
        n = os.cpu_count() or 1
        return max(1, min(n, n_items)) if n_items else n
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ScenarioError(f"{jobs!r} is not allowed; expected an integer >= 1", path=path)
    return jobs


def add_backend_options(parser: Any) -> None:
    """`--jobs`, `--backend`, `--address` and `--no-figures` on a command's argparse
    parser: the options of every command that runs through the batch layer."""
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="parallel simulations and figures (default: number of CPUs; with Ray, its CPUs)",
    )
    parser.add_argument(
        "--backend",
        default="local",
        choices=BACKENDS,
        help="where the runs and figures go: local processes (default) or a Ray cluster",
    )
    parser.add_argument(
        "--address",
        default=None,
        metavar="HOST:PORT",
        help="the Ray cluster (with --backend ray; default: a private one on this machine)",
    )
    parser.add_argument(
        "--no-figures", action="store_true", help="skip the figures (tables and data only)"
    )


def batch_size_for(n_items: int, workers: int, batch_size: int | None = None) -> int:
    """Runs per task: `batch_size` if given, else about BATCHES_PER_WORKER batches per
    worker, at most MAX_AUTO_BATCH runs each (the largest batch of `batch_sizes`)."""
    if batch_size is not None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ScenarioError(
                f"{batch_size!r} is not allowed; expected an integer >= 1", path="--batch-size"
            )
        return batch_size
    per = math.ceil(n_items / max(1, workers * BATCHES_PER_WORKER))
    return max(1, min(per, MAX_AUTO_BATCH))


def batch_sizes(n_items: int, workers: int, batch_size: int | None = None) -> list[int]:
    """How `n_items` runs are cut into tasks, in the order they are handed out. A given
    `batch_size` cuts them evenly. Chosen automatically, the batches are
    `batch_size_for`'s size while much work is left, then shrink (each at most the work
    left over twice the workers, but not below an eighth of the full size): the workers
    then run out of work within a small batch of each other, where equal batches could
    leave one worker alone on a whole batch at the end."""
    size = batch_size_for(n_items, workers, batch_size)
    if batch_size is not None or workers <= 1:
        return [size] * (n_items // size) + ([n_items % size] if n_items % size else [])
    floor = max(1, size // 8)
    out, left = [], n_items
    while left > 0:
        b = min(left, size, max(floor, math.ceil(left / (2 * workers))))
        out.append(b)
        left -= b
    return out


def _run_batch(
    fn: Callable[[Any], Any],
    batch: list[tuple[int, Any]],
    encode: Callable[[list[tuple[int, Any]], list[tuple[int, Any]]], Any] | None = None,
) -> Any:
    """Run one batch (in a worker, or in-process): [(index, result or Failure)], or what
    `encode(batch, that list)` makes of it (in the worker too)."""
    out = []
    for index, item in batch:
        try:
            out.append((index, fn(item)))
        except Exception as exc:  # noqa: BLE001 - recorded, the batch goes on
            out.append((index, _failure(exc)))
    return out if encode is None else encode(batch, out)


def _failure(exc: BaseException) -> Failure:
    try:
        pickle.loads(pickle.dumps(exc))
        carried: BaseException | None = exc
    except Exception:  # noqa: BLE001 - an exception that cannot travel keeps its text
        carried = None
    return Failure(type(exc).__name__, str(exc), carried)


def _worker_init() -> None:
    # The main process handles Ctrl-C (and terminates the workers); a worker that took
    # the terminal's SIGINT itself would print a traceback per process. SIGTERM (how the
    # main process stops a worker) ends it quietly, whatever handler it inherited.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _cut(items: Sequence[Any], sizes: Sequence[int], skip: set[int]) -> list[list[tuple[int, Any]]]:
    todo = [(i, it) for i, it in enumerate(items) if i not in skip]
    out, k = [], 0
    for size in sizes:
        out.append(todo[k : k + size])
        k += size
    return out


class _Pool:
    """Local worker processes (forked), each fed one batch at a time through its own
    pipe, the results read in this thread as they come. (multiprocessing.Pool's
    handler threads spin while a large result is in its pipe: here nothing runs in the
    main process between results.) A worker that dies (killed, out of memory) is an
    error, not a hang."""

    def __init__(self, count: int) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        self.procs: list[Any] = []
        self.conns: list[Any] = []
        self.conns_released: list[Any] = []
        for _ in range(count):
            mine, theirs = ctx.Pipe(duplex=True)
            proc = ctx.Process(target=_serve, args=(theirs, mine), daemon=True)
            proc.start()
            theirs.close()
            self.procs.append(proc)
            self.conns.append(mine)

    def imap_unordered(self, func: Callable[[Any], Any], tasks: Sequence[Any]) -> Iterator[Any]:
        """func(task) of every task, in the order they finish."""
        queue: deque[tuple[Any, Callable[[Any], Any], Any]] = deque(
            (None, func, task) for task in tasks
        )
        for _, value in self.imap_queue(queue):
            yield value

    def imap_queue(
        self, queue: deque[tuple[Any, Callable[[Any], Any], Any]]
    ) -> Iterator[tuple[Any, Any]]:
        """(tag, func(task)) of every (tag, func, task) in `queue`, in the order they
        finish. The caller may add tasks to `queue` while it reads the results (a
        pipeline: the next stage of a piece of work goes in as soon as its first stage is
        back); a worker left idle takes one after each result. Ends when the queue is
        empty and every worker idle."""
        from multiprocessing.connection import wait

        idle = deque(range(len(self.conns)))
        busy: dict[Any, tuple[int, Any]] = {}

        def feed() -> None:
            while idle and queue:
                k = idle.popleft()
                tag, func, task = queue.popleft()
                self.conns[k].send((func, task))
                busy[self.conns[k]] = (k, tag)

        feed()
        while busy:
            for conn in wait(list(busy)):
                k, tag = busy.pop(conn)
                try:
                    ok, value = conn.recv()
                except EOFError:
                    proc = self.procs[k]
                    proc.join(timeout=5)
                    code = proc.exitcode
                    how = (
                        f"killed by {signal.Signals(-code).name}"
                        if code is not None and code < 0
                        else f"exit status {code}"
                    )
                    raise WorkerLost(
                        f"worker process {proc.pid} ended before returning its batch ({how}; "
                        "out of memory, or killed)"
                    ) from None
                if not ok:
                    raise value
                idle.append(k)
                feed()
                yield tag, value
                feed()

    def release(self) -> None:
        """No more batches: each worker exits once it has read this."""
        for conn in self.conns:
            try:
                conn.send(None)
            except OSError:
                pass  # already gone
        self.conns_released, self.conns = self.conns, []

    def close(self, abort: bool = False) -> None:
        """Wait for the workers to exit (`abort`: stop them at once first)."""
        if abort:
            for proc in self.procs:
                if proc.is_alive():
                    proc.terminate()
        else:
            self.release()
        for proc in self.procs:
            proc.join()
        for conn in self.conns + self.conns_released:
            conn.close()
        self.procs, self.conns, self.conns_released = [], [], []


def _serve(conn: Any, parents: Any) -> None:
    """A local worker: run (func, task) messages until told to stop (None or EOF)."""
    parents.close()
    _worker_init()
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        func, task = message
        try:
            reply: tuple[bool, Any] = (True, func(task))
        except Exception as exc:  # noqa: BLE001 - raised again in the main process
            reply = (False, exc)
        try:
            conn.send(reply)
        except Exception as exc:  # noqa: BLE001 - a result or error that cannot travel
            conn.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))


class Workers:
    """The workers of a backend, started before the runs are known (so that a caller
    prepares its runs while they start: forking the local pool, or starting a private
    Ray cluster, which takes seconds) and used by `run_batches(..., workers=...)`.

    `n_items`: at most how many runs there will be (no more local processes are started
    than that). Local with one job: no process, the runs go in this one. A context
    manager: leaving it stops the workers (at once on an exception)."""

    def __init__(
        self,
        backend: str = "local",
        jobs: int | None = None,
        address: str | None = None,
        n_items: int | None = None,
    ) -> None:
        check_backend(backend, address)
        self.backend = backend
        self.jobs = jobs
        self.address = address
        self.pool: Any = None
        self._ray_started = False
        if backend == "ray":
            self.count = self._start_ray()
            return
        self.count = check_jobs(jobs, n_items)
        if self.count > 1:
            self.pool = _Pool(self.count)

    def _start_ray(self) -> int:
        import ray

        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if self.address is not None:
                kwargs["address"] = self.address
            elif self.jobs is not None:
                kwargs["num_cpus"] = check_jobs(self.jobs)
            try:
                ray.init(**kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ScenarioError(
                    f"{self.address or 'a local Ray'} cannot be reached ({exc}); expected the "
                    "address HOST:PORT of a running Ray cluster (ray start --head)",
                    path="--address",
                ) from None
            self._ray_started = True
        count = int(ray.cluster_resources().get("CPU", 1))
        if self.jobs is not None:
            count = min(count, check_jobs(self.jobs))
        return max(1, count)

    def release(self) -> None:
        """No more runs: the local processes may exit (`close` waits for them)."""
        if self.pool is not None:
            self.pool.release()

    def close(self, abort: bool = False) -> None:
        """Stop the workers (`abort`: at once, dropping the batches in progress)."""
        if self.pool is not None:
            self.pool.close(abort)
            self.pool = None
        if self._ray_started:
            import ray

            ray.shutdown()
            self._ray_started = False

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, kind: Any, *_: Any) -> None:
        self.close(abort=kind is not None)


def run_batches(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    *,
    backend: str = "local",
    jobs: int | None = None,
    address: str | None = None,
    batch_size: int | None = None,
    skip: set[int] | None = None,
    encode: Callable[[list[tuple[int, Any]], list[tuple[int, Any]]], Any] | None = None,
    workers: Workers | None = None,
) -> Iterator[Any]:
    """Run `fn` on every item not in `skip` (indices); yield each batch's
    [(index, result or Failure)] as it finishes. `fn` must be a module-level function
    (it and the items travel to the workers by pickling).

    `encode(batch, results)` (module-level too), if given, runs in the worker on each
    finished batch (`batch`: its [(index, item)], `results`: the list above) and what it
    returns is yielded instead: a worker can turn its results into what the caller
    keeps (a file's bytes, say), so that little travels back and the main process, which
    serves every worker, has little to do per run.

    `workers` (started with `Workers`, and left running) replaces backend, jobs and
    address; without it the workers are started here and stopped at the end."""
    skip = skip or set()
    n_todo = len(items) - len([i for i in skip if 0 <= i < len(items)])
    if workers is None:
        check_backend(backend, address)
        if n_todo <= 0:
            return
        with Workers(backend, jobs, address, n_todo) as own:
            yield from run_batches(
                fn, items, batch_size=batch_size, skip=skip, encode=encode, workers=own
            )
        return
    if n_todo <= 0:
        return
    batches = _cut(items, batch_sizes(n_todo, workers.count, batch_size), skip)
    if workers.backend == "ray":
        yield from _ray_batches(fn, batches, encode)
        return
    if workers.pool is None or len(batches) == 1:
        for b in batches:
            yield _run_batch(fn, b, encode)
        return
    import functools

    try:
        yield from workers.pool.imap_unordered(
            functools.partial(_run_batch, fn, encode=encode), batches
        )
    except BaseException:
        # Interrupted (or the caller stopped early): stop every worker now.
        workers.close(abort=True)
        raise


def _ray_batches(
    fn: Callable[[Any], Any],
    batches: list[list[tuple[int, Any]]],
    encode: Callable[[list[tuple[int, Any]], list[tuple[int, Any]]], Any] | None,
) -> Iterator[Any]:
    import ray

    pending: list[Any] = []
    try:
        task = ray.remote(num_cpus=1)(_run_batch)
        fn_ref = ray.put(fn)
        encode_ref = ray.put(encode)
        pending = [task.remote(fn_ref, b, encode_ref) for b in batches]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield ray.get(ref)
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise


#: The folder, inside a command's output folder, where `RunStore` keeps finished runs.
STORE_DIR = ".vmsched-runs"


def _canonical(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    return repr(obj)


class RunStore:
    """Finished runs' results on disk, for `--resume` (see the module's docstring): one
    file per finished batch, {key: result}, written whole or not at all.

    Without `resume`, whatever an earlier command left is removed first: the command
    starts afresh, but still keeps its runs, so that it can be resumed in turn."""

    def __init__(self, folder: str | Path, resume: bool = False) -> None:
        import shutil

        self.dir = Path(folder) / STORE_DIR
        if not resume and self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.discard_partial()
        self._found: dict[str, Any] = {}
        for path in sorted(self.dir.glob("*.pkl")):
            try:
                with open(path, "rb") as f:
                    self._found.update(pickle.load(f))
            except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
                continue  # unreadable (another vmsched's?): its runs run again
        #: How many results the last `run_all` took from the store instead of running.
        self.reused = 0

    def key(self, fn: Callable[[Any], Any], item: Any) -> str:
        """What names a run: the function and the item (its content, canonically)."""
        text = json.dumps(
            [f"{fn.__module__}.{fn.__qualname__}", item], sort_keys=True, default=_canonical
        )
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def load(self, key: str) -> tuple[bool, Any]:
        """(True, result) if the run is in the store, else (False, None)."""
        if key in self._found:
            return True, self._found[key]
        return False, None

    def save(self, results: dict[str, Any]) -> None:
        """Keep a batch's results {key: result}, in one file that appears whole or not at
        all (a temporary file renamed into place)."""
        import tempfile

        if not results:
            return
        name = hashlib.sha256("".join(sorted(results)).encode()).hexdigest()[:32]
        fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".part-")
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(results, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.dir / f"{name}.pkl")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._found.update(results)

    def discard_partial(self) -> None:
        """Remove temporary files of batches that were never completed: an interrupt can
        land between the temporary file's creation and the handler that would remove it
        (inside `mkstemp`, or before `save`'s `try`)."""
        for tmp in self.dir.glob(".part-*"):
            tmp.unlink(missing_ok=True)

    def remove(self) -> None:
        """Remove the store (the command finished: its outputs hold the results)."""
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)


def interrupted(exc: KeyboardInterrupt, store: RunStore, again: Sequence[str]) -> int:
    """Say that a command was interrupted, where its finished runs are kept and how to
    complete it (`again`: its arguments, from argv; `--resume` is added); the exit status
    (128 + the signal's number)."""
    import sys

    from vmsched.errors import Interrupted

    signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
    store.discard_partial()
    args = [a for a in again if a != "--resume"]
    print(
        f"vmsched: interrupted ({signal.Signals(signum).name}); the runs done are kept in "
        f"{store.dir}/. Complete the command with: vmsched {' '.join(args)} --resume",
        file=sys.stderr,
    )
    return 128 + signum


def run_all(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    *,
    backend: str = "local",
    jobs: int | None = None,
    address: str | None = None,
    batch_size: int | None = None,
    progress: bool | Callable[[int, int], None] = False,
    label: str = "runs",
    fail_fast: bool = True,
    after_s: float | None = None,
    store: RunStore | None = None,
    workers: Workers | None = None,
) -> list[Any]:
    """Every item's result (or Failure), in item order, with a progress bar (see
    `vmsched.progress.RunsProgress`), on `workers` if given (see `run_batches`). With
    `fail_fast`, the first failure is raised once the batch that holds it is back.
    With a `store`, runs found in it are not run again, and each finished run is kept
    in it as its batch comes back."""
    from vmsched.progress import RunsProgress

    out: list[Any] = [None] * len(items)
    keys: list[str] = []
    skip: set[int] = set()
    if store is not None:
        keys = [store.key(fn, it) for it in items]
        for i, key in enumerate(keys):
            found, result = store.load(key)
            if found:
                out[i] = result
                skip.add(i)
        store.reused = len(skip)
    bar = RunsProgress(len(items), label, progress, after_s=after_s)
    done, failed = len(skip), 0
    try:
        bar.update(done)
        for batch in run_batches(
            fn,
            items,
            backend=backend,
            jobs=jobs,
            address=address,
            batch_size=batch_size,
            skip=skip,
            workers=workers,
        ):
            first_failure = None
            kept = {}
            for index, result in batch:
                out[index] = result
                done += 1
                if isinstance(result, Failure):
                    failed += 1
                    first_failure = first_failure or result
                elif store is not None:
                    kept[keys[index]] = result
            if store is not None:
                store.save(kept)
            if fail_fast and first_failure is not None:
                raise first_failure.exception or RuntimeError(str(first_failure))
            bar.update(done, failed)
    except WorkerLost as exc:
        if store is None:
            raise
        raise WorkerLost(
            f"{exc}; the runs done are kept in {store.dir}/: run the command again with --resume"
        ) from None
    finally:
        bar.close()
    return out
