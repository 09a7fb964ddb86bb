"""A build with many files to read shares them with worker processes (real ones, this Python): it
finds exactly what reading every file here finds, and a worker that cannot start, dies, or
answers anything else costs only time."""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aai_gateway.descriptor.card_records import card_from_record
from aai_gateway.discovery import build_catalog, file_outcomes, load_workers
from aai_gateway.discovery.card_cache import CardCache
from aai_gateway.discovery.catalog import Catalog
from aai_gateway.discovery.loading import FileLoads
from tests.builders import c_descriptor, mcp_descriptor, write_json
from tests.descriptor.helpers import spec_fixture_paths
from tests.discovery.cache_support import HOUR_AGO, sources

FILES = 96  # three chunks for the worker, the rest here
READ_AHEAD_FROM = 40


@pytest.fixture
def many(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of apps (some not valid, one not JSON, one not an app), on a machine of 2 cores."""
    monkeypatch.setattr(load_workers, "available_cores", lambda: 2)
    folder = tmp_path / "apps"
    for number in range(FILES):
        descriptor: dict[str, Any] = c_descriptor(f"dev.test.app{number}", name=f"App {number} 应用")
        if number % 17 == 5:
            descriptor["tools"][0]["name"] = "no spaces allowed"
        write_json(folder / f"app{number}" / "aai.json", descriptor)
    (folder / "broken" / "aai.json").parent.mkdir()
    (folder / "broken" / "aai.json").write_text('{"schemaVersion": ', encoding="utf-8")
    write_json(folder / "list" / "aai.json", [1, 2])
    for path in folder.rglob("aai.json"):
        os.utime(path, (HOUR_AGO, HOUR_AGO))
    return folder


def build(folder: Path, read_ahead_from: int, cache: CardCache | None = None) -> tuple[Catalog, FileLoads]:
    loads = FileLoads("linux", cache, parallel_from=read_ahead_from)
    return build_catalog(sources(folder), "linux", loads), loads


def outcome(catalog: Catalog, loads: FileLoads) -> tuple[Any, ...]:
    cards = sorted(((e.card.id, e.card, e.warnings) for e in catalog.entries), key=lambda c: c[0])
    skipped = sorted((s.path, s.reason, s.problems) for s in catalog.skipped)
    texts = loads.texts([(e.card, e.stamp) for e in catalog.entries])
    return cards, skipped, sorted(texts.items())


def _worker(command: list[str]) -> subprocess.Popen[bytes]:
    """A worker process started by `command` (`worker_command`'s, or one changed from it), its
    stdin, stdout and stderr piped to the test."""
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def answer_of(data: bytes) -> Any:
    """A worker's answer (`load_workers.serve`): marshal data after its length."""
    size = int.from_bytes(data[:4], "little")
    assert len(data) == 4 + size
    return marshal.loads(data[4:])  # noqa: S302 (a worker's, as the gateway reads it)


def read_answer(stream: Any) -> Any:
    size = int.from_bytes(stream.read(4), "little")
    return marshal.loads(stream.read(size))  # noqa: S302 (a worker's, as the gateway reads it)


WRITE_ANSWER = (
    "def write(rows):\n"
    "    data = marshal.dumps(rows)\n"
    "    sys.stdout.buffer.write(len(data).to_bytes(4, 'little') + data)\n"
    "    sys.stdout.buffer.flush()\n"
)
"""What a stand-in worker (`python -c`) defines to answer as a worker does."""


def test_files_read_by_a_worker_give_what_reading_every_file_here_gives(many: Path) -> None:
    here = build(many, 10**9)
    shared = build(many, READ_AHEAD_FROM)
    assert here[1].last_counts.by_workers == 0
    assert 0 < shared[1].last_counts.by_workers < FILES
    assert shared[1].last_counts.checked == FILES + 2
    assert outcome(*shared) == outcome(*here)


def test_texts_a_worker_sent_that_do_not_read_back_are_taken_from_the_file_when_search_asks(
    many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package_root = str(Path(load_workers.__file__).resolve().parents[2])
    garbled = (
        f"import json, marshal, sys\nsys.path.insert(0, {package_root!r})\n{WRITE_ANSWER}"
        "from aai_gateway.discovery.file_outcomes import outcome_row\n"
        "for line in sys.stdin:\n"
        "    rows = [outcome_row(path, bundled, 'linux') for path, bundled in json.loads(line)]\n"
        '    write([(*row[:6], \'[["not", "texts"]]\') for row in rows])'
    )
    monkeypatch.setattr(load_workers, "worker_command", lambda host: [sys.executable, "-c", garbled])
    shared = build(many, READ_AHEAD_FROM)
    assert shared[1].last_counts.by_workers > 0
    assert outcome(*shared) == outcome(*build(many, 10**9))


def test_outcomes_a_worker_read_go_to_the_card_cache_and_the_next_start_takes_them(
    many: Path, tmp_path: Path
) -> None:
    _, first = build(many, READ_AHEAD_FROM, CardCache(tmp_path / "cache", "linux", "build-1"))
    assert first.last_counts.by_workers > 0
    catalog, second = build(many, READ_AHEAD_FROM, CardCache(tmp_path / "cache", "linux", "build-1"))
    assert (second.last_counts.checked, second.last_counts.cached) == (0, FILES + 2)
    assert outcome(catalog, second) == outcome(*build(many, 10**9))


def test_files_written_just_before_a_worker_read_them_are_not_cached(many: Path, tmp_path: Path) -> None:
    for path in many.rglob("aai.json"):
        os.utime(path)  # now: the file may still change within its timestamp's resolution
    _, first = build(many, READ_AHEAD_FROM, CardCache(tmp_path / "cache", "linux", "build-1"))
    assert first.last_counts.by_workers > 0
    _, second = build(many, READ_AHEAD_FROM, CardCache(tmp_path / "cache", "linux", "build-1"))
    assert second.last_counts.cached == 0


WORKERS_THAT_FAIL = {
    "cannot start": ["/nonexistent/python3"],
    "exits at once": [sys.executable, "-c", "raise SystemExit(3)"],
    "answers nonsense": [
        sys.executable,
        "-c",
        "import sys\nfor line in sys.stdin: print('nonsense', flush=True)",
    ],
    "answers for another file": [
        sys.executable,
        "-c",
        f"import sys, json, marshal\n{WRITE_ANSWER}"
        "for line in sys.stdin:\n"
        "    write([('/etc/passwd', False, None, None, 'forged', '[]', None) for _ in json.loads(line)])",
    ],
    "answers a forged card": [
        sys.executable,
        "-c",
        f"import sys, json, marshal\n{WRITE_ANSWER}"
        "for line in sys.stdin:\n"
        "    write([(p, b, '[1, 2]', [1, 2], None, '[]', None) for p, b in json.loads(line)])",
    ],
    "answers rows as lists": [
        sys.executable,
        "-c",
        f"import sys, json, marshal\n{WRITE_ANSWER}"
        "for line in sys.stdin:\n"
        "    write([[path, bundled, None, None, 'r', '[]', None] for path, bundled in json.loads(line)])",
    ],
    "answers code": [
        sys.executable,
        "-c",
        f"import sys, marshal\n{WRITE_ANSWER}"
        "for line in sys.stdin:\n"
        "    write(compile('open(\"/tmp/never\", \"w\")', 'forged', 'exec'))",
    ],
    "answers too deep to parse": [
        sys.executable,
        "-c",
        "import sys\n"
        "data = (b'[' + (1).to_bytes(4, 'little')) * 100000 + b'N'\n"
        "for line in sys.stdin:\n"
        "    sys.stdout.buffer.write(len(data).to_bytes(4, 'little') + data)\n"
        "    sys.stdout.buffer.flush()",
    ],
    "declares a list of two billion rows": [
        sys.executable,
        "-c",
        "import sys\n"
        "data = b'[' + (2**31 - 1).to_bytes(4, 'little')\n"
        "for line in sys.stdin:\n"
        "    sys.stdout.buffer.write(len(data).to_bytes(4, 'little') + data)\n"
        "    sys.stdout.buffer.flush()",
    ],
    "claims a gigabyte": [
        sys.executable,
        "-c",
        "import sys, time\nsys.stdin.readline()\n"
        "sys.stdout.buffer.write((2**30 + 1).to_bytes(4, 'little') + b'x')\n"
        "sys.stdout.flush()\ntime.sleep(3600)",
    ],
    "stops halfway": [
        sys.executable,
        "-c",
        "import sys\nsys.stdin.readline()\nsys.stdout.buffer.write((100).to_bytes(4, 'little') + b'[')\n"
        "sys.stdout.flush()\nraise SystemExit(0)",
    ],
}


@pytest.mark.parametrize("command", WORKERS_THAT_FAIL.values(), ids=WORKERS_THAT_FAIL.keys())
@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")  # no traceback either
def test_a_worker_that_fails_in_any_way_has_its_files_read_here_and_nothing_is_lost(
    many: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setattr(load_workers, "worker_command", lambda host: command)
    catalog, loads = build(many, READ_AHEAD_FROM)
    assert loads.last_counts.by_workers == 0
    assert loads.last_counts.checked == FILES + 2
    assert outcome(catalog, loads) == outcome(*build(many, 10**9))


def test_a_worker_never_imports_a_module_of_the_working_directory(
    many: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = tmp_path / "cwd" / "aai_gateway"
    planted.mkdir(parents=True)
    marker = tmp_path / "planted-code-ran"
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    monkeypatch.chdir(planted.parent)
    _, loads = build(many, READ_AHEAD_FROM)
    assert loads.last_counts.by_workers > 0
    assert not marker.exists()


def test_a_worker_answers_each_path_it_is_sent_even_one_that_is_not_utf_8(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.json")
    write_json(tmp_path / name, c_descriptor("dev.test.latin1"))
    process = _worker(load_workers.worker_command("linux"))
    answer, _ = process.communicate(json.dumps([[str(tmp_path / name), False]]).encode() + b"\n", timeout=60)
    [(path, bundled, card, record, reason, _problems, texts)] = answer_of(answer)
    assert (path, bundled, reason) == (str(tmp_path / name), False, None)
    assert card is not None and "dev.test.latin1" in card and texts is not None
    assert json.loads(card) == record


@pytest.mark.parametrize(
    ("files", "cores", "workers"), [(999, 8, 0), (1000, 1, 0), (1000, 2, 1), (10_000, 4, 3)]
)
def test_workers_start_only_for_many_files_and_only_on_spare_cores(
    monkeypatch: pytest.MonkeyPatch, files: int, cores: int, workers: int
) -> None:
    monkeypatch.setattr(load_workers, "available_cores", lambda: cores)
    assert load_workers.worker_count(files) == workers


def test_a_worker_takes_every_chunk_it_is_sent_while_its_answers_wait_to_be_read(tmp_path: Path) -> None:
    """The gateway sends a worker two chunks before it reads an answer: a worker that read no more
    until its answer was taken would leave both waiting on each other (long paths fill a pipe)."""
    long_name = "x" * 250
    chunks = [
        [
            [str(tmp_path.joinpath(*[long_name] * 40, f"{n}-{k}.json")), False]
            for k in range(load_workers.CHUNK)
        ]
        for n in range(load_workers.IN_FLIGHT)
    ]
    process = subprocess.Popen(
        load_workers.worker_command("linux"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    to_worker = process.stdin

    def send() -> None:
        with contextlib.suppress(OSError):  # the worker killed below, when it never read them
            for chunk in chunks:
                to_worker.write(json.dumps(chunk).encode() + b"\n")
                to_worker.flush()

    sender = threading.Thread(target=send, daemon=True)
    try:
        sender.start()
        sender.join(timeout=60)
        assert not sender.is_alive(), "the worker stopped reading what it was sent"
        answers = [read_answer(process.stdout) for _ in chunks]
        assert [[row[0] for row in answer] for answer in answers] == [[p for p, _ in c] for c in chunks]
        to_worker.close()
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
        process.wait()
        sender.join(timeout=60)


@pytest.mark.parametrize("executable", [None, ""], ids=["none", "empty"])
def test_a_python_that_cannot_name_its_executable_reads_every_file_here_without_a_failing_thread(
    many: Path, monkeypatch: pytest.MonkeyPatch, executable: str | None
) -> None:
    """`sys.executable` is None or "" where Python cannot tell (an embedding application)."""
    failures: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", failures.append)
    monkeypatch.setattr(sys, "executable", executable)
    catalog, loads = build(many, READ_AHEAD_FROM)
    assert failures == []
    assert (loads.last_counts.by_workers, loads.last_counts.checked) == (0, FILES + 2)
    assert outcome(catalog, loads) == outcome(*build(many, 10**9))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_worker_leaves_ctrl_c_to_the_gateway_and_keeps_quiet(tmp_path: Path) -> None:
    """Ctrl-C in a terminal reaches the worker too: the gateway decides (it ends its workers by
    closing their stdin), and the gateway's stderr gets no worker's traceback."""
    write_json(tmp_path / "aai.json", c_descriptor("dev.test.ctrl-c"))
    chunk = json.dumps([[str(tmp_path / "aai.json"), False]]).encode() + b"\n"
    process = _worker(load_workers.worker_command("linux"))
    assert process.stdin is not None and process.stdout is not None
    try:
        for _ in range(2):
            process.stdin.write(chunk)
            process.stdin.flush()
            [(_path, _bundled, card, _record, _reason, _problems, _texts)] = read_answer(process.stdout)
            assert card is not None and "dev.test.ctrl-c" in card
            process.send_signal(signal.SIGINT)
        _, errors = process.communicate(timeout=60)
        assert (process.returncode, errors) == (0, b"")
    finally:
        process.kill()
        process.wait()


def _handles_sigint(pid: int) -> bool:
    """Whether the process no longer leaves SIGINT to its default action (its interpreter has set
    a handler, or ignores it): /proc's `SigCgt` and `SigIgn` masks."""
    masks = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line
    )
    bit = 1 << (signal.SIGINT - 1)
    return any(int(masks[name], 16) & bit for name in ("SigCgt", "SigIgn"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_ignores_ctrl_c_even_while_it_is_still_importing(tmp_path: Path) -> None:
    """Workers start while the folders are walked, and a worker's imports take ~0.45 s: Ctrl-C
    then (as a slow first start is when one presses it) must not end it with a traceback on the
    gateway's stderr, any more than Ctrl-C once it serves."""
    write_json(tmp_path / "aai.json", c_descriptor("dev.test.ctrl-c-at-start"))
    process = _worker(load_workers.worker_command("linux"))
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(json.dumps([[str(tmp_path / "aai.json"), False]]).encode() + b"\n")
        process.stdin.close()
        deadline = time.monotonic() + 60
        while not _handles_sigint(process.pid) and time.monotonic() < deadline:
            time.sleep(0.005)
        # Its interpreter is up: the bootstrap's first line comes within milliseconds (`site`),
        # its imports take ~0.45 s. Without that line, a Ctrl-C now ends it with a traceback.
        time.sleep(0.1)
        while process.poll() is None and time.monotonic() < deadline:
            process.send_signal(signal.SIGINT)
            time.sleep(0.03)
        assert process.stderr is not None
        answer, errors = process.stdout.read(), process.stderr.read()  # it has ended: small, whole
        assert (process.returncode, errors) == (0, b"")
        [(_path, _bundled, card, _record, _reason, _problems, _texts)] = answer_of(answer)
        assert card is not None and "dev.test.ctrl-c-at-start" in card
    finally:
        process.kill()
        process.wait()


def modules_a_worker_imports(tmp_path: Path, *descriptors: dict[str, Any]) -> set[bytes]:
    """What a real worker imports to read `descriptors` (`-X importtime`: every module, on stderr)."""
    paths = []
    for number, descriptor in enumerate(descriptors):
        paths.append(tmp_path / f"app{number}.json")
        write_json(paths[-1], descriptor)
    command = load_workers.worker_command("linux")
    command[1:1] = ["-X", "importtime"]
    done = subprocess.run(
        command,
        input=json.dumps([[str(path), False] for path in paths]).encode() + b"\n",
        capture_output=True,
        timeout=60,
        check=True,
    )
    return {line.rsplit(b"|", 1)[-1].strip() for line in done.stderr.splitlines()}


def test_a_worker_reading_apps_with_plain_base_urls_does_not_import_httpx(tmp_path: Path) -> None:
    """Its URL parse is for other URLs (descriptor/origin.py): a worker's start is that much shorter."""
    imported = modules_a_worker_imports(
        tmp_path,
        c_descriptor("dev.test.adapter"),
        c_descriptor("dev.test.web", type="http", baseUrl="https://api.example.com/v1"),
    )
    assert b"aai_gateway.descriptor.loader" in imported
    assert b"httpx" not in imported


def test_a_worker_that_needs_httpx_does_not_import_its_command_line_client(tmp_path: Path) -> None:
    """httpx imports its command-line client (click, rich, pygments) where they are installed; a
    worker's start would pay for it on every first start of many files."""
    imported = modules_a_worker_imports(
        tmp_path, c_descriptor("dev.test.local", type="http", baseUrl="http://127.0.0.1:9")
    )
    assert b"httpx" in imported
    assert not imported & {b"click", b"rich", b"pygments"}


def test_a_worker_ends_at_once_when_its_answers_are_written_without_tearing_its_objects_down(
    tmp_path: Path,
) -> None:
    """The gateway waits for its workers to end: freeing the objects of thousands of descriptors
    the way an interpreter ends would cost it ~0.1 s of a first start. An `atexit` hook added to
    the worker's command shows whether its interpreter was finalized."""
    write_json(tmp_path / "aai.json", c_descriptor("dev.test.quick-exit"))
    command = load_workers.worker_command("linux")
    hook = "import atexit, sys; atexit.register(lambda: sys.stderr.write('finalized'));"
    command[command.index("-c") + 1] = hook + command[command.index("-c") + 1]
    process = _worker(command)
    answer, errors = process.communicate(
        json.dumps([[str(tmp_path / "aai.json"), False]]).encode() + b"\n", timeout=60
    )
    [(_path, _bundled, card, _record, _reason, _problems, _texts)] = answer_of(answer)
    assert card is not None and "dev.test.quick-exit" in card
    assert (process.returncode, errors) == (0, b"")


@pytest.mark.parametrize(
    ("files", "cores"),
    [
        ({"cpu.max": "100000 100000\n"}, 1),
        ({"cpu.max": "250000 100000\n"}, 2),
        ({"cpu.max": "50000 100000\n"}, 1),
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "100000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({}, None),
        ({"cpu.max": "nonsense"}, None),
    ],
)
def test_a_container_s_cpu_quota_bounds_the_cores_workers_start_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], cores: int | None
) -> None:
    """A container limited to one CPU on a machine of many cores starts no worker: each would cost
    its imports out of the same quota."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="ascii")
    monkeypatch.setattr(load_workers, "CGROUP", tmp_path)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(64)), raising=False)
    assert load_workers.cpu_quota() == cores
    assert load_workers.available_cores() == (64 if cores is None else cores)
    assert (load_workers.worker_count(10_000) == 0) == (cores == 1)


def test_a_worker_that_answers_nothing_is_killed_and_its_files_are_read_here(
    many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stuck = [sys.executable, "-c", "import sys, time\nsys.stdin.readline()\ntime.sleep(3600)"]
    monkeypatch.setattr(load_workers, "worker_command", lambda host: stuck)
    monkeypatch.setattr(load_workers, "STALL_SECONDS", 1)
    catalog, loads = build(many, READ_AHEAD_FROM)
    assert (loads.last_counts.by_workers, loads.last_counts.checked) == (0, FILES + 2)
    assert outcome(catalog, loads) == outcome(*build(many, 10**9))


def test_a_path_named_twice_is_read_once_and_the_worker_keeps_its_chunks(
    many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = sorted(str(p) for p in many.rglob("aai.json"))
    loads = FileLoads("linux", parallel_from=READ_AHEAD_FROM)
    asked: list[list[tuple[str, bool]]] = []
    real = load_workers.read_on_every_core

    def recorded(wanted: list[tuple[str, bool]], *rest: Any) -> None:
        asked.append(list(wanted))
        real(wanted, *rest)

    monkeypatch.setattr("aai_gateway.discovery.loading.read_on_every_core", recorded)
    build = loads.begin()
    loads.read_ahead(build, [(path, "stamp", False) for path in files] + [(files[0], "stamp", True)])
    assert [path for path, _bundled in asked[0]] == files


def _stuck_worker(pid_file: Path) -> list[str]:
    """A worker command that writes its pid, reads one line and then hangs (as on a FIFO)."""
    return [
        sys.executable,
        "-c",
        f"import os, sys, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "sys.stdin.readline()\ntime.sleep(3600)",
    ]


def _ended(pid_file: Path) -> bool:
    deadline = time.monotonic() + 30
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_build_that_fails_here_ends_its_workers_even_one_stuck_on_a_file(tmp_path: Path) -> None:
    """Ctrl-C, or reading failing in this process: a worker stuck on a file (a FIFO) would
    otherwise outlive the gateway, holding its stderr."""
    pid_file = tmp_path / "worker.pid"
    files = [(str(tmp_path / f"app{n}.json"), False) for n in range(load_workers.CHUNK * 4)]

    def read_here(path: str, bundled: bool) -> None:
        deadline = time.monotonic() + 30
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        raise KeyboardInterrupt

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(load_workers, "worker_command", lambda host: _stuck_worker(pid_file))
        worker = load_workers.start_worker("linux")
        assert worker is not None
        with pytest.raises(KeyboardInterrupt):
            load_workers.read_on_every_core(files, read_here, lambda row: None, [worker])
    assert _ended(pid_file)


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"


def test_workers_start_while_the_walk_goes_on_as_soon_as_it_has_found_enough_files(
    many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's imports take ~0.45 s: started once the walk has found `parallel_from` files to
    read, not after it, they go on while it walks the rest."""
    started: list[Any] = []
    real_start = load_workers.start_worker

    def recorded(host: Any) -> subprocess.Popen[bytes] | None:
        started.append(host)
        return real_start(host)

    monkeypatch.setattr("aai_gateway.discovery.loading.start_worker", recorded)
    paths = sorted(str(p) for p in many.rglob("aai.json"))
    seen_by_walk: list[int] = []

    def walk() -> Iterator[tuple[str, str, bool]]:
        for number, path in enumerate(paths, start=1):
            yield path, f"stamp-{number}", False
            seen_by_walk.append(len(started))  # workers started once this file was taken

    loads = FileLoads("linux", parallel_from=READ_AHEAD_FROM)
    build = loads.begin()
    loads.read_ahead(build, walk())
    assert seen_by_walk[READ_AHEAD_FROM - 2] == 0 and seen_by_walk[READ_AHEAD_FROM - 1] == 1
    assert len(started) == 1  # two cores: one worker, whatever the walk finds after
    assert sorted(build.read_ahead) == paths


def test_a_walk_that_fails_after_workers_started_ends_them(
    tmp_path: Path, many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while folders are still walked, or a walk failing: the workers started for the files
    found so far end with the build (one stuck on a file would outlive the gateway)."""
    started: list[subprocess.Popen[bytes]] = []
    real_start = load_workers.start_worker

    def recorded(host: Any) -> subprocess.Popen[bytes] | None:
        process = real_start(host)
        if process is not None:
            started.append(process)
        return process

    monkeypatch.setattr(load_workers, "worker_command", lambda host: _stuck_worker(tmp_path / "pid"))
    monkeypatch.setattr("aai_gateway.discovery.loading.start_worker", recorded)
    paths = sorted(str(p) for p in many.rglob("aai.json"))

    def walk() -> Iterator[tuple[str, str, bool]]:
        for number, path in enumerate(paths[:READ_AHEAD_FROM], start=1):
            yield path, f"stamp-{number}", False
        raise KeyboardInterrupt

    loads = FileLoads("linux", parallel_from=READ_AHEAD_FROM)
    with pytest.raises(KeyboardInterrupt):
        loads.read_ahead(loads.begin(), walk())
    assert len(started) == 1
    assert started[0].returncode is not None  # ended and reaped


def test_apps_read_ahead_here_are_not_held_but_those_whose_server_lists_their_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thousands read at once would only pass through the few descriptors held; an app whose tools
    its MCP server lists is asked for at once (its tool snapshot), so that one is kept."""
    monkeypatch.setattr(load_workers, "available_cores", lambda: 2)
    folder = tmp_path / "apps"
    for number in range(FILES):
        if number % 4 == 0:
            descriptor = mcp_descriptor(f"dev.test.server{number}", command="/nonexistent/server")
        else:
            descriptor = c_descriptor(f"dev.test.app{number}")
        write_json(folder / f"app{number}" / "aai.json", descriptor)
    for path in folder.rglob("aai.json"):
        os.utime(path, (HOUR_AGO, HOUR_AGO))
    catalog, loads = build(folder, READ_AHEAD_FROM)
    read_here = FILES - loads.last_counts.by_workers
    assert read_here > FILES // 4  # this process read apps of both kinds
    held = set(loads._held)  # what `FileLoads.descriptor` answers without reading the file again
    servers = {e.card.location for e in catalog.entries if not e.card.tools_declared}
    assert held and held <= servers


ROOT = Path(__file__).resolve().parents[2]
REAL_DESCRIPTORS = sorted(
    [
        *spec_fixture_paths(),
        *(ROOT / "examples").rglob("aai.json"),
        *(ROOT / "bench/data/search/catalog").glob("*.json"),
        *(ROOT / "src/aai_gateway/bundled").glob("*.json"),
    ]
)


def test_a_worker_s_answer_for_every_real_descriptor_reads_back_as_the_card_cache_would_read_it() -> None:
    """A worker sends each card's record (`marshal`) beside its JSON: the gateway takes the record,
    the cache the JSON, and both must be the same card."""
    assert len(REAL_DESCRIPTORS) > 100
    for path in REAL_DESCRIPTORS:
        row = file_outcomes.outcome_row(str(path), "bundled" in path.parts, "linux")
        [sent] = marshal.loads(marshal.dumps([row]))  # noqa: S302 (what the gateway reads)
        assert sent == row
        _path, _bundled, card, record, _reason, _problems, _texts = sent
        assert (card is None) == (record is None), path
        if card is not None:
            assert json.loads(card) == record, path
            assert card_from_record(record) == card_from_record(json.loads(card))
