# Shared by scripts/demo and scripts/test: find Python >= 3.11, make .venv, install the project.
# Usage (sourced): aai_bootstrap "<pip extras, e.g. dev or empty>"
set -euo pipefail

AAI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
AAI_VENV="$AAI_ROOT/.venv"

aai_log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

aai_sudo() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else echo "need root to run: $*" >&2; return 1
  fi
}

aai_find_python() {
  for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
      command -v "$candidate"; return 0
    fi
  done
  echo "AAI Gateway needs Python 3.11 or newer (apt-get install python3)" >&2
  return 1
}

aai_apt_install() {
  # Install Debian packages that are not installed yet; quiet when everything is present.
  local missing=()
  for package in "$@"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  aai_log "installing Debian packages: ${missing[*]}"
  aai_sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  aai_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

aai_bootstrap() {
  local extras="${1:-}"
  local python
  python="$(aai_find_python)"
  if [ ! -x "$AAI_VENV/bin/python" ]; then
    aai_log "creating virtual environment in .venv"
    if ! "$python" -m venv "$AAI_VENV" 2>/dev/null; then
      # Debian ships venv support separately.
      rm -rf "$AAI_VENV"
      aai_apt_install "python3-venv"
      "$python" -m venv "$AAI_VENV"
    fi
  fi
  local spec="$AAI_ROOT"
  [ -n "$extras" ] && spec="$AAI_ROOT[$extras]"
  local stamp="$AAI_VENV/.aai-installed-$extras"
  local digest
  digest="$(sha256sum "$AAI_ROOT/pyproject.toml" | cut -c1-16)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
    aai_log "installing aai-gateway${extras:+ with [$extras]} into .venv"
    if ! "$AAI_VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$spec" \
        > "$AAI_VENV/pip-install.log" 2>&1; then
      grep -v "^WARNING: Location 'file:" "$AAI_VENV/pip-install.log" >&2
      echo "pip install failed; full log: $AAI_VENV/pip-install.log" >&2
      return 1
    fi
    echo "$digest" > "$stamp"
  fi
  export PATH="$AAI_VENV/bin:$PATH"
}
