"""Run records, re-exported from the neutral `records` package that judges import too (no package cycle)."""
from records import (
    FINISH_REASONS, GRADE_STATUSES, SCHEMA_VERSION, GenerationRecord, GradeRecord, RecordError,
)

__all__ = ["FINISH_REASONS", "GRADE_STATUSES", "SCHEMA_VERSION", "GenerationRecord", "GradeRecord", "RecordError"]
