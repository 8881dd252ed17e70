"""Small compiled CPU kernels, built once with the system C++ compiler and cached; plain PyTorch is the fallback.

The build links against the installed torch (no ninja, no pybind: the ops register through TORCH_LIBRARY and
load with torch.ops.load_library). The library lands in $HARNESS_KERNEL_CACHE_DIR (default
~/.cache/harness/kernels; not under $HARNESS_CACHE_DIR, which tests point at fresh folders, and a build takes
about a minute), named by a hash of the source, torch version and compiler flags, so a new torch or an edited
source builds anew. HARNESS_NATIVE_KERNELS=0 turns the kernels off (the plain PyTorch paths run instead).
"""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path

import torch

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
# (source, flags): -ffast-math lets gcc vectorise exp() in the attention kernel through libmvec (it never forms
# inf or NaN itself); the RoPE file must round exactly as torch does, so it gets no fast-math and no FMA.
SOURCES = [(HERE / "paged_decode.cpp", ["-ffast-math", "-fopenmp"]), (HERE / "rope.cpp", ["-ffp-contract=off"]),
           (HERE / "int8_vnni.cpp", []), (HERE / "decode_step.cpp", [])]
CFLAGS = ["-O3", "-march=native", "-std=c++17", "-fPIC"]
SPLIT = 256  # tokens per decode-attention work item in paged_decode.cpp; block sizes must divide it
# The tiled decode-attention items (same bits, fewer instructions: paged_decode.cpp); HARNESS_DECODE_TILED=0 keeps
# the row-at-a-time items, for A/B runs.
DECODE_TILED = os.environ.get("HARNESS_DECODE_TILED", "1") != "0"
_lock = threading.Lock()
_state: dict[str, object] = {}


def _cache_dir() -> Path:
    return Path(os.environ.get("HARNESS_KERNEL_CACHE_DIR") or Path.home() / ".cache" / "harness" / "kernels")


def _run(cmd: list[str], what: str) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"building {what} failed:\n{r.stderr[-2000:]}")


def _build(target: Path) -> None:
    from torch.utils import cpp_extension
    cxx = os.environ.get("CXX", "g++")
    includes = [f"-I{p}" for p in cpp_extension.include_paths()] + [f"-I{sysconfig.get_paths()['include']}"]
    abi = "-D_GLIBCXX_USE_CXX11_ABI=" + str(int(torch._C._GLIBCXX_USE_CXX11_ABI))
    torch_lib = Path(torch.__file__).parent / "lib"
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:  # build aside, then rename: concurrent builds are safe
        objects = []
        for src, flags in SOURCES:
            obj = str(Path(tmp) / (src.stem + ".o"))
            _run([cxx, "-c"] + CFLAGS + flags + includes + [abi, str(src), "-o", obj], src.name)
            objects.append(obj)
        out = Path(tmp) / target.name
        _run([cxx, "-shared", "-fopenmp"] + objects + [f"-L{torch_lib}", "-lc10", "-ltorch_cpu",
                                                       f"-Wl,-rpath,{torch_lib}", "-o", str(out)], "the library")
        os.replace(out, target)


def _library_path() -> Path:
    h = hashlib.sha256()
    for src, flags in SOURCES:
        h.update(src.read_bytes() + " ".join(flags).encode())
    h.update(" ".join(CFLAGS + [torch.__version__, sys.version]).encode())
    return _cache_dir() / f"harness_native_{h.hexdigest()[:16]}.so"


def load() -> bool:
    """Build (first use only) and load the kernels; False, once logged, when that is off or impossible."""
    known = _state.get("ok")
    if known is not None:  # asked once per layer per step: no lock once decided
        return bool(known)
    with _lock:
        if "ok" in _state:
            return bool(_state["ok"])
        ok = False
        if os.environ.get("HARNESS_NATIVE_KERNELS", "1") == "0":
            log.info("compiled kernels off (HARNESS_NATIVE_KERNELS=0)")
        elif shutil.which(os.environ.get("CXX", "g++")) is None:
            log.warning("no C++ compiler found; decode attention runs in plain PyTorch")
        elif "loaded" in _state:  # one library per process: its ops are registered once (set_enabled)
            ok = True
        else:
            try:
                path = _library_path()
                if not path.exists():
                    log.warning("building compiled kernels into %s (once, about a minute)", path)
                    _build(path)
                torch.ops.load_library(str(path))
                _state["loaded"] = path
                ok = True
            except Exception as exc:  # any build or load failure leaves the plain path in charge
                log.warning("compiled kernels unavailable, plain PyTorch runs instead: %s", exc)
        _state["ok"] = ok
        return ok


