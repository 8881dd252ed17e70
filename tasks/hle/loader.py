"""HLE rows: the published columns, and the image as whichever shape a file or `datasets` hands over."""
from __future__ import annotations

import base64
from typing import Any

from tasks.errors import DataError
from tasks.columns import Column

ANSWER_TYPES = ("exactMatch", "multipleChoice")
FORMAT = (
    "HLE as parquet or JSONL (or hf:cais/hle), one question per row with fields "
    "id, question, answer, answer_type (exactMatch|multipleChoice), "
    "image (a data: URI, image bytes, a {bytes, path} struct, or empty), category, raw_subject, rationale"
)
# the columns of cais/hle (split test); image_preview and rationale_image are not read
COLUMNS = (
    Column("id", ("id",), required=False),
    Column("question", ("question",)),
    Column("answer", ("answer",)),
    Column("answer_type", ("answer_type",)),
    Column("image", ("image",), required=False),
    Column("category", ("category",), required=False),
    Column("raw_subject", ("raw_subject",), required=False),
    Column("rationale", ("rationale",), required=False),
)
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"),
          (b"RIFF", "image/webp"), (b"BM", "image/bmp"))


def image_data_uri(value: Any, where: str) -> str:
    """A data: URI from a data URI, raw bytes, a {bytes, path} struct (datasets' Image, undecoded) or a PIL image."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return ""
    if isinstance(value, str):
        if value.startswith("data:"):
            return value
        raise DataError(f"{where}: image must be a data: URI, image bytes or a {{bytes, path}} struct, got text "
                        f"{value[:40]!r}; expected {FORMAT}")
    if isinstance(value, dict):
        if value.get("bytes"):
            return image_data_uri(bytes(value["bytes"]), where)
        if not value.get("path"):
            return ""
        raise DataError(f"{where}: image struct has a path ({value['path']!r}) but no bytes; the harness reads only "
                        "embedded images (datasets' save_to_disk and push_to_hub embed them)")
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        mime = next((m for magic, m in _MAGIC if data.startswith(magic)), None)
        if mime is None:
            raise DataError(f"{where}: image bytes are not PNG, JPEG, GIF, WebP or BMP")
        return f"data:{mime};base64,{base64.b64encode(data).decode()}"
    if hasattr(value, "save"):  # a decoded PIL image
        from io import BytesIO

        buf = BytesIO()
        value.save(buf, format="PNG")
        return image_data_uri(buf.getvalue(), where)
    raise DataError(f"{where}: image of type {type(value).__name__} is not a data URI, bytes or {{bytes, path}}")


def hle_fields(fields: dict[str, Any], where: str) -> dict[str, str]:
    """Check one mapped row and return its fields as strings, the image as a data URI or ""."""
    if fields["answer_type"] not in ANSWER_TYPES:
        raise DataError(f"{where}: answer_type {fields['answer_type']!r} is not one of {', '.join(ANSWER_TYPES)}; "
                        f"expected {FORMAT}")
    out = {c.field: "" if fields.get(c.field) is None else str(fields[c.field]) for c in COLUMNS if c.field != "image"}
    out["image"] = image_data_uri(fields.get("image"), where)
    return out
