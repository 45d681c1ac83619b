#!/usr/bin/env bash
# graphunits set-up: idempotent, quick when everything is already there.
#   - a virtual environment in .venv with the project and its pinned tools (pip);
#   - Icarus Verilog and ccache from apt when missing (root or sudo; otherwise
#     the exact command to run is printed);
#   - the OSU 0.18 um liberty file (Debian qflow-tech-osu018) in .cache/;
#   - the WebAssembly Yosys builds compiled once (warm-up), so that no test
#     pays for it.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
STAMP="$VENV/.graphunits-setup"
say() { printf '[setup] %s\n' "$*"; }

# --- Python ---------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
    PY=${PYTHON:-}
    if [ -z "$PY" ]; then
        for c in python3.11 python3.12 python3.13 python3; do
            if command -v "$c" >/dev/null 2>&1 &&
               "$c" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
                PY=$c; break
            fi
        done
    fi
    if [ -z "$PY" ]; then
        echo "graphunits needs Python >= 3.11; install it with: sudo apt-get install -y python3 python3-venv" >&2
        exit 1
    fi
    say "creating $VENV with $PY"
    "$PY" -m venv "$VENV"
fi

if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ] || [ scripts/setup.sh -nt "$STAMP" ]; then
    say "installing Python packages (pip)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[fpga,dev]' \
        2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2)
    rm -f "$STAMP"
fi

# --- System packages (apt) ------------------------------------------------
need=()
command -v iverilog >/dev/null 2>&1 || need+=(iverilog)
command -v ccache >/dev/null 2>&1 || need+=(ccache)
if [ ${#need[@]} -gt 0 ]; then
    cmd="apt-get install -y --no-install-recommends ${need[*]}"
    if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo"; else SUDO="none"; fi
    if [ "$SUDO" = none ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "graphunits needs: ${need[*]}. Please run:" >&2
        echo "    sudo apt-get update && sudo $cmd" >&2
        exit 1
    fi
    say "installing ${need[*]} (apt)"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >/dev/null
    $SUDO $cmd -qq >/dev/null
fi

# --- Headless browser for the report test (optional) ----------------------
# verif/test_report.py opens the HTML report in a headless Chromium; Debian's
# chromium-headless-shell is the small build of it. Best effort: where it cannot be
# installed (no root, a distribution without the package) the test is skipped and
# the command to run is printed here.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-headless-shell >/dev/null 2>&1; then
    cmd="apt-get install -y --no-install-recommends chromium-headless-shell"
    if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo"; else SUDO="none"; fi
    if [ "$SUDO" != none ] && command -v apt-get >/dev/null 2>&1; then
        say "installing chromium-headless-shell (apt, for the report's browser test)"
        export DEBIAN_FRONTEND=noninteractive
        { $SUDO apt-get update -qq >/dev/null && $SUDO $cmd -qq >/dev/null; } ||
            echo "[setup] warning: could not install chromium-headless-shell; the report's browser test will be skipped" >&2
    else
        echo "[setup] optional: for the report's browser test run: sudo apt-get update && sudo $cmd" >&2
    fi
fi

# --- Toolchain checks and warm-up (liberty download, Yosys WebAssembly) ----
if [ ! -f "$STAMP" ]; then
    "$VENV/bin/python" -m sim.toolchain setup
    date -u +%FT%TZ > "$STAMP"
fi
