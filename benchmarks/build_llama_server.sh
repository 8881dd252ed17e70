#!/usr/bin/env bash
# Build llama.cpp's `llama-server` and `llama-bench` (and libllama.so) as benchmark references, from the
# llama.cpp sources that the llama-cpp-python source package ships in vendor/llama.cpp. Idempotent: a
# finished build is reused. Prints the folder holding the binaries on its last line and links it as
# <cache>/bin, where benchmarks/bench_serve_vs_llama.py and bench_models.py look by default.
#
#   bash benchmarks/build_llama_server.sh                  build (or find) into the cache folder
#   bash benchmarks/build_llama_server.sh --with-binding   also install the Python binding (llama_cpp) into
#                                                          the active Python without compiling it again
# Environment:
#   LLAMA_CPP_PYTHON_VERSION  source package version (default 0.3.36, the one docs/performance.md used)
#   LLAMA_CACHE_DIR           where sources and build go (default $HARNESS_CACHE_DIR/llama.cpp or
#                             ~/.cache/harness/llama.cpp)
#   LLAMA_SRC                 an already unpacked llama-cpp-python source folder (skips the download)
#   JOBS                      parallel compile jobs (default: all cores)
#   LLAMA_AMX=1               keep AMX on a CPU that has it (see step 3)
# cmake comes from PyPI (into a private venv in the cache folder) when the system has none >= 3.14.
# Binaries use GGML_NATIVE=ON (or the CPU's own feature list): they run on the CPU they were built on.
set -euo pipefail
VERSION=${LLAMA_CPP_PYTHON_VERSION:-0.3.36}
CACHE=${LLAMA_CACHE_DIR:-${HARNESS_CACHE_DIR:-$HOME/.cache/harness}/llama.cpp}
BUILD=$CACHE/build-$VERSION
JOBS=${JOBS:-$(nproc)}
PY=${PYTHON:-python3}
WITH_BINDING=0
for arg in "$@"; do
  case "$arg" in
    --with-binding) WITH_BINDING=1 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "build_llama_server.sh: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done
say() { echo "build_llama_server: $*" >&2; }
mkdir -p "$CACHE"

# 1. Sources: the sdist from PyPI (never a wheel: wheels carry no llama.cpp sources), unpacked once.
if [ -n "${LLAMA_SRC:-}" ]; then
  SRC=$LLAMA_SRC
else
  SRC=$CACHE/llama_cpp_python-$VERSION
  if [ ! -f "$SRC/vendor/llama.cpp/CMakeLists.txt" ]; then
    say "downloading the llama-cpp-python $VERSION source package"
    "$PY" -m pip download -q --no-deps --no-binary :all: --dest "$CACHE" "llama-cpp-python==$VERSION"
    tar -xzf "$CACHE/llama_cpp_python-$VERSION.tar.gz" -C "$CACHE"
  fi
fi
[ -f "$SRC/vendor/llama.cpp/CMakeLists.txt" ] || { say "no vendor/llama.cpp in $SRC"; exit 1; }

# 2. cmake: the system's when new enough, else the PyPI wheel in a private venv.
cmake_ok() { command -v "$1" >/dev/null 2>&1 && "$1" --version | awk 'NR==1 {split($3, v, "."); exit !(v[1] > 3 || (v[1] == 3 && v[2] >= 14))}'; }
CMAKE=cmake
if ! cmake_ok cmake; then
  CMAKE=$CACHE/tools/bin/cmake
  if ! cmake_ok "$CMAKE"; then
    say "no cmake >= 3.14 on this system: installing cmake from PyPI into $CACHE/tools"
    "$PY" -m venv "$CACHE/tools"
    "$CACHE/tools/bin/python" -m pip install -q cmake
  fi
fi

# 3. The CPU flags. GGML_NATIVE=ON, except on CPUs with AMX: there ggml's AMX matmul crashes in ldtilecfg on the
# first inference (llama.cpp issue #20824; fix proposed in PR #26954), so the CPU's own other features are
# listed instead (the same kernels as native, without AMX). LLAMA_AMX=1 keeps GGML_NATIVE=ON regardless.
has() { grep -qw "$1" /proc/cpuinfo 2>/dev/null; }
CPU_FLAGS=(-DGGML_NATIVE=ON)
if has amx_int8 && [ "${LLAMA_AMX:-0}" != 1 ]; then
  CPU_FLAGS=(-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DCMAKE_C_FLAGS=-mtune=native
             -DCMAKE_CXX_FLAGS=-mtune=native)
  on() { if has "$1"; then CPU_FLAGS+=("-D$2=ON"); else CPU_FLAGS+=("-D$2=OFF"); fi; }
  on sse4_2 GGML_SSE42; on f16c GGML_F16C; on fma GGML_FMA; on bmi2 GGML_BMI2; on avx GGML_AVX; on avx2 GGML_AVX2
  on avx_vnni GGML_AVX_VNNI; on avx512bw GGML_AVX512; on avx512vbmi GGML_AVX512_VBMI; on avx512_vnni GGML_AVX512_VNNI
  on avx512_bf16 GGML_AVX512_BF16
  say "this CPU has AMX: building without it (llama.cpp issue #20824), flags ${CPU_FLAGS[*]}"
  BUILD=$BUILD-noamx
fi

# 4. Configure and build (make's own checks make a rerun a no-op), then check the binaries exist.
BIN=$BUILD/bin
if [ -x "$BIN/llama-server" ] && [ -x "$BIN/llama-bench" ] && [ -f "$BIN/libllama.so" ]; then
  say "already built: $BIN"
else
  say "configuring llama.cpp from $SRC/vendor/llama.cpp into $BUILD"
  "$CMAKE" -S "$SRC/vendor/llama.cpp" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${CPU_FLAGS[@]}" \
    -DBUILD_SHARED_LIBS=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON > "$BUILD.cmake.log" 2>&1
  say "building llama-server and llama-bench with $JOBS jobs (minutes; log: $BUILD.build.log)"
  "$CMAKE" --build "$BUILD" --config Release -j "$JOBS" --target llama-server llama-bench > "$BUILD.build.log" 2>&1
  for f in llama-server llama-bench libllama.so; do
    [ -e "$BIN/$f" ] || { say "the build finished without $BIN/$f"; exit 1; }
  done
fi

# 5. Optionally the Python binding, linked at run time to the libllama.so built above (no second compile).
if [ "$WITH_BINDING" = 1 ]; then
  say "installing the llama_cpp Python binding without its own build (LLAMA_BUILD=OFF)"
  # its small dependencies too (numpy, diskcache, jinja2, typing-extensions): `import llama_cpp` needs diskcache
  CMAKE_ARGS="-DLLAMA_BUILD=OFF" "$PY" -m pip install -q "$SRC"
  say "run it with LLAMA_CPP_LIB_PATH=$BIN (the benchmarks set it themselves when given --llama-bin)"
fi
ln -sfn "$BIN" "$CACHE/bin"  # where the benchmarks look by default
echo "$BIN"
