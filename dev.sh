#!/usr/bin/env bash
# hlodiff's two commands. Each sets itself up first: a virtual environment in .venv with
# hlodiff and its dependencies, and Graphviz's `dot` (Debian package) when it is missing.
#
#   ./dev.sh example   explain what XLA did to the bundled MLP training step
#   ./dev.sh test      run the test suite (pytest arguments may follow, e.g. -m "not slow")
set -euo pipefail
cd "$(dirname "$0")"

PY=${PYTHON:-python3}
VENV=.venv

as_root() {  # run a command as root: directly, or through sudo when available
    if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        echo "dev.sh: need root to run: $*" >&2; return 1; fi
}

apt_install() {
    command -v apt-get >/dev/null || { echo "dev.sh: please install: $*" >&2; return 1; }
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

setup() {
    command -v "$PY" >/dev/null || { echo "dev.sh: needs Python 3.11+ ($PY not found)" >&2; exit 1; }
    "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        { echo "dev.sh: needs Python 3.11 or newer" >&2; exit 1; }
    if [ ! -x "$VENV/bin/python" ]; then
        if ! "$PY" -m venv "$VENV" 2>/dev/null; then  # Debian splits venv/ensurepip out
            rm -rf "$VENV"
            ver=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
            apt_install "python$ver-venv" || apt_install python3-venv
            "$PY" -m venv "$VENV"
        fi
    fi
    # install (or refresh) only when pyproject.toml changed since the last install
    stamp="$VENV/.installed-$(cksum < pyproject.toml | cut -d' ' -f1)"
    if [ ! -e "$stamp" ]; then
        "$VENV/bin/python" -m pip install -q --upgrade pip
        "$VENV/bin/python" -m pip install -q -e ".[test]"
        rm -f "$VENV"/.installed-*; touch "$stamp"
    fi
    command -v dot >/dev/null || apt_install graphviz ||
        echo "dev.sh: Graphviz's dot is missing: pictures will be skipped" >&2
}

cmd=${1:-example}
[ $# -gt 0 ] && shift
case "$cmd" in
example)
    setup
    d=fixtures/cpu/mlp_step
    before=$(ls $d/*.before_optimizations.txt)
    after=$(ls $d/*.cpu_after_optimizations.txt)
    mkdir -p out
    echo "\$ hlodiff $before $after"
    "$VENV/bin/hlodiff" "$before" "$after" "$@"
    "$VENV/bin/hlodiff" "$before" "$after" --format html -o out/mlp_step.html --svg out/mlp_step
    echo
    echo "Wrote out/mlp_step.html (open it in a browser) and pictures in out/mlp_step/."
    ;;
test)
    setup
    export PYTHONDONTWRITEBYTECODE=1
    exec "$VENV/bin/python" -m pytest -p no:cacheprovider -n 2 "$@"
    ;;
*)
    echo "usage: ./dev.sh example | ./dev.sh test [pytest args]" >&2
    exit 2
    ;;
esac
