"""Exits 0 after printing text that is not JSON."""

from __future__ import annotations

import sys


def main() -> None:
    sys.stdin.buffer.read()
    sys.stdout.write("Hello! I am not JSON at all " + "x" * 1000 + "\n")


if __name__ == "__main__":
    main()
