"""Rule-based judges: exact AIME integers, GPQA letters, and a sympy math-equivalence check for later judges."""
from judges.rules.judge import RulesJudge
from judges.rules.math_equiv import amath_equiv, math_equiv

__all__ = ["RulesJudge", "amath_equiv", "math_equiv"]
