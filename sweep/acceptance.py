"""Synthetic acceptance for speculative-decoding benchmarks: its definition and expected length.

The seeded draw itself is engine.native.spec_decode.SyntheticAcceptance (the one the engine runs).
Definition: each of the nextn draft positions is accepted with conditional probability p given that
every earlier position was accepted; the first rejection ends the run. Tokens gained per step are
1 (the verified/bonus token) + accepted drafts, so the expected acceptance length is
AL(p, n) = 1 + p + p^2 + ... + p^n. (This is not "fraction p of drafted tokens accepted", under
which nextn = 3, 0.75 would give AL = 3.25 rather than 2.73.)
"""
from __future__ import annotations

from engine.native.spec_decode import SyntheticAcceptance

DEFINITION = ("synthetic acceptance: draft position i is accepted with conditional probability p given "
              "positions 1..i-1 accepted; acceptance length AL = 1 + accepted drafts; "
              "E[AL] = 1 + p + p^2 + ... + p^nextn")


expected_acceptance_length = SyntheticAcceptance.expected_length  # E[AL] = 1 + p + ... + p^nextn
