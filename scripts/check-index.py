#!/usr/bin/env python3
"""Checks that the indexes of scripts/ and bench/ cannot go stale, as
nextest's `just --list` cannot: scripts/README.md lists exactly the files
under scripts/ (but itself), and bench/README.md exactly those under
bench/harness/ and bench/probes/; the scripts scripts/README.md says
`.ci/run` runs are exactly those .ci/run runs, and the ones bench/README.md
marks "bundle" exactly those scripts/grader-bundle.sh copies into its
bundle; every bench/runs/ folder has a README.md; and every path under
bench/ or scripts/ that a text file of the checkout names exists.

Usage: scripts/check-index.py   (from anywhere in the checkout; git, python3)
Exit 0 when all hold, 1 with one line per problem, 2 outside a checkout.
"""

import re
import subprocess
import sys
from pathlib import Path

# An index entry: a table row whose first cell is a path in backticks.
ENTRY = re.compile(r"^\| `([^`]+)` \| ([^|]*)\|")
# A path a file names: bench/... or scripts/..., not inside another path
# (grader-bundle/bench/...) nor after a commit (133f21b:scripts/perf/...).
CITED = re.compile(r"(?<![\w./:-])((?:bench|scripts)/[\w./-]*[\w/])")
# Files whose text may name a path. Rust sources are left out until their
# comments, which still cite the old perf notebook, are moved to bench/runs/.
CITING = (".md", ".sh", ".py", ".cu", ".csv", ".toml", ".rs")
CITING_NAMES = (".ci/run", "scripts/cuda-runner")


def git_files(root):
    """Tracked files and new ones git does not ignore, relative to root;
    not Python's byte-code caches, which running a script leaves."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=root, capture_output=True, text=True, check=True,
    ).stdout
    return [
        name for name in out.splitlines()
        if "__pycache__/" not in name and (root / name).is_file()
    ]


def entries(index):
    """An index's rows: {path: its second cell}."""
    rows = {}
    for line in index.read_text(encoding="utf-8").splitlines():
        match = ENTRY.match(line)
        if match:
            rows[match.group(1)] = match.group(2).strip()
    return rows


def commands(script):
    """The words of a shell script outside its comments."""
    words = []
    for line in script.read_text(encoding="utf-8").splitlines():
        words.append(re.split(r"(?:^|\s)#", line, maxsplit=1)[0])
    return "\n".join(words)


def same(what, listed, actual, problems):
    for name in sorted(actual - listed):
        problems.append(f"{what}: {name} is not listed")
    for name in sorted(listed - actual):
        problems.append(f"{what}: {name} is listed but does not exist")


def check(root):
    files = git_files(root)
    problems = []

    scripts = entries(root / "scripts/README.md")
    actual = {f[len("scripts/"):] for f in files if f.startswith("scripts/")} - {"README.md"}
    same("scripts/README.md", set(scripts), actual, problems)
    ci_listed = {name for name, rest in scripts.items() if rest == "`.ci/run`"}
    ci_runs = set(re.findall(r"(?<![\w./-])scripts/([\w./-]*\w)", commands(root / ".ci/run")))
    for name in sorted(ci_runs - ci_listed):
        problems.append(f"scripts/README.md: .ci/run runs {name}, which its row does not say")
    for name in sorted(ci_listed - ci_runs):
        problems.append(f"scripts/README.md: {name}'s row says .ci/run runs it, which .ci/run does not")

    bench = entries(root / "bench/README.md")
    actual = {f[len("bench/"):] for f in files if f.startswith(("bench/harness/", "bench/probes/"))}
    same("bench/README.md", set(bench), actual, problems)
    marked = {name for name, rest in bench.items() if rest.startswith("bundle.")}
    copied = set(re.findall(r"\bbench/((?:harness|probes)/[\w.-]+)", commands(root / "scripts/grader-bundle.sh")))
    for name in sorted(copied - marked):
        problems.append(f"bench/README.md: scripts/grader-bundle.sh copies {name}, whose row does not say bundle")
    for name in sorted(marked - copied):
        problems.append(f"bench/README.md: {name}'s row says bundle, which scripts/grader-bundle.sh does not copy")

    runs = sorted({f.split("/")[2] for f in files if f.startswith("bench/runs/") and f.count("/") >= 3})
    for run in runs:
        if not (root / "bench/runs" / run / "README.md").is_file():
            problems.append(f"bench/runs/{run}: no README.md (the device, the commands, the raw output)")

    for name in files:
        if not (name.endswith(CITING) or name in CITING_NAMES):
            continue
        text = (root / name).read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            for path in CITED.findall(line):
                if not (root / path).exists():
                    problems.append(f"{name}:{number}: names {path}, which does not exist")
    return problems


def main():
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=Path(__file__).resolve().parent, capture_output=True, text=True, check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        print("check-index: not in a git checkout of the course; run it from one", file=sys.stderr)
        return 2
    problems = check(Path(top))
    for problem in problems:
        print(f"check-index: {problem}")
    if problems:
        return 1
    print("check-index: scripts/README.md and bench/README.md list every script; every cited path exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
