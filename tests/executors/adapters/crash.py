"""Fails: a message on stderr and exit code 7, or with `params.abort` death by SIGABRT."""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    params = json.loads(sys.stdin.buffer.readline())["params"]
    sys.stderr.write("starting up\n" + "noise line\n" * 20_000)  # more than the kept tail
    sys.stderr.write("fatal: database is locked\n")
    sys.stderr.flush()
    if params.get("abort"):
        os.abort()
    sys.exit(7)


if __name__ == "__main__":
    main()
