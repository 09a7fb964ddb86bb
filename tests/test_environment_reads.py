"""Only `cli/` reads the gateway's environment: every other module gets what it needs passed in
(`ExecutorSettings.environ`, `AuthProvider(environ=…)`, `Layout`), so what an executor sees is
what the CLI chose to hand it, and a test can hand it something else."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "src" / "aai_gateway"
ALLOWED = PACKAGE / "cli"

OS_MODULES = {"os", "posix", "nt"}
OS_READERS = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}
HOME_READERS = {"expanduser", "expandvars"}  # os.path.* and Path.expanduser read HOME and friends


def environment_reads(source: str) -> list[str]:
    """Where `source` reads (or changes) the process environment: `line: what`."""
    tree = ast.parse(source)
    os_names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.partition(".")[0]
                if alias.asname is None and top in OS_MODULES:  # `import os.path` binds `os`
                    os_names.add(top)
                elif alias.name in OS_MODULES:
                    os_names.add(alias.asname or alias.name)
    found = [(getattr(node, "lineno", 0), what) for node in ast.walk(tree) for what in _reads(node, os_names)]
    return [f"{line}: {what}" for line, what in sorted(found)]


def _reads(node: ast.AST, os_names: set[str]) -> list[str]:
    if isinstance(node, ast.ImportFrom) and node.module in OS_MODULES:
        return [f"from {node.module} import {a.name}" for a in node.names if a.name in OS_READERS]
    if isinstance(node, ast.Attribute):
        if node.attr in OS_READERS and isinstance(node.value, ast.Name) and node.value.id in os_names:
            return [f"{node.value.id}.{node.attr}"]
        if node.attr in HOME_READERS:
            return [f"….{node.attr}"]
        if node.attr == "home" and ast.unparse(node.value) in ("Path", "pathlib.Path"):
            return ["Path.home"]
    if isinstance(node, ast.Call):
        called = ast.unparse(node.func)
        given_path = len(node.args) >= 3 or any(keyword.arg == "path" for keyword in node.keywords)
        if called in ("shutil.which", "which") and not given_path:
            return ["shutil.which without path= (reads PATH)"]
        if called in ("getattr", "vars") and node.args and ast.unparse(node.args[0]) in os_names:
            return [f"{called}({ast.unparse(node.args[0])}, …)"]
    return []


def test_no_module_outside_cli_reads_the_environment() -> None:
    modules = [p for p in sorted(PACKAGE.rglob("*.py")) if ALLOWED not in p.parents]
    assert len(modules) > 100  # the walk found the package
    reads = {
        str(path.relative_to(ROOT)): found
        for path in modules
        if (found := environment_reads(path.read_text(encoding="utf-8")))
    }
    assert reads == {}, "pass what these need in from cli/ (ExecutorSettings, constructor arguments)"


@pytest.mark.parametrize(
    "source",
    [
        "import os\nos.environ.get('PATH')",
        "import os\nos.environ['HOME']",
        "import os as system\nsystem.environb",
        "import os\nos.getenv('ANDROID_SERIAL')",
        "from os import environ",
        "from os import getenv as read",
        "import os\nos.path.expanduser('~/.config')",
        "from pathlib import Path\nPath('~').expanduser()",
        "import os.path\nos.path.expandvars('$HOME')",
        "from pathlib import Path\nPath.home()",
        "import shutil\nshutil.which('adb')",
        "import os\ngetattr(os, 'environ')",
        "import os.path\nos.environ",
        "import os\nos.putenv('A', 'b')",
    ],
)
def test_every_way_of_reading_the_environment_is_found(source: str) -> None:
    assert environment_reads(source) != []


@pytest.mark.parametrize(
    "source",
    [
        "settings.environ.get('PATH')",
        "self.environ['HOME']",
        "import shutil\nshutil.which('adb', path='/usr/bin')",
        "import os\nos.sep",
        "child_environment(parent, {})",
    ],
)
def test_environment_handed_down_is_not_a_read(source: str) -> None:
    assert environment_reads(source) == []
