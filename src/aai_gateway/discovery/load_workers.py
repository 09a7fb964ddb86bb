"""Reading many descriptor files on every core: a first start over thousands of files.

Parsing and checking a descriptor costs ~0.7 ms of one core; ten thousand cost seven seconds the
first time (later starts take every outcome from the card cache). When a build has more than
`PARALLEL_FROM` files to read and the machine has cores to spare, worker processes start as the
walk finds them (`start_worker`), and `read_on_every_core` shares the files, in chunks, between
this process and the workers. A worker is this same Python and this
same `aai_gateway` (`python -P -c`: never a module that happens to lie in the working directory);
it reads the paths it is sent on stdin (JSON lines) and answers each file's outcome on stdout, as
the card cache stores one (`card_cache.NewOutcome`'s JSON texts) with its card's record beside its
JSON, which this process checks like a cache row before taking it. A worker that cannot start,
dies, or answers anything else costs nothing but time: this process reads what it would have (a
chunk it was sent goes back to the queue).

Answers travel as `marshal` data, each after its length: the rows hold JSON texts, which JSON
would escape again and parse twice (the answer, then each card), a tenth of a worker's file in
all. `marshal` is for data one Python writes for another of the same version (a worker is this
same interpreter); reading it runs nothing, and what it reads is checked like anything else
from a worker.
"""

from __future__ import annotations

import json
import logging
import marshal
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from ..bulk import without_cyclic_gc
from ..descriptor import Platform

logger = logging.getLogger(__name__)

PARALLEL_FROM = 1000
"""Files to read from which workers start: a worker's start (~0.45 s of imports) costs about what
650 files do."""
MAX_WORKERS = 7
CHUNK = 32  # files per message: large enough that a message costs little, small to share well
IN_FLIGHT = 2  # chunks sent to a worker before its answers are read
ANSWER_BUFFER = 1 << 20
"""Bytes of a worker's answers its pipe holds, and read from it at once (1 MiB: Linux's default
limit for a pipe)."""
STALL_SECONDS = 60
"""A chunk takes a worker ~30 ms: one that answers nothing for this long is stuck."""

MAX_ANSWER_BYTES = 1 << 30
"""A worker's answer to one chunk is longer than this only if it is broken (32 files of at most
4 MiB, and their cards and texts): its files are read here."""
_LENGTH_BYTES = 4  # an answer's length, before it (unsigned, little-endian)

WorkerRow = tuple[str, bool, str | None, list[Any] | None, str | None, str, str | None]
"""A file's outcome from a worker: path, bundled, its card's JSON and record (`card_record`), the
reason it is skipped, its problems and its texts (JSON)."""


