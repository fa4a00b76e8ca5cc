#!/usr/bin/env python3
"""Writes, or checks, the flag tables of the course book from the binaries'
own `--help`, so the book cannot drift from the command lines.

A table sits between two markers in any page under docs/src/:

    <!-- flags: vecadd-anyN -->      (or: <!-- flags: grader check -->)
    | flag | what it does |
    ...
    <!-- /flags -->

Usage:
  python3 scripts/book/flags.py           rewrite every table from --help
  python3 scripts/book/flags.py --check   exit 1 if any table differs (CI)

It builds the binaries first (`cargo build --bins`, a no-op when they are
up to date) and runs target/debug/<binary> --help. Every binary of the
course must have a table somewhere in the book. Python standard library only.
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs" / "src"
EXERCISES = [
    "vecadd-anyN", "dot-gm", "dot-sm", "dot-atomic",
    "matmul-naive", "matmul-tiled", "memspace-timing", "streams-overlap",
]
GRADER = [
    "grader grade", "grader build", "grader run", "grader merge", "grader slurm",
    "grader report", "grader check", "grader autograder gradescope",
    "grader autograder prairielearn",
]
FIX = "python3 scripts/book/flags.py"
BLOCK = re.compile(r"(<!-- flags: ([^>]+?) -->\n)(.*?)(<!-- /flags -->)", re.S)


def help_text(command):
    """The --help of `command` ("dot-sm" or "grader check")."""
    binary, *sub = command.split()
    exe = ROOT / "target" / "debug" / binary
    out = subprocess.run([str(exe), *sub, "--help"], capture_output=True, text=True, check=True)
    return out.stdout


def rows(help_output):
    """(spec, text) for each argument and option, in --help's order."""
    found = []
    section = None
    for line in help_output.splitlines():
        if line in ("Arguments:", "Options:"):
            section = line
            continue
        if section is None or not line.strip():
            if not line.strip():
                section = None
            continue
        stripped = line.strip()
        if stripped.startswith(("-", "<", "[")):
            spec, _, text = stripped.partition("  ")
            found.append([spec, text.strip()])
        elif found:
            found[-1][1] = (found[-1][1] + " " + line.strip()).strip()
    return found


def cell(text):
    return text.replace("|", "\\|")


def table(command):
    lines = ["| flag | what it does |", "| --- | --- |"]
    for spec, text in rows(help_text(command)):
        lines.append(f"| `{spec}` | {cell(text) or '(no description)'} |")
    return "\n".join(lines) + "\n"


def main():
    check = "--check" in sys.argv[1:]
    packages = [f"-p{name}" for name in EXERCISES + ["grader"]]
    subprocess.run(["cargo", "build", "--quiet", "--bins", *packages], cwd=ROOT, check=True)
    tables = {}
    seen = set()
    stale = []
    for page in sorted(PAGES.rglob("*.md")):
        text = page.read_text(encoding="utf-8")

        def replace(match):
            command = match.group(2).strip()
            if command not in EXERCISES + GRADER:
                sys.exit(f"flags: {page.relative_to(ROOT)}: no binary '{command}'; one of {', '.join(EXERCISES + GRADER)}")
            seen.add(command)
            if command not in tables:
                tables[command] = table(command)
            if match.group(3) != tables[command]:
                stale.append(f"{page.relative_to(ROOT)}: the table of `{command}` differs from `{command} --help`")
            return match.group(1) + tables[command] + match.group(4)

        new = BLOCK.sub(replace, text)
        if not check and new != text:
            page.write_text(new, encoding="utf-8")
            print(f"flags: rewrote {page.relative_to(ROOT)}")
    missing = [c for c in EXERCISES + GRADER if c not in seen]
    for command in missing:
        print(f"flags: no page has a table of `{command}`: add `<!-- flags: {command} -->` and `<!-- /flags -->` and run {FIX}")
    if check:
        for line in stale:
            print(f"flags: {line}; run {FIX} to rewrite it")
        failed = len(stale) + len(missing)
        print(f"flags: {len(seen) - len(set(l.split('`')[1] for l in stale))} passed, {failed} failed")
        return 1 if failed else 0
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
