"""The run records live in one neutral package, `records`: every layer uses those classes, none keeps a copy."""
from pathlib import Path

import harness
import records


def test_every_layer_uses_the_records_package_classes():
    import harness.grade
    import harness.rundir
    import judges.base

    assert harness.rundir.GenerationRecord is records.GenerationRecord
    assert harness.grade.GradeRecord is records.GradeRecord
    assert judges.base.GenerationRecord is records.GenerationRecord
    assert "ambiguous" in records.GRADE_STATUSES


def test_the_harness_keeps_no_second_records_module():
    assert not (Path(harness.__file__).parent / "records.py").exists()