def worker_count(files: int, parallel_from: int = PARALLEL_FROM) -> int:
    """How many workers to read `files` files with: none below `parallel_from`, else one per
    spare core (this process reads too), and none where this Python cannot be started again (it
    cannot name its executable, or is a frozen application, whose executable is not Python)."""
    if files < parallel_from or not sys.executable or getattr(sys, "frozen", False):
        return 0
    return max(0, min(available_cores() - 1, MAX_WORKERS, files // max(parallel_from // 2, 1)))


def available_cores() -> int:
    """The cores this process may run on (its affinity, where the system has one), no more than
    its container's CPU quota allows: a container of one CPU on a machine of 64 sees 64 cores."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = cpu_quota()
    return cores if quota is None else max(1, min(cores, quota))


CGROUP = Path("/sys/fs/cgroup")  # a container's own cgroup, where Linux mounts it


def cpu_quota() -> int | None:
    """The whole CPUs the cgroup CPU quota (v2 `cpu.max`, v1 `cpu.cfs_quota_us`) allows, or None."""
    try:
        quota, period = (CGROUP / "cpu.max").read_text(encoding="ascii").split()[:2]
    except (OSError, ValueError):
        try:
            quota = (CGROUP / "cpu" / "cpu.cfs_quota_us").read_text(encoding="ascii")
            period = (CGROUP / "cpu" / "cpu.cfs_period_us").read_text(encoding="ascii")
        except (OSError, ValueError):
            return None
    try:  # "max" (v2) or -1 (v1): no quota
        allowed, per = int(quota), int(period)
    except ValueError:
        return None
    return max(1, allowed // per) if allowed > 0 and per > 0 else None


def worker_command(host: Platform) -> list[str]:
    package_root = str(Path(__file__).resolve().parents[2])
    # Ctrl-C is the gateway's from the first line (see `serve`): a worker starts while the folders
    # are walked, and Ctrl-C during its ~0.45 s of imports would print a traceback otherwise.
    # A worker's life is bulk work (`serve`): its imports too run without the cyclic GC. httpx
    # imports its command-line client (click, rich, pygments: ~60 ms of a worker's ~0.45 s start)
    # wherever those are installed, and falls back when that import fails: a worker never runs it.
    bootstrap = (
        "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
        "import gc; gc.disable(); import sys; sys.modules['httpx._main'] = None; "
        "sys.path.insert(0, sys.argv[1]); "
        "from aai_gateway.discovery.load_workers import serve; serve(sys.argv[2])"
    )
    return [sys.executable, "-P", "-c", bootstrap, package_root, host]


def start_worker(host: Platform) -> subprocess.Popen[bytes] | None:
    """A worker process, started now: its imports go on while the build walks its folders. None
    when it cannot start (this process then reads its share)."""
    try:
        process = subprocess.Popen(
            worker_command(host), stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=ANSWER_BUFFER
        )
    except OSError as exc:
        logger.info("cannot start a worker to read descriptors (%s); reading them here", exc)
        return None
    assert process.stdout is not None
    _widen(process.stdout)
    return process


def end_workers(workers: Sequence[subprocess.Popen[bytes]]) -> None:
    """The build is over, whatever ended it: each worker is killed (one may be stuck on a file
    that never ends, and would outlive the gateway otherwise) and reaped."""
    for process in workers:
        process.kill()
    for process in workers:
        process.wait()


def read_on_every_core(
    files: Sequence[tuple[str, bool]],
    read_here: Callable[[str, bool], None],
    take_row: Callable[[WorkerRow], None],
    workers: Sequence[subprocess.Popen[bytes]],
) -> None:
    """Every file of `files` (path, bundled) read once: by `read_here` in this process, or by one
    of the `workers` (`start_worker`), whose outcomes go to `take_row` (in this thread, between the
    chunks it reads: taking an answer is work too, and it is shared the way reading is). Each
    worker ends when its share is done; if this raises, it has ended them all (`end_workers`)."""
    chunks = deque(list(files[start : start + CHUNK]) for start in range(0, len(files), CHUNK))
    rows: deque[WorkerRow] = deque()
    # Each worker's first chunks are its own before it asks (it may still be importing): this
    # process, reading meanwhile, could otherwise take every chunk of a small build first.
    threads = [
        threading.Thread(
            target=_feed,
            args=(process, chunks, rows, deque(chunks.popleft() for _ in range(min(IN_FLIGHT, len(chunks))))),
            name=f"aai-load-worker-{n}",
            daemon=True,
        )
        for n, process in enumerate(workers)
    ]
    for thread in threads:
        thread.start()
    try:
        while True:
            while chunks:
                try:
                    chunk = chunks.pop()  # from the back: the workers take from the front
                except IndexError:
                    break
                for path, bundled in chunk:
                    read_here(path, bundled)
                _take(rows, take_row)
            _wait_for(threads, rows, workers)
            _take(rows, take_row)
            if not chunks:  # a worker that failed gave its chunk back after this process was done
                return
    except BaseException:  # Ctrl-C, or `read_here` failing: the build is over, and so are the workers
        chunks.clear()
        end_workers(workers)
        raise


def _take(rows: deque[WorkerRow], take_row: Callable[[WorkerRow], None]) -> None:
    """The workers' answers that came so far, each to `take_row` (feeding threads add more
    meanwhile: a deque's appends and pops are safe between threads)."""
    while rows:
        take_row(rows.popleft())


def _wait_for(
    threads: list[threading.Thread], rows: deque[WorkerRow], workers: Sequence[subprocess.Popen[bytes]]
) -> None:
    """Until every feeding thread has ended. Workers that answer nothing for STALL_SECONDS (one
    stuck on a file that never ends, such as a FIFO put in place of a descriptor) are killed:
    their chunks come back to the queue, and this process reads them as it would have."""
    answered, since = len(rows), time.monotonic()
    for thread in threads:
        while thread.is_alive():
            thread.join(timeout=1.0)
            if len(rows) != answered:
                answered, since = len(rows), time.monotonic()
            elif time.monotonic() - since > STALL_SECONDS:
                logger.warning(
                    "descriptor-reading workers answered nothing for %d s; reading here", STALL_SECONDS
                )
                for process in workers:
                    process.kill()
                since = time.monotonic()


def _feed(
    process: subprocess.Popen[bytes],
    chunks: deque[list[tuple[str, bool]]],
    rows: deque[WorkerRow],
    sent: deque[list[tuple[str, bool]]],
) -> None:
    """One worker's share: the chunks it was given (`sent`, in the order the worker answers them),
    then chunks from the front of the queue until it is empty."""
    assert process.stdin is not None and process.stdout is not None
    try:
        for chunk in sent:
            if not _send(process.stdin, chunk):
                break
        while True:
            # Two chunks ahead: the worker never waits while this thread waits for the GIL.
            while len(sent) < IN_FLIGHT and chunks:
                try:
                    chunk = chunks.popleft()
                except IndexError:
                    break
                sent.append(chunk)
                if not _send(process.stdin, chunk):
                    break
            if not sent:
                return
            answer = _answer(process.stdout, sent[0])
            if answer is None:
                logger.info("a descriptor-reading worker stopped answering; reading its files here")
                return
            rows.extend(answer)
            sent.popleft()
    finally:
        chunks.extendleft(sent)  # whatever ended this thread, unanswered files are read here
        _stop(process)


def _widen(pipe: IO[bytes]) -> None:
    """Let the pipe hold a whole answer (Linux: 64 KiB by default, about 20 files' outcomes): a
    worker then never waits, its answer half written, for the thread reading it, which waits for
    the interpreter lock while this process reads files of its own."""
    try:
        import fcntl  # noqa: PLC0415 (POSIX only)

        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, ANSWER_BUFFER)
    except (ImportError, AttributeError, OSError):  # not Linux, or a lower limit: the default pipe
        pass


def _send(to_worker: IO[bytes], chunk: list[tuple[str, bool]]) -> bool:
    try:
        to_worker.write(json.dumps(chunk).encode() + b"\n")
        to_worker.flush()
    except OSError:
        return False
    return True


def _answer(from_worker: IO[bytes], chunk: list[tuple[str, bool]]) -> list[WorkerRow] | None:
    """The worker's answer to `chunk` (`serve`), or None when it sent anything else or ended."""
    try:
        size = _read_exactly(from_worker, _LENGTH_BYTES)
        data = None if size is None else _read_exactly(from_worker, int.from_bytes(size, "little"))
        answer = None if data is None else marshal.loads(data)  # noqa: S302 (see the module's text)
    except (OSError, ValueError, EOFError, TypeError, MemoryError):  # MemoryError: a list said huge
        return None
    asked = dict(chunk)
    if type(answer) is not list or len(answer) != len(chunk) or not all(_is_row(r, asked) for r in answer):
        return None
    return answer  # each row checked by _is_row


def _read_exactly(from_worker: IO[bytes], size: int) -> bytes | None:
    """`size` bytes, or None when the worker ends first or the size is past all reason (read as
    they come: a broken length is no reason to set aside as much memory)."""
    if size > MAX_ANSWER_BYTES:
        return None
    parts: list[bytes] = []
    while size:
        part = from_worker.read(min(size, ANSWER_BUFFER))
        if not part:
            return None
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def _is_row(row: Any, asked: dict[str, bool]) -> bool:
    if type(row) is not tuple or len(row) != 7:
        return False
    path, bundled, card, record, reason, problems, texts = row
    return (
        type(path) is str
        and asked.get(path) is bundled
        and all(value is None or type(value) is str for value in (card, reason, texts))
        and (record is None if card is None else type(record) is list)
        and type(problems) is str
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    try:
        assert process.stdin is not None
        process.stdin.close()  # the worker's stdin ends: it exits
        process.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        process.kill()
        process.wait()


def serve(host: str) -> None:
    """A worker's main loop: one JSON line of [path, bundled] pairs in, their rows out (`_answer`)."""
    from .file_outcomes import outcome_row  # noqa: PLC0415 (imported in the worker only)

    # Ctrl-C in a terminal reaches every process of its group: the gateway's to handle, which
    # ends its workers by closing their stdin.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="aai-gateway load worker: %(levelname)s %(message)s")
    platform: Platform = host  # type: ignore[assignment]  # the parent passes its own host
    # Every chunk taken as it comes: the parent sends the next before it reads an answer, so a
    # worker that stopped reading while its answer waited would leave both waiting (a pipe holds
    # 4-64 KiB; 32 long paths, or paths of non-ASCII names, escaped, are more).
    lines: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    reader = threading.Thread(target=_take_lines, args=(sys.stdin.fileno(), lines), daemon=True)
    reader.start()
    with without_cyclic_gc():
        while (line := lines.get()) is not None:
            chunk = json.loads(line)
            rows = [outcome_row(str(path), bool(bundled), platform) for path, bundled in chunk]
            answer = marshal.dumps(rows)
            try:  # a path that is not UTF-8 comes as its surrogate escapes, and goes back as them
                sys.stdout.buffer.write(len(answer).to_bytes(_LENGTH_BYTES, "little") + answer)
                sys.stdout.buffer.flush()
            except OSError:  # the gateway is gone: nothing to say, nor anyone to say it to
                os._exit(0)
    # Every answer is written and flushed. Ending now, not as the interpreter would: freeing the
    # objects of thousands of descriptors read takes ~0.1 s, which the gateway would wait for.
    logging.shutdown()
    os._exit(0)


def _take_lines(fd: int, lines: queue.SimpleQueue[bytes | None]) -> None:
    """The lines read from `fd` as they come, then None. Plain reads: a thread holding the
    buffered `sys.stdin` would make the interpreter's shutdown abort if the worker ended otherwise."""
    pending: list[bytes] = []
    while True:
        try:
            data = os.read(fd, 1 << 16)
        except OSError:
            data = b""
        if not data:
            lines.put(None)  # the parent is done (or gone)
            return
        *ended, rest = data.split(b"\n")
        for line in ended:
            pending.append(line)
            lines.put(b"".join(pending))
            pending.clear()
        if rest:
            pending.append(rest)
