"""Package layering: the judges read records without importing the harness (no package cycle)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_judges_import_without_the_harness():
    code = ("import sys, judges, judges.base, judges.rules, judges.llm, judges.hybrid, records\n"
            "judges.create_judge('rules'); judges.create_judge('rules+llm', judge_model='m')\n"
            "loaded = sorted(m for m in sys.modules if m == 'harness' or m.startswith('harness.'))\n"
            "print(','.join(loaded))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_harness_records_still_re_exports_the_records():
    import harness.records
    import records

    assert harness.records.GenerationRecord is records.GenerationRecord
    assert harness.records.GradeRecord is records.GradeRecord
    assert "ambiguous" in harness.records.GRADE_STATUSES
