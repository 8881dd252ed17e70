"""Write gpqa_freeform.jsonl: free-form GPQA responses, each with the letter a careful reader finds.

Run from the repository root:  python tests/judges/golden/make_gpqa_freeform.py
Every line: id, kind, options (A-D as that sample showed them), target (the gold letter), response,
expected (the committed letter; null when a careful reader finds no committed answer; "ambiguous"
when the stated letter quotes another option's text). Combinatorial responses come from the phrasing
templates below over the option sets of gpqa_freeform_sets.py; the hand-written long responses are in
gpqa_freeform_handwritten.py. Deterministic: rerunning writes the same file.
"""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gpqa_freeform_handwritten import HANDWRITTEN  # noqa: E402
from gpqa_freeform_sets import SETS  # noqa: E402

LETTERS = "ABCD"
OUT = HERE / "gpqa_freeform.jsonl"


def plain(text: str) -> str:
    """An option as a model retypes it outside math mode."""
    return text.replace("$", "").replace("\\times", "x").replace("\\hbar", "ħ")


def others(letter: str) -> list[str]:
    return [x for x in LETTERS if x != letter]


# Reasoning openers that mention other letters before the final choice, the way long answers do.
def ruled_out(rng: random.Random, letter: str, opts: list[str]) -> str:
    a, b, c = rng.sample(others(letter), 3)
    forms = [
        f"Option {a} can be ruled out quickly: it ignores the second step. Option {b} looks attractive, "
        f"but it would require the reaction to proceed without the catalyst. {c}) {plain(opts[LETTERS.index(c)])} "
        f"does not fit the data either.",
        f"Let me check each choice.\n- ({a}) {plain(opts[LETTERS.index(a)])}: inconsistent with the data.\n"
        f"- ({b}) {plain(opts[LETTERS.index(b)])}: possible at first sight, but the numbers do not agree.\n"
        f"- ({c}) {plain(opts[LETTERS.index(c)])}: no.",
        f"At first I leaned towards {a}, since it is the textbook case. Then {b} seemed plausible. "
        f"Working it out carefully changes the picture.",
        f"A common mistake here is to pick {b}, which forgets the factor of two; {a} makes the opposite error.",
    ]
    return rng.choice(forms)


def restated(letter_style: str, opts: list[str]) -> str:
    return "\n".join(letter_style.format(L=L, T=plain(t)) for L, t in zip(LETTERS, opts))


