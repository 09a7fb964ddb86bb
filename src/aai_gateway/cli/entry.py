"""Where every `aai-gateway` run starts: the installed command (`[project.scripts]`) and
`python -m aai_gateway`.

The command's imports (the MCP SDK, pydantic's models, the descriptor side) make ~110,000
objects that live as long as the process. With the cyclic garbage collector on, a command such
as `scan` made one full pass more over them (~0.1 s; docs/performance.md, "Imports without the
cyclic GC"); so the imports run with it off, and what they made is moved out of its view
(`bulk.without_cyclic_gc`). `serve` does the same for its own imports and build (cli/serve.py).
"""

from __future__ import annotations


def main() -> int:
    try:
        from ..bulk import without_cyclic_gc

        with without_cyclic_gc():
            from .main import main as run_command

        return run_command()
    except KeyboardInterrupt:  # Ctrl-C before the command ran (imports, parsing): no traceback
        return 130
