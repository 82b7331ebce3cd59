#!/usr/bin/env bash
# Install the Debian packages voxa builds and tests with, if any is missing.
# Idempotent and quick when everything is present; needs root (or sudo) only
# when something must be installed.
set -euo pipefail
pkgs=(build-essential cmake pkg-config python3-venv python3-dev
      libtiff-dev libdeflate-dev libtiff-tools libfftw3-dev clang libclang-rt-14-dev libomp-dev libblosc-dev libzstd-dev zlib1g-dev libcjson-dev ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo libpng-dev
      # Richardson-Lucy on OpenCL (VkFFT, header-only):
      libvkfft-dev
      # headless napari tests (xvfb-run; Qt's xcb platform plugin):
      xvfb xauth libxkbcommon-x11-0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-xinerama0 libxcb-xfixes0 libxcb-shape0 libxcb-cursor0 libdbus-1-3 libfontconfig1 libgl1-mesa-dri)
missing=()
pkgs+=(chromium)  # report.html screenshots in the pipeline tests
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: installing ${missing[*]}"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