# (kind, template, expected): template(letter, text, opts, rng) -> response; expected "L" means the letter.
TEMPLATES = [
    ("anchor", lambda L, T, o, r: f"{ruled_out(r, L, o)}\n\nAnswer: {L}", "L"),
    ("anchor", lambda L, T, o, r: f"{ruled_out(r, L, o)}\n\n**Final Answer:** ({L}) {plain(T)}", "L"),
    ("anchor", lambda L, T, o, r: f"After weighing everything, the correct answer is **{L}**.", "L"),
    ("anchor", lambda L, T, o, r: f"{ruled_out(r, L, o)}\n\nThe answer is {L}) {plain(T)}.", "L"),
    ("lead-in", lambda L, T, o, r: f"{ruled_out(r, L, o)}\n\nTherefore, the correct product is:\n\n**{L}. {plain(T)}**", "L"),
    ("lead-in", lambda L, T, o, r: f"Comparing with the estimate above, the closest answer to our calculated value is **{L}. {plain(T)}**", "L"),
    ("lead-in", lambda L, T, o, r: f"{ruled_out(r, L, o)}\n\nThis matches option {L}.", "L"),
    ("lead-in", lambda L, T, o, r: f"{ruled_out(r, L, o)} Taking both constraints together, the correct answer is likely {L}: {plain(T)}", "L"),
    ("lead-in", lambda L, T, o, r: f"{ruled_out(r, L, o)}\n\nSo I'll go with {L}.", "L"),
    ("lead-in", lambda L, T, o, r: f"Everything points the same way. The best choice is {L}, {plain(T)}.", "L"),
    ("lead-in", lambda L, T, o, r: f"{ruled_out(r, L, o)}\n\nThe most consistent option is therefore:\n\n{L}) {plain(T)}", "L"),
    ("parenthesised", lambda L, T, o, r: f"{ruled_out(r, L, o)}\n\nThe final result is **{plain(T)} (Option {L})**.", "L"),
    ("parenthesised", lambda L, T, o, r: f"Putting the pieces together, the answer is {plain(T)} (choice {L}).", "L"),
    ("parenthesised", lambda L, T, o, r: f"{ruled_out(r, L, o)} Hence the correct option is {plain(T)} ({L}).", "L"),
    ("answer-first", lambda L, T, o, r: f"The process taking place is:\n\n{L}. {plain(T)}\n\n{plain(T).capitalize()} "
                                        f"is the only choice consistent with every observation. {ruled_out(r, L, o)}", "L"),
    ("answer-first", lambda L, T, o, r: f"**{L}. {plain(T)}**\n\nExplanation: the data exclude the alternatives. {ruled_out(r, L, o)}", "L"),
    ("answer-first", lambda L, T, o, r: f"{L}\n\nReasoning: {ruled_out(r, L, o)}", "L"),
    ("revision", lambda L, T, o, r: (lambda X: f"Initially, the correct answer is: {X}. {plain(o[LETTERS.index(X)])}\n\nHowever, "
                                              f"re-checking the symmetry shows that this option overcounts. The closest correct "
                                              f"answer is:\n\n{L}. {plain(T)}")(r.choice(others(L))), "L"),
    ("revision", lambda L, T, o, r: (lambda X: f"My first thought was that the answer is {X}. On reflection, though, the second "
                                              f"step inverts the result, so the answer is {L}.")(r.choice(others(L))), "L"),
    ("revision", lambda L, T, o, r: (lambda X: f"Answer: {X}\n\nWait, that's wrong: I dropped a factor of two. Redoing it gives "
                                              f"{plain(T)}.\n\nAnswer: {L}")(r.choice(others(L))), "L"),
    ("boxed", lambda L, T, o, r: f"{ruled_out(r, L, o)}\n\n$\\boxed{{{L}. \\ {T.strip('$')}}}$", "L"),
    ("boxed", lambda L, T, o, r: f"Therefore:\n\n\\[\n\\boxed{{\\text{{{L}}}}}\n\\]", "L"),
    ("option-text", lambda L, T, o, r: f"{ruled_out(r, L, o)}\n\n**Answer:** {plain(T)}", "L"),
    ("option-text", lambda L, T, o, r: f"Balancing all the evidence, the final answer is {plain(T)}.", "L"),
    ("option-text", lambda L, T, o, r: f"So the result is:\n\n**{plain(T)}**", "L"),
    ("option-text", lambda L, T, o, r: f"$$\\boxed{{\\text{{{plain(T)}}}}}$$", "L"),
    ("ambiguous", lambda L, T, o, r: (lambda X: f"{ruled_out(r, L, o)}\n\nThe correct answer is **{L}. {plain(o[LETTERS.index(X)])}**")(
        r.choice(others(L))), "ambiguous"),
    ("ambiguous", lambda L, T, o, r: (lambda X: f"Answer: {L}) {plain(o[LETTERS.index(X)])}")(r.choice(others(L))), "ambiguous"),
    ("hedge", lambda L, T, o, r: (lambda X: f"Both are consistent with the spectrum, so the product is **{L}. {plain(T)}** or "
                                           f"**{X}. {plain(o[LETTERS.index(X)])}**.")(r.choice(others(L))), None),
    ("hedge", lambda L, T, o, r: (lambda X: f"{ruled_out(r, L, o)}\n\nThe answer is {L} (or {X}, as they are the same).")(
        r.choice(others(L))), None),
    ("hedge", lambda L, T, o, r: (lambda X: f"I cannot decide between {L} and {X}; both fit the data equally well.")(
        r.choice(others(L))), None),
    ("no-answer", lambda L, T, o, r: f"The options are:\n{restated('{L}) {T}', o)}\n\nWithout the coupling constants I cannot "
                                     f"tell these apart.", None),
    ("no-answer", lambda L, T, o, r: f"<think>\n{ruled_out(r, L, o)} So the answer is {L}.\n</think>\n\nI need more data to be sure.",
     None),
    ("multilingual", lambda L, T, o, r: f"{ruled_out(r, L, o)}\n\nRéponse\u00a0: «\u00a0{L}\u00a0»", "L"),
    ("multilingual", lambda L, T, o, r: f"En comparant les spectres, la bonne réponse est donc {L}.", "L"),
    ("multilingual", lambda L, T, o, r: f"综上所述，答案：{L}", "L"),
    ("multilingual", lambda L, T, o, r: f"分析各选项后，正确答案是（{L}）。", "L"),
    ("multilingual", lambda L, T, o, r: f"Nach Abwägung aller Optionen lautet die richtige Antwort: **{L}**", "L"),
    ("multilingual", lambda L, T, o, r: f"Por lo tanto, la respuesta correcta es la {L}.", "L"),
    ("multilingual", lambda L, T, o, r: f"因此，故选{L}。", "L"),
]


def generated(rng: random.Random) -> list[dict]:
    rows = []
    names = sorted(SETS)
    for t_index, (kind, template, expected) in enumerate(TEMPLATES):
        for name in rng.sample(names, 8):
            opts = SETS[name]["options"]
            letter = rng.choice(LETTERS)
            response = template(letter, opts[LETTERS.index(letter)], opts, rng)
            want = letter if expected == "L" else expected
            rows.append(dict(id=f"gen-{t_index:02d}-{name}", kind=kind, options=opts,
                             target=letter if rng.random() < 0.7 else rng.choice(others(letter)),
                             response=response, expected=want, finish_reason="stop"))
    return rows


def handwritten() -> list[dict]:
    rows = []
    for case in HANDWRITTEN:
        opts = SETS[case["set"]]["options"]
        rows.append(dict(id=f"hand-{case['id']}", kind=case.get("kind", "handwritten"), options=opts,
                         target=case.get("target", case["expected"] if case["expected"] in tuple(LETTERS) else "A"),
                         response=case["response"].strip("\n"), expected=case["expected"],
                         finish_reason=case.get("finish_reason", "stop")))
    return rows


def main() -> None:
    rows = generated(random.Random(20261203)) + handwritten()
    assert len({r["id"] for r in rows}) == len(rows), "duplicate ids"
    with open(OUT, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} responses to {OUT}")


if __name__ == "__main__":
    main()
