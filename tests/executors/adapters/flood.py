"""Writes 50 MB to stdout (far beyond any sane answer), then exits 0."""

from __future__ import annotations

import sys


def main() -> None:
    sys.stdin.buffer.read()
    chunk = b"A" * (1024 * 1024)
    for _ in range(50):
        sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