def set_enabled(on: bool) -> bool:
    """Turn the kernels on or off for steps from now on (benchmarks compare both paths in one process); returns
    whether they are on. Engines decide on the other ops when they bind their cache, attention on every step.
    Turning them back on reuses the library already loaded, even if the source changed since."""
    with _lock:
        _state.pop("ok", None)
        if not on:
            _state["ok"] = False
            return False
    return load()


def paged_decode_attention(q: torch.Tensor, kv_cache: torch.Tensor, block_table: torch.Tensor, lens: torch.Tensor,
                           block_size: int, scale: float) -> torch.Tensor:
    """q [nd, Hq, D] against each row's context read in place from kv_cache [2*Hkv, slots, D]; returns [nd, Hq*D].
    Call load() first."""
    return torch.ops.harness_native.paged_decode_attention(q, kv_cache, block_table, lens, block_size, scale,
                                                           DECODE_TILED)


def rope_and_cache(qkv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, kv_cache: torch.Tensor,
                   slot_mapping: torch.Tensor, num_heads: int, num_kv_heads: int) -> None:
    """Rotate the q and k heads of fused rows qkv [T, (Hq+2*Hkv)*D] in place (cos, sin: [T, 1, D]) and copy each
    row's k and v heads into kv_cache [2*Hkv, slots, D] at slot_mapping. Call load() first."""
    torch.ops.harness_native.rope_and_cache(qkv, cos, sin, kv_cache, slot_mapping, num_heads, num_kv_heads)


def add_rms_norm(x: torch.Tensor, residual: torch.Tensor | None, weight: torch.Tensor,
                 eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """bf16 only: (s, rms_norm(s) * weight) with s = x + residual (or x), rounded as the torch ops it replaces
    round each result. Call load() first."""
    return torch.ops.harness_native.add_rms_norm(x, residual, weight, eps)


def silu_mul(gu: torch.Tensor) -> torch.Tensor:
    """bf16 only: silu(gu[:, :F]) * gu[:, F:], rounded as F.silu(g) * u rounds. Call load() first."""
    return torch.ops.harness_native.silu_mul(gu)


def decode_layers(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layers: list[torch.Tensor],
                  kv_caches: list[torch.Tensor], slot_mapping: torch.Tensor, block_table: torch.Tensor,
                  lens: torch.Tensor, block_size: int, scale: float, num_heads: int, num_kv_heads: int,
                  eps: float) -> torch.Tensor:
    """bf16 only: every Llama layer for one decode row x [1, H] in one call (decode_step.cpp; 10 tensors per layer
    in `layers`, see there); returns the hidden row before the final norm. Call load() first."""
    return torch.ops.harness_native.decode_layers(x, cos, sin, layers, kv_caches, slot_mapping, block_table, lens,
                                                  block_size, scale, num_heads, num_kv_heads, eps, DECODE_TILED)


def quantize_int8_groups(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """w [N, K] -> (int8 codes [N, K], float32 scales [N, K/32]) with one scale per 32 inputs (amax / 127). For a
    matrix that came from GGUF Q8_0 (codes of the same form) this gives back the file's codes."""
    groups = w.float().reshape(w.shape[0], -1, 32)
    scales = groups.abs().amax(-1) / 127
    codes = torch.round(groups / scales.clamp_min(1e-30)[..., None]).clamp_(-127, 127).to(torch.int8)
    return codes.reshape(w.shape).contiguous(), scales.contiguous()


def int8_matvec(x: torch.Tensor, codes: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """float32 [1, N] = x [1, K] (bf16) @ (codes * scales per 32 inputs).T. Call load() first."""
    return torch.ops.harness_native.int8_matvec(x, codes, scales)


def vnni_available() -> bool:
    """Whether the library was built with AVX-512 VNNI (int8_int4_matmul). Call load() first."""
    return bool(torch.ops.harness_native.vnni_available())


def vnni_pack_codes(codes: torch.Tensor) -> torch.Tensor:
    """uint8 codes [N, K] -> the [N/16, K/4, 16, 4] layout int8_int4_matmul reads (outputs padded to 16)."""
    return torch.ops.harness_native.vnni_pack_codes(codes)


def int8_int4_matmul(x: torch.Tensor, packed: torch.Tensor, d: torch.Tensor, c: torch.Tensor, n: int) -> torch.Tensor:
    """bf16 [M, n] = x [M, K] (bf16, quantized to 8 bits per 32 inputs inside) @ W.T with W = d * codes + c per
    group of 32 inputs (d, c float32 [K/32, padded N]). Call load() first."""
    return torch.ops.harness_native.int8_int4_matmul(x, packed, d, c, n)
