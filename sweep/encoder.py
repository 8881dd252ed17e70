"""Encoder sweep: a ViT-style vision encoder, points are images per batch at a fixed image size."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from engine.native.vision import VisionConfig, VisionEncoder, load_vision_encoder, read_vision_config
from sweep.config import SweepConfig
from sweep.devices import check_device, gpus_note, torch_dtype
from sweep.runner import Measurement, Outcome
from sweep.timing import median, time_steps

DEFINITIONS = {
    "latency_ms": "median wall time of one encoder forward over the batch, device-synchronised (ms)",
    "images_per_s_per_gpu": "images per rank / slowest rank's median batch latency (per device)",
    "images_per_s": "images_per_s_per_gpu x GPUs",
    "patches_per_s_per_gpu": "images_per_s_per_gpu x patches per image",
}


class EncoderSweep:
    kind = "encoder"

    def __init__(self, cfg: SweepConfig, device: str) -> None:
        vision = dict(cfg.vision)
        self.weights = vision.pop("weights", None)
        self.cfg = cfg
        self.device = check_device(device)
        self.dtype = torch_dtype(cfg.dtype)
        if self.weights:
            if vision:
                raise ValueError(f"{cfg.path}: [vision] weights comes with its own config.json; "
                                 f"drop the other keys ({', '.join(sorted(vision))})")
            self.vcfg = read_vision_config(self.weights)
        else:
            self.vcfg = VisionConfig.from_dict(vision, f"{cfg.path} [vision]")
        self.model: VisionEncoder | None = None

    def points(self) -> list[dict[str, Any]]:
        return [{"images": n, "image_size": self.vcfg.image_size} for n in self.cfg.points]

    def setup(self) -> None:
        if self.weights:
            self.model = load_vision_encoder(self.weights, self.dtype, self.device)
        else:
            model = VisionEncoder(self.vcfg).init_random(self.cfg.seed)
            self.model = model.to(device=self.device, dtype=self.dtype).eval()

    def describe(self) -> dict[str, Any]:
        params = sum(p.numel() for p in self.model.parameters()) if self.model else None
        return {"encoder": f"vit {'(' + str(self.weights) + ')' if self.weights else '(random weights)'}",
                "vision_config": self.vcfg.to_dict(), "parameters": params}

    def measure(self, point: dict[str, Any], trace_path: Path | None) -> Measurement:
        c = self.vcfg
        pixels = torch.randn(point["images"], c.num_channels, c.image_size, c.image_size,
                             generator=torch.Generator().manual_seed(self.cfg.seed)).to(self.device, self.dtype)

        @torch.inference_mode()
        def step() -> torch.Tensor:
            return self.model(pixels)

        times = time_steps(step, self.cfg.warmup_steps, self.cfg.measured_steps, self.device, trace_path)
        return Measurement(times, work={"images": point["images"], "patches": point["images"] * c.num_patches})

    def summarise(self, point, step_times_s, work, infos, gpus) -> Outcome:
        latency = median(step_times_s)
        per_gpu = work["images"] / latency / gpus
        metrics = {
            "latency_ms": latency * 1e3,
            "latency_ms_min": min(step_times_s) * 1e3,
            "images_per_s_per_gpu": per_gpu,
            "images_per_s": per_gpu * gpus,
            "patches_per_s_per_gpu": per_gpu * self.vcfg.num_patches,
            "patches_per_image": self.vcfg.num_patches,
            "step_times_ms": [t * 1e3 for t in step_times_s],
        }
        return Outcome(metrics, DEFINITIONS, {"gpus": gpus, "gpus_note": gpus_note(self.device, gpus)},
                       cost_rates={"images": per_gpu})

    def close(self) -> None:
        self.model = None
