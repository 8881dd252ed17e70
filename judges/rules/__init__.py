"""Rule-based judges: exact AIME integers, GPQA letters, and a sympy math-equivalence check for later judges."""
from judges.rules.judge import RulesJudge

__all__ = ["RulesJudge"]
