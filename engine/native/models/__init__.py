"""The model registry: every module in this package that declares ARCHITECTURES and MODEL_CLASS is a family.

ARCHITECTURES maps a family name (what ModelConfig.architecture holds, and the cache records) to the other names
it answers to: HF `architectures[0]`, HF `model_type` and GGUF `general.architecture`. Adding the next family is
one new module here; nothing else lists the families.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from engine.base import EngineError


@lru_cache(maxsize=1)
def _families() -> tuple[dict[str, str], dict[str, str]]:
    """(family -> "module:Class", any known name -> family), read once from the package's modules."""
    classes: dict[str, str] = {}
    aliases: dict[str, str] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        names = getattr(module, "ARCHITECTURES", None)
        if not names:
            continue
        for family, others in names.items():
            classes[family] = f"{module.__name__}:{module.MODEL_CLASS}"
            for name in (family, *others):
                aliases[name] = family
    return classes, aliases


def family_of(name: str | None) -> str | None:
    """The family an HF architecture, HF model_type or GGUF architecture name belongs to (None if unknown)."""
    return _families()[1].get(name) if name else None


def supported_families() -> list[str]:
    return sorted(_families()[0])


def check_architecture(arch: str | None, source: str) -> None:
    """Fail early, naming the architecture, when no model class handles it."""
    if family_of(arch) is None:
        raise EngineError(f"{source}: unsupported architecture {arch!r}; supported: "
                          f"{', '.join(sorted(_families()[1]))}")


def model_class(arch: str):
    check_architecture(arch, "model")
    module_name, _, class_name = _families()[0][family_of(arch)].partition(":")
    return getattr(importlib.import_module(module_name), class_name)
