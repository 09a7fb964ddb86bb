"""A private X display for dialog tests: Xvfb, driven by xdotool.

`VirtualDisplay` starts `Xvfb -displayfd` (Xvfb picks a free display number itself and writes
it once it accepts connections, so two test runs never race for one number; its socket is
/tmp/.X11-unix/X<n>) with `-nolisten tcp`. `environ()` is what a dialog child needs on it:
DISPLAY, a PATH, a private HOME and XDG_RUNTIME_DIR, and `NO_AT_BRIDGE=1`: there is no
accessibility bus here and GTK must not wait for one (the gateway itself never sets it: on a
real desktop it would cut screen readers off the dialog). No DBus session is started: zenity
runs without one (GTK falls back to in-memory settings).

The test process's own DISPLAY is never set: only the dialog child and xdotool see this display.

Needs Debian `xvfb`, `zenity` and `xdotool` (scripts/install-test-peers installs them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

PROGRAMS = ("Xvfb", "zenity", "xdotool")
MISSING_REASON = "needs Xvfb, zenity and xdotool: run scripts/install-test-peers"


def missing_programs() -> list[str]:
    return [program for program in PROGRAMS if shutil.which(program) is None]


class VirtualDisplay:
    def __init__(self, start_seconds: float = 15.0) -> None:
        self.start_seconds = start_seconds
        self.number: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._home = tempfile.TemporaryDirectory(prefix="aai-dialog-home-")

    @property
    def display(self) -> str:
        assert self.number is not None, "the display is not started"
        return f":{self.number}"

    def __enter__(self) -> VirtualDisplay:
        read_end, write_end = os.pipe()
        try:
            self._process = subprocess.Popen(
                ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                pass_fds=(write_end,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            os.close(write_end)
        try:
            self.number = int(self._read_number(read_end))
        except BaseException:
            self.__exit__(None, None, None)
            raise
        finally:
            os.close(read_end)
        socket = Path(f"/tmp/.X11-unix/X{self.number}")
        deadline = time.monotonic() + self.start_seconds
        while not socket.exists():
            if time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise RuntimeError(f"Xvfb {self.display} made no socket {socket}")
            time.sleep(0.02)
        return self

    def _read_number(self, read_end: int) -> str:
        deadline = time.monotonic() + self.start_seconds
        data = b""
        os.set_blocking(read_end, False)
        while not data.endswith(b"\n"):
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"Xvfb exited with {self._process.returncode} before it was ready")
            if time.monotonic() > deadline:
                raise RuntimeError("Xvfb did not say its display number in time")
            try:
                chunk = os.read(read_end, 64)
            except BlockingIOError:
                time.sleep(0.02)
                continue
            if not chunk:
                raise RuntimeError("Xvfb closed -displayfd without a display number")
            data += chunk
        return data.decode().strip()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._home.cleanup()

    def environ(self) -> dict[str, str]:
        """The environment of a dialog child (and of xdotool) on this display."""
        home = Path(self._home.name)
        runtime = home / "runtime"
        runtime.mkdir(mode=0o700, exist_ok=True)
        return {
            "DISPLAY": self.display,
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(home),
            "XDG_RUNTIME_DIR": str(runtime),
            "NO_AT_BRIDGE": "1",
        }

    def xdotool(self, *args: str, timeout: float = 10.0) -> str:
        result = subprocess.run(
            ["xdotool", *args],
            env=self.environ(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
        return result.stdout

    def wait_for_window(self, name_pattern: str, timeout: float = 10.0) -> str:
        """The id of a visible window whose name matches the (POSIX extended) regex."""
        output = self.xdotool("search", "--sync", "--onlyvisible", "--name", name_pattern, timeout=timeout)
        return output.split()[0]

    def xdotool_search(self, name_pattern: str) -> list[str]:
        """Ids of the visible windows whose name matches, now (no waiting)."""
        result = subprocess.run(
            ["xdotool", "search", "--onlyvisible", "--name", name_pattern],
            check=False,  # exit status 1 when nothing matches
            env=self.environ(),
            capture_output=True,
            text=True,
            timeout=10,
        )
        return result.stdout.split()

    def press(self, window: str, *keys: str) -> None:
        """Give the window the keyboard focus, then type the keys (there is no window manager)."""
        self.xdotool("windowfocus", "--sync", window)
        self.xdotool("key", "--delay", "60", *keys)

    def window_name(self, window: str) -> str:
        return self.xdotool("getwindowname", window).removesuffix("\n")

    def clipboard_text(self) -> str:
        """The X clipboard's text as a GTK app pastes it: into an editable `zenity --text-info`,
        whose OK button prints it. The clipboard's owner must still be running."""
        reader = subprocess.Popen(
            ["zenity", "--text-info", "--editable", "--title=Clipboard reader"],
            env={**self.environ(), "LC_CTYPE": "C.UTF-8"},  # else GTK hands over "?" for non-ASCII
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            window = self.wait_for_window("^Clipboard reader$")
            # Paste, leave the text view (ctrl+Tab), move from Cancel to OK, press it.
            self.press(window, "ctrl+v", "ctrl+Tab", "Tab", "Return")
            out, _ = reader.communicate(timeout=10)
        finally:
            if reader.poll() is None:
                reader.kill()
                reader.wait()
        return out.decode("utf-8").removesuffix("\n")

    def window_exists(self, window: str) -> bool:
        try:
            self.xdotool("getwindowname", window)
        except subprocess.CalledProcessError:
            return False
        return True


def process_argv(pid: int) -> list[str] | None:
    """A running process's argv, read from /proc; None once it is gone."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return None
    if not raw:
        return None  # a zombie: exited, not yet reaped
    return [os.fsdecode(item) for item in raw.split(b"\0")[:-1]]


def children_running(program: str) -> list[int]:
    """Pids of this process's children whose argv[0] is `program` (a path ending in it)."""
    found: list[int] = []
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after the last ')'
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) < 2 or int(fields[1]) != me or fields[0] == "Z":
            continue
        argv = process_argv(int(entry.name))
        if argv and (argv[0] == program or argv[0].endswith("/" + program)):
            found.append(int(entry.name))
    return found
