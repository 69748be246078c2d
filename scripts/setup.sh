#!/usr/bin/env bash
# Installs everything weft needs on a fresh Debian 12 machine.
# Idempotent: packages already present are skipped; safe to run again.
# Run as root (or with sudo available). Python tools get their own venv.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

pkgs=(
  build-essential g++ cmake ninja-build pkg-config git
  libboost-context-dev libhwloc-dev
  mpich libmpich-dev libucx-dev ucx-utils
  libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev libtbb-dev
  python3 python3-venv
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: system packages present"
fi

# Python venv for tools/ (metg sweep, plots). Uses Debian's python3 so the
# venv module is guaranteed to be there.
venv="$here/.venv"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating $venv"
  "$py" -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import numpy, matplotlib, pytest' 2>/dev/null; then
  echo "setup: installing tools/requirements.txt into the venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/tools/requirements.txt"
fi
echo "setup: done"
