# shellcheck shell=bash
# Shared by scripts/demo and scripts/test: find Python >= 3.11, make .venv, install the project.
# Usage (sourced): aai_bootstrap "<pip extras, e.g. dev or empty>"
# Anything missing or too old stops the script with one line saying what and why (aai_die).
set -euo pipefail

AAI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
AAI_VENV="$AAI_ROOT/.venv"
AAI_MIN_PYTHON="3.11"

aai_log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
aai_die() { printf '\033[1;31mstopped: %s\033[0m\n' "$*" >&2; exit 1; }

aai_sudo() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

aai_version_at_least() {
  # aai_version_at_least 22.19.0 22.19: is the first dotted version >= the second?
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

aai_find_python() {
  local found=""
  for candidate in python3.13 python3.12 python3.11 python3; do
    command -v "$candidate" >/dev/null 2>&1 || continue
    if "$candidate" -c "import sys; sys.exit(sys.version_info[:2] < tuple(map(int, '$AAI_MIN_PYTHON'.split('.'))))" \
        2>/dev/null; then
      command -v "$candidate"; return 0
    fi
    [ -n "$found" ] || found="$("$candidate" -c 'import platform; print(platform.python_version())' 2>/dev/null)"
  done
  if [ -n "$found" ]; then
    aai_die "AAI Gateway needs Python $AAI_MIN_PYTHON or newer, found only $found: install a newer python3"
  fi
  aai_die "AAI Gateway needs Python $AAI_MIN_PYTHON or newer and found no python3: apt-get install python3"
}

aai_apt_install() {
  # Install Debian packages that are not installed yet; quiet when everything is present. apt's
  # own chatter (debconf notes, progress) goes to a log that is shown only when apt fails.
  local missing=()
  for package in "$@"; do
    [ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" = "install ok installed" ] || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null 2>&1 ||
    aai_die "needs the Debian/Ubuntu packages ${missing[*]} and there is no apt-get: install them yourself"
  if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null 2>&1; then
    aai_die "needs the Debian packages ${missing[*]}; installing them needs root: run this as root, or install sudo"
  fi
  if [ "$(id -u)" -ne 0 ] && ! sudo true; then  # asks for the password here, if sudo wants one
    aai_die "needs the Debian packages ${missing[*]}; sudo did not allow installing them"
  fi
  aai_log "installing Debian packages: ${missing[*]}"
  local log
  log="$(mktemp "${TMPDIR:-/tmp}/aai-apt.XXXXXX")"
  if ! { aai_sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
         aai_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
           "${missing[@]}"; } >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    aai_die "apt-get could not install ${missing[*]} (full log: $log)"
  fi
  rm -f "$log"
}

aai_make_venv() {
  # aai_make_venv PYTHON DIR. Debian ships venv support separately (python3.X-venv) and, without
  # it, `python3 -m venv` prints a scary "not created successfully" on stdout: ask first.
  local python="$1" dir="$2"
  if ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    aai_apt_install "python$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-venv"
  fi
  local output
  if ! output="$("$python" -m venv "$dir" 2>&1)"; then
    rm -rf "$dir"
    aai_die "could not create a virtual environment in $dir: $(printf '%s' "$output" | head -n 3 | tr '\n' ' ')"
  fi
}

aai_bootstrap() {
  local extras="${1:-}"
  local python
  python="$(aai_find_python)"
  if [ ! -x "$AAI_VENV/bin/python" ]; then
    aai_log "creating virtual environment in .venv"
    aai_make_venv "$python" "$AAI_VENV"
  fi
  local spec="$AAI_ROOT"
  [ -n "$extras" ] && spec="${AAI_ROOT}[$extras]"
  local stamp="$AAI_VENV/.aai-installed-$extras"
  local digest
  digest="$(sha256sum "$AAI_ROOT/pyproject.toml" | cut -c1-16)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
    aai_log "installing aai-gateway${extras:+ with [$extras]} into .venv"
    if ! "$AAI_VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$spec" \
        > "$AAI_VENV/pip-install.log" 2>&1; then
      grep -v "^WARNING: Location 'file:" "$AAI_VENV/pip-install.log" | tail -n 20 >&2
      aai_die "pip could not install aai-gateway into .venv (full log: $AAI_VENV/pip-install.log)"
    fi
    echo "$digest" > "$stamp"
  fi
  export PATH="$AAI_VENV/bin:$PATH"
}
