"""Readers for the public evaluation outputs the real-output corpus is drawn from (see SOURCES.md)."""
from __future__ import annotations

import ast
import io
import json
import re
import subprocess
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Responses are capped at this many characters; when longer, the end (where answers are) is kept.
MAX_RESPONSE_CHARS = 12_000


@dataclass
class Candidate:
    """One model response as a source holds it, before it is labelled."""

    id: str
    shape: str  # "gpqa" (letters, optional choices) or "aime" (an integer)
    response: str
    model: str
    family: str
    reasoning_model: bool
    source: dict[str, Any]
    letters: list[str] | None = None
    choices: list[str] | None = None
    hint: Any = None  # the source's own extracted answer: a hint for labelling, never the label itself
    asked_format: str = ""  # how the source's prompt asked the model to give its answer
    extra: dict[str, Any] = field(default_factory=dict)


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def head_commit(repo: Path) -> str:
    return _git(repo, "rev-parse", "HEAD").decode().strip()


def _blob_paths(repo: Path, prefix: str) -> list[str]:
    """Paths under prefix whose content the snapshot holds (large files are listed but absent)."""
    out = []
    for line in _git(repo, "ls-tree", "-r", "-l", "HEAD", prefix).decode().splitlines():
        meta, path = line.split("\t", 1)
        if meta.split()[3].isdigit() and _exists(repo, path):
            out.append(path)
    return out


def _exists(repo: Path, path: str) -> bool:
    return subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"HEAD:{path}"],
                          capture_output=True).returncode == 0


def capped(text: str) -> tuple[str, int]:
    """The response as stored, and how many leading characters were dropped to fit the cap."""
    if len(text) <= MAX_RESPONSE_CHARS:
        return text, 0
    return text[-MAX_RESPONSE_CHARS:], len(text) - MAX_RESPONSE_CHARS


FAMILIES = (("llama", "Llama"), ("mixtral", "Mistral"), ("mistral", "Mistral"), ("mathstral", "Mistral"),
            ("qwen", "Qwen"), ("yi-", "Yi"), ("yi_", "Yi"), ("gemini", "Gemini"), ("gemma", "Gemma"),
            ("phi-", "Phi"), ("command-r", "Command-R"), ("c4ai", "Command-R"), ("jamba", "Jamba"),
            ("deepseek", "DeepSeek"), ("claude", "Claude"), ("gpt-", "GPT"), ("chatgpt", "GPT"),
            ("o1-", "OpenAI o-series"), ("reka", "Reka"), ("grok", "Grok"), ("athene", "Athene"))


def family_of(model: str) -> str:
    low = model.lower()
    for key, fam in FAMILIES:
        if key in low:
            return fam
    return "other"


# --- TIGER-AI-Lab/MMLU-Pro: eval_results/model_outputs_<model>_5shots.zip (Apache-2.0 repository) ---

MMLU_PRO_REPO = "TIGER-AI-Lab/MMLU-Pro"


def mmlu_pro_candidates(repo: Path) -> Iterator[Candidate]:
    commit = head_commit(repo)
    for path in sorted(_blob_paths(repo, "eval_results/")):
        if not path.endswith(".zip"):
            continue
        model = re.sub(r"^model_outputs_|_5shots$", "", Path(path).name[:-4])
        with zipfile.ZipFile(io.BytesIO(_git(repo, "show", f"HEAD:{path}"))) as zf:
            inner = [n for n in zf.namelist() if n.endswith(".json")]
            rows = json.loads(zf.read(inner[0]))
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                continue
            text = row.get("generated_text", row.get("model_outputs")) or ""
            options = row["options"] if isinstance(row["options"], list) else ast.literal_eval(row["options"])
            text, dropped = capped(text)
            yield Candidate(
                id=f"mmlupro:{model}:{row['question_id']}", shape="gpqa", response=text, model=model,
                family=family_of(model), reasoning_model=False,
                source={"repo": MMLU_PRO_REPO, "path": path, "member": inner[0], "commit": commit,
                        "index": i, "license": "Apache-2.0 (repository); MMLU-Pro data MIT"},
                letters=[chr(65 + k) for k in range(len(options))], choices=[str(o) for o in options],
                hint=row.get("pred"), asked_format='5-shot chain of thought ending "The answer is (X)"',
                extra={"dropped_chars": dropped})


# --- WildEval/ZeroEval: result_dirs/{gsm,math-l5}/<model>.json (Apache-2.0 repository) ---

ZEROEVAL_REPO = "WildEval/ZeroEval"
_INT_RE = re.compile(r"-?\d+")


def _gold_integer(row: dict[str, Any]) -> int | None:
    gold = str(row.get("answer", "")).lstrip("# ").replace(",", "").strip()
    return int(gold) if _INT_RE.fullmatch(gold) else None


def zeroeval_candidates(repo: Path) -> Iterator[Candidate]:
    commit = head_commit(repo)
    for task in ("gsm", "math-l5"):
        for path in sorted(_blob_paths(repo, f"result_dirs/{task}/")):
            model = Path(path).stem
            rows = json.loads(_git(repo, "show", f"HEAD:{path}"))
            for i, row in enumerate(rows):
                if _gold_integer(row) is None:
                    continue  # only integer-answer problems: the AIME shape
                out = row.get("output")
                text = out[0] if isinstance(out, list) and out else str(out or "")
                text, dropped = capped(text)
                yield Candidate(
                    id=f"zeroeval-{task}:{model}:{row.get('id', i)}", shape="aime", response=text, model=model,
                    family=family_of(model), reasoning_model=model.startswith("o1-"),
                    source={"repo": ZEROEVAL_REPO, "path": path, "commit": commit, "index": i,
                            "license": "Apache-2.0"},
                    hint=json_answer(text), asked_format='a JSON object with "reasoning" and "answer" fields',
                    extra={"dropped_chars": dropped, "task": task})


def json_answer(text: str) -> str | None:
    """The "answer" field of the JSON object the ZeroEval prompt asks for, when the response holds one."""
    start = text.find("{")
    end = text.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        obj = json.loads(text[start:end + 1])
    except ValueError:
        return None
    ans = obj.get("answer") if isinstance(obj, dict) else None
    return None if ans is None else str(ans)


# --- openai/grade-school-math: grade_school_math/data/example_model_solutions.jsonl (MIT) ---

GSM_REPO = "openai/grade-school-math"
GSM_PATH = "grade_school_math/data/example_model_solutions.jsonl"
GSM_VARIANTS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def gsm_solution_candidates(repo: Path) -> Iterator[Candidate]:
    """GPT-3 (6B and 175B) GSM8K solutions from the GSM8K paper; each ends "A: <answer>" when it answers."""
    commit = head_commit(repo)
    for i, line in enumerate(_git(repo, "show", f"HEAD:{GSM_PATH}").decode("utf-8").splitlines()):
        row = json.loads(line)
        for variant in GSM_VARIANTS:
            text, dropped = capped(row[variant]["solution"])
            model = f"GPT-3 {variant.replace('_', ' ')}"
            answer = re.findall(r"^A: (.*)$", text, re.MULTILINE)
            yield Candidate(
                id=f"gsm8k-paper:{variant}:{i}", shape="aime", response=text, model=model, family="GPT-3",
                reasoning_model=False,
                source={"repo": GSM_REPO, "path": GSM_PATH, "commit": commit, "index": i, "license": "MIT",
                        "field": f"{variant}.solution"},
                hint=answer[-1] if answer else None,
                asked_format='finetuned on solutions that end with a line "A: <answer>"', extra={"dropped_chars": dropped})


# --- markyx316/LLM-Reasoning-Trace-Topology: data/traces/*.jsonl (MIT) ---

TRACES_REPO = "markyx316/LLM-Reasoning-Trace-Topology"
TRACES_FILES = ("data/traces/math500_deepseek_r1.jsonl", "data/traces/pilot_math500_r1.jsonl",
                "data/traces/pilot_math500_qwen7b.jsonl", "data/traces/pilot_math500_llama8b.jsonl")


def reasoning_trace_candidates(repo: Path) -> Iterator[Candidate]:
    """DeepSeek-R1 and R1-distilled models on MATH-500, with their thinking; integer answers only."""
    commit = head_commit(repo)
    for path in TRACES_FILES:
        for i, line in enumerate(_git(repo, "show", f"HEAD:{path}").decode("utf-8").splitlines()):
            row = json.loads(line)
            gold = str(row.get("ground_truth", "")).strip()
            if not _INT_RE.fullmatch(gold):
                continue
            text, dropped = capped(row.get("full_response") or "")
            model = row.get("model_short_name") or row.get("model_name") or "unknown"
            yield Candidate(
                id=f"r1-traces:{Path(path).stem}:{i}", shape="aime", response=text, model=model,
                family="DeepSeek-R1", reasoning_model=True,
                source={"repo": TRACES_REPO, "path": path, "commit": commit, "index": i, "license": "MIT"},
                hint=row.get("extracted_answer"), asked_format="none: the prompt is the problem text alone",
                extra={"dropped_chars": dropped})


# --- lupantech/MathVista: results/<model>/output_<model>.json (CC BY-SA 4.0 repository) ---

MATHVISTA_REPO = "lupantech/MathVista"
# The zero-shot testmini outputs of each model the repository holds (the few-shot, caption and OCR
# variants repeat the same three API models; the random and template files are not model output).
MATHVISTA_FILES = {
    "results/bard/output_bard.json": ("Bard", "Bard (PaLM 2)"),
    "results/chatgpt/output_chatgpt.json": ("ChatGPT (text only)", "GPT"),
    "results/claude/output_claude.json": ("Claude-2 (text only)", "Claude"),
    "results/gpt4/output_gpt4.json": ("GPT-4 (text only)", "GPT"),
    "results/idefics/output_idefics_9b_instruct.json": ("IDEFICS-9B-Instruct", "IDEFICS"),
    "results/instruct_blip2/output_instruct_blip2_vicuna_13b.json": ("InstructBLIP-Vicuna-13B", "InstructBLIP"),
    "results/llama_adapter_v2/output_llama_adapter_v2.json": ("LLaMA-Adapter-V2", "Llama"),
    "results/llava/output_llava_llama_2_13b.json": ("LLaVA-LLaMA-2-13B", "LLaVA"),
    "results/llavar/output_llavar.json": ("LLaVAR", "LLaVA"),
    "results/minigpt4/output_minigpt4_llama2.json": ("miniGPT-4-LLaMA-2", "MiniGPT-4"),
    "results/mplugowl/output_mplugowl_7b_ft.json": ("mPLUG-Owl-7B", "mPLUG-Owl"),
}


def mathvista_candidates(repo: Path) -> Iterator[Candidate]:
    """MathVista testmini answers: multiple choice (letters A-E, option texts kept) and integer answers.

    The prompt ("query") asked for the option letter, or an integer, "at the end"; the image is not
    stored. `extraction` is the source's own GPT-4 extraction of the answer: a hint, not the label.
    """
    commit = head_commit(repo)
    for path, (model, family) in MATHVISTA_FILES.items():
        rows = json.loads(_git(repo, "show", f"HEAD:{path}"))
        for i, (pid, row) in enumerate(rows.items()):
            text, dropped = capped(str(row.get("response") or ""))
            source = {"repo": MATHVISTA_REPO, "path": path, "commit": commit, "index": i, "key": pid,
                      "license": "CC-BY-SA-4.0"}
            common = dict(response=text, model=model, family=family, reasoning_model=False, source=source,
                          hint=row.get("extraction"), extra={"dropped_chars": dropped})
            if row["question_type"] == "multi_choice":
                choices = row["choices"] if isinstance(row["choices"], list) else ast.literal_eval(row["choices"])
                yield Candidate(id=f"mathvista-mc:{model}:{pid}", shape="gpqa",
                                letters=[chr(65 + k) for k in range(len(choices))],
                                choices=[str(c) for c in choices],
                                asked_format='zero-shot, "provide the correct option letter, e.g., A, B, C, D, at the end"',
                                **common)
            elif row["answer_type"] == "integer":
                yield Candidate(id=f"mathvista-int:{model}:{pid}", shape="aime",
                                asked_format='zero-shot, "requiring an integer answer and provide the final value, e.g., 1, 2, 3, at the end"',
                                **common)


# --- Forks of TIGER-AI-Lab/MMLU-Pro (Apache-2.0, like the original) whose owners committed the answers of
# thinking models. Each file is the MMLU-Pro evaluation script's JSON list (question, options, the script's
# own extraction `pred`, the response `model_outputs`); a file is read at the last commit that holds it.


@dataclass(frozen=True)
class ForkFile:
    """One result file of an MMLU-Pro fork: where it is and which model wrote it."""

    commit: str
    path: str
    subject: str  # the MMLU-Pro category; rows of another category in the same file are skipped
    model: str
    family: str
    reasoning_model: bool


def mmlu_pro_fork_candidates(repo: Path, repo_name: str, prefix: str, files: tuple[ForkFile, ...],
                             asked_format: str) -> Iterator[Candidate]:
    for f in files:
        rows = json.loads(_git(repo, "show", f"{f.commit}:{f.path}"))
        for i, row in enumerate(rows):
            if row.get("category", f.subject) != f.subject:
                continue  # some scripts append every subject to one file; each is read from its own
            options = row["options"] if isinstance(row["options"], list) else ast.literal_eval(row["options"])
            text, dropped = capped(str(row.get("model_outputs") or ""))
            yield Candidate(
                id=f"{prefix}:{f.model}:{f.subject}:{row['question_id']}", shape="gpqa", response=text,
                model=f.model, family=f.family, reasoning_model=f.reasoning_model,
                source={"repo": repo_name, "path": f.path, "commit": f.commit, "index": i,
                        "license": "Apache-2.0 (repository); MMLU-Pro data MIT"},
                letters=[chr(65 + k) for k in range(len(options))], choices=[str(o) for o in options],
                hint=row.get("pred"), asked_format=asked_format,
                extra={"dropped_chars": dropped, "subset": f.subject})


# okuvshynov/MMLU-Pro: Qwen3-30B-A3B (a Q6_K_XL GGUF under llama.cpp), 5-shot, thinking on; some runs put a
# positive logit bias on `</think>` that ends the thinking early; later commits removed most result files.
QWEN3_MMLU_REPO = "okuvshynov/MMLU-Pro"
_QWEN3_DIR = "eval_results/Qwen3-30B-A3B-UD-Q6_K_XL_think_bias_"


def _qwen3(commit: str, path: str, subject: str, bias: int | None) -> ForkFile:
    if bias is None:
        return ForkFile(commit, path, subject, "Qwen3-30B-A3B (thinking off)", "Qwen3", False)
    return ForkFile(commit, path, subject, f"Qwen3-30B-A3B (thinking, </think> bias +{bias})", "Qwen3", True)


QWEN3_MMLU_FILES = (
    _qwen3("e65e1d0642944cb932469ebb3497811f97386f36", f"{_QWEN3_DIR}0/business_result.json", "business", 0),
    _qwen3("0e07b7a65f56cc67ec1d732b52f1e544ccbfa4b8", f"{_QWEN3_DIR}0/law_result.json", "law", 0),
    _qwen3("0e07b7a65f56cc67ec1d732b52f1e544ccbfa4b8", f"{_QWEN3_DIR}0/math_result.json", "math", 0),
    _qwen3("011a98d0086f4da252d4bbbed382c8ecfa3a4d5b", f"{_QWEN3_DIR}0/psychology_result.json", "psychology", 0),
    _qwen3("011a98d0086f4da252d4bbbed382c8ecfa3a4d5b", f"{_QWEN3_DIR}17/psychology_result.json", "psychology", 17),
    _qwen3("011a98d0086f4da252d4bbbed382c8ecfa3a4d5b", f"{_QWEN3_DIR}18/psychology_result.json", "psychology", 18),
    _qwen3("011a98d0086f4da252d4bbbed382c8ecfa3a4d5b", f"{_QWEN3_DIR}19/psychology_result.json", "psychology", 19),
    _qwen3("e34546eb542039c1b89fd6746eb4659ca16112e6", f"{_QWEN3_DIR}21/psychology_result.json", "psychology", 21),
    _qwen3("cdd1b372b0dea3903980ad9e98bcdc70ef16f2fa", "think_data/cs_think.json", "computer science", 0),
    _qwen3("cdd1b372b0dea3903980ad9e98bcdc70ef16f2fa", "think_data/cs_think_bias_19.json", "computer science", 19),
    _qwen3("cdd1b372b0dea3903980ad9e98bcdc70ef16f2fa", "think_data/cs_nothink.json", "computer science", None),
)


def qwen3_mmlu_pro_candidates(repo: Path) -> Iterator[Candidate]:
    """Qwen3-30B-A3B's MMLU-Pro answers with the thinking in the response (`<think>...</think>`)."""
    return mmlu_pro_fork_candidates(
        repo, QWEN3_MMLU_REPO, "qwen3-mmlupro", QWEN3_MMLU_FILES,
        '5-shot chain of thought ending "The answer is (X)" (MMLU-Pro prompt), thinking model')


# shihanqu/MMLU-Pro: MiniMax-M2.5 (NVFP4) on all of MMLU-Pro through a server that kept its thinking out.
MINIMAX_MMLU_REPO = "shihanqu/MMLU-Pro"
MINIMAX_MMLU_COMMIT = "d4af6a7af01e3a3189a90d047e9fb6f60bd3cfc1"
MINIMAX_MMLU_SUBJECTS = ("biology", "business", "chemistry", "computer science", "economics", "engineering",
                         "health", "history", "law", "math", "other", "philosophy", "physics", "psychology")


def minimax_mmlu_pro_candidates(repo: Path) -> Iterator[Candidate]:
    files = tuple(ForkFile(MINIMAX_MMLU_COMMIT, f"eval_results/minimax-m2.5-nvfp4-32768/{s}_result.json", s,
                           "MiniMax-M2.5 (NVFP4)", "MiniMax", True) for s in MINIMAX_MMLU_SUBJECTS)
    return mmlu_pro_fork_candidates(
        repo, MINIMAX_MMLU_REPO, "minimax-mmlupro", files,
        '5-shot chain of thought ending "The answer is (X)" (MMLU-Pro prompt); thinking hidden by the server')


# yash-vardhansingh/MMLU-PRO: OpenAI's gpt-oss-120b ("eval_results_fast", the script's default model) and
# gpt-oss-20b under vLLM, which returns the final answer without the reasoning; 512 new tokens at most.
GPT_OSS_MMLU_REPO = "yash-vardhansingh/MMLU-PRO"
GPT_OSS_MMLU_COMMIT = "6116a83b039e132b8d1edb840168452f32321fe6"
# The script appends every subject it runs to the file it was started with, so a file can hold several.
GPT_OSS_MMLU_FILES = tuple(
    ForkFile(GPT_OSS_MMLU_COMMIT, f"{folder}/{file}_result.json", subject, model, "gpt-oss", True)
    for folder, model, pairs in (
        ("eval_results_fast", "gpt-oss-120b", (("biology", "biology"), ("business", "business"),
                                               ("computer science", "computer science"), ("law", "law"),
                                               ("math", "math"), ("psychology", "psychology"))),
        ("eval_results_fast_20b", "gpt-oss-20b", (("biology", "biology"), ("business", "business"),
                                                  ("law", "law"), ("psychology", "psychology"))))
    for file, subject in pairs)


def gpt_oss_mmlu_pro_candidates(repo: Path) -> Iterator[Candidate]:
    return mmlu_pro_fork_candidates(
        repo, GPT_OSS_MMLU_REPO, "gptoss-mmlupro", GPT_OSS_MMLU_FILES,
        'few-shot chain of thought ending "The answer is (X)" (MMLU-Pro prompt); reasoning hidden by the server')


# HAOTIAN89/MMLU-Pro: DeepSeek-R1-Distill-Qwen-1.5B/7B and AdaptThink-1.5B/7B (R1 distills trained to skip
# thinking on easy questions) zero-shot under vLLM; the prompt opens `<think>` itself, so a response holds
# the thinking and `</think>`; the "nothinking" runs were given an already closed thinking block.
R1_MMLU_REPO = "HAOTIAN89/MMLU-Pro"
R1_MMLU_COMMIT = "b735c4e06fa2ba97926f88c18dafa5cf78af6429"
R1_MMLU_RUNS = (
    ("AdaptThink-1.5B-delta0.05", "AdaptThink-1.5B", True, ("computer science", "history", "philosophy")),
    ("AdaptThink-7B-delta0.05", "AdaptThink-7B", True, ("computer science", "history", "philosophy")),
    ("DeepSeek-R1-Distill-Qwen-1.5B", "DeepSeek-R1-Distill-Qwen-1.5B", True, ("history", "philosophy")),
    ("DeepSeek-R1-Distill-Qwen-7B", "DeepSeek-R1-Distill-Qwen-7B", True, ("history", "philosophy")),
    ("DeepSeek-R1-Distill-Qwen-1.5B-nothinking", "DeepSeek-R1-Distill-Qwen-1.5B (thinking skipped)", False,
     ("business", "health")),
    ("DeepSeek-R1-Distill-Qwen-7B-nothinking", "DeepSeek-R1-Distill-Qwen-7B (thinking skipped)", False,
     ("engineering", "law", "math")),
)
R1_MMLU_FILES = tuple(
    ForkFile(R1_MMLU_COMMIT, f"eval_results/{folder}/CoT/all/{subject}.json", subject, model, "DeepSeek-R1",
             reasoning)
    for folder, model, reasoning, subjects in R1_MMLU_RUNS for subject in subjects)


def r1_distill_mmlu_pro_candidates(repo: Path) -> Iterator[Candidate]:
    return mmlu_pro_fork_candidates(
        repo, R1_MMLU_REPO, "r1-mmlupro", R1_MMLU_FILES,
        'zero-shot, "finish your answer with \\"the answer is (X)\\""; thinking model, <think> opened by the prompt')


# --- MMMU-Benchmark/MMMU: mmmu-pro/output/gpt-4o_*.jsonl (Apache-2.0) ---
# GPT-4o on MMMU-Pro (up to 10 options, A-J) as the benchmark's authors ran it. "standard": the question and
# options as text with the figure; "vision": a screenshot holding question and options, and the prompt asks
# the model to write the question out first, so the response restates every option before answering.
MMMU_PRO_REPO = "MMMU-Benchmark/MMMU"
MMMU_PRO_RUNS = (
    ("mmmu-pro/output/gpt-4o_standard(10 options)_cot.jsonl", "mmmupro-cot", "standard",
     "question and options as text; \"The last line of your response should be of the following format: "
     "'Answer: $LETTER' ... Think step by step before answering.\""),
    ("mmmu-pro/output/gpt-4o_vision_cot.jsonl", "mmmupro-cot", "vision",
     "question and options only in an image; \"Write out the multiple-choice question in the image and then "
     "solve it. The last line of your response should be ... 'Answer: $LETTER'\""),
    ("mmmu-pro/output/gpt-4o_standard(10 options)_direct.jsonl", "mmmupro-direct", "standard",
     '"Answer with the option letter from the given choices directly."'),
    ("mmmu-pro/output/gpt-4o_vision_direct.jsonl", "mmmupro-direct", "vision",
     "question and options only in an image; \"Answer with the option letter from the given choices directly. "
     "The last line of your response should be ... 'Answer: $LETTER'\""),
)


def mmmu_pro_candidates(repo: Path) -> Iterator[Candidate]:
    """GPT-4o's MMMU-Pro answers; `pred_indexs` (the source's own extraction) is the hint. The figure and the
    question text are not stored; the option texts are (MMMU-Pro data, Apache-2.0)."""
    commit = head_commit(repo)
    for path, prefix, variant, asked in MMMU_PRO_RUNS:
        for i, line in enumerate(_git(repo, "show", f"HEAD:{path}").decode("utf-8").splitlines()):
            row = json.loads(line)
            options = row["options"] if isinstance(row["options"], list) else ast.literal_eval(row["options"])
            text, dropped = capped(str(row.get("response") or ""))
            yield Candidate(
                id=f"{prefix}:GPT-4o:{variant}:{row['id']}", shape="gpqa", response=text, model="GPT-4o",
                family="GPT", reasoning_model=False,
                source={"repo": MMMU_PRO_REPO, "path": path, "commit": commit, "index": i,
                        "license": "Apache-2.0"},
                letters=[chr(65 + k) for k in range(len(options))], choices=[str(o) for o in options],
                hint=row.get("pred_indexs"), asked_format=asked,
                extra={"dropped_chars": dropped, "subset": variant})


# --- suzgunmirac/BIG-Bench-Hard: code-davinci-002-outputs/code-davinci-002-cot/*.json (MIT) ---
# Codex (code-davinci-002) with BBH's 3-shot chain-of-thought prompts ("Let's think step by step.", each
# example ending "So the answer is (X)."); generation stopped at the next "Q:". Multiple-choice tasks keep their
# option texts (read from the question's "Options:" list); two tasks have integer answers.
BBH_REPO = "suzgunmirac/BIG-Bench-Hard"
BBH_DIR = "code-davinci-002-outputs/code-davinci-002-cot"
BBH_CHOICE_TASKS = ("date_understanding", "disambiguation_qa", "geometric_shapes", "hyperbaton",
                    "logical_deduction_five_objects", "logical_deduction_seven_objects",
                    "logical_deduction_three_objects", "movie_recommendation", "penguins_in_a_table",
                    "reasoning_about_colored_objects", "ruin_names", "salient_translation_error_detection",
                    "snarks", "temporal_sequences", "tracking_shuffled_objects_five_objects",
                    "tracking_shuffled_objects_seven_objects", "tracking_shuffled_objects_three_objects")
BBH_INTEGER_TASKS = ("multistep_arithmetic_two", "object_counting")
_BBH_OPTION = re.compile(r"^\(([A-Z])\) (.*)$", re.MULTILINE)


def bbh_candidates(repo: Path) -> Iterator[Candidate]:
    commit = head_commit(repo)
    for task in BBH_CHOICE_TASKS + BBH_INTEGER_TASKS:
        path = f"{BBH_DIR}/{task}_few_shot_template_0-255000.json"
        for i, row in enumerate(json.loads(_git(repo, "show", f"HEAD:{path}"))["outputs"]):
            text, dropped = capped(str(row.get("prediction") or ""))
            common = dict(model="code-davinci-002", family="Codex", reasoning_model=False,
                          source={"repo": BBH_REPO, "path": path, "commit": commit, "index": i, "license": "MIT"},
                          asked_format='3-shot chain of thought, each example ending "So the answer is (X)."',
                          extra={"dropped_chars": dropped, "subset": task})
            if task in BBH_INTEGER_TASKS:
                yield Candidate(id=f"bbh-int:code-davinci-002:{task}:{i}", shape="aime", response=text, **common)
                continue
            asked = row["input"].rsplit("\nQ:", 1)[-1]  # the question asked, after the worked examples
            options = _BBH_OPTION.findall(asked.split("Options:", 1)[-1])
            yield Candidate(id=f"bbh-mc:code-davinci-002:{task}:{i}", shape="gpqa", response=text,
                            letters=[k for k, _ in options], choices=[v for _, v in options], **common)


# --- mathllm/MATH-V: outputs/**/*.jsonl (MIT) ---
# MATH-Vision test set (competition problems with a figure; 5-option multiple choice or a free answer), the
# authors' chain-of-thought runs: "Please solve the problem step by step and put your answer in one
# "\boxed{}". If it is a multiple choice question, only one letter is allowed in the "\boxed{}"." Of the free
# answers only the integer ones are used. The figure and the question text are not stored.
MATH_V_REPO = "mathllm/MATH-V"
MATH_V_RUNS = {
    "outputs/closed-source/GPT/ChatGPT3.5-CoT (Text+Image Caption).jsonl": ("ChatGPT-3.5 (image caption)", "GPT"),
    "outputs/closed-source/GPT/GPT4-CoT (Text Only).jsonl": ("GPT-4 (text only)", "GPT"),
    "outputs/closed-source/Gemini/Gemini-Pro-CoT.jsonl": ("Gemini-Pro", "Gemini"),
    "outputs/closed-source/Qwen/Qwen-VL-Max-CoT.jsonl": ("Qwen-VL-Max", "Qwen"),
    "outputs/open-source/Internlm/InternLM-XComposer2-VL-CoT.jsonl": ("InternLM-XComposer2-VL", "InternLM"),
}
MATH_V_ASKED = 'step by step, the answer in one "\\boxed{}" (one letter for a multiple-choice question)'
# Options given only by their labels ("A", "(A)", "A)", even one of them): the texts are in the figure; none kept.
_LABEL_ONLY = re.compile(r"\(?[A-Ea-e]\)?")


def math_v_candidates(repo: Path) -> Iterator[Candidate]:
    commit = head_commit(repo)
    problems = {}
    for line in _git(repo, "show", "HEAD:data/test.jsonl").decode("utf-8").splitlines():
        row = json.loads(line)
        problems[str(row["id"])] = row
    for path, (model, family) in MATH_V_RUNS.items():
        for i, line in enumerate(_git(repo, "show", f"HEAD:{path}").decode("utf-8").splitlines()):
            row = json.loads(line)
            problem = problems[str(row["id"])]
            options = problem["options"] if isinstance(problem["options"], list) else ast.literal_eval(problem["options"])
            text, dropped = capped(str(row.get("response") or ""))
            common = dict(response=text, model=model, family=family, reasoning_model=False,
                          source={"repo": MATH_V_REPO, "path": path, "commit": commit, "index": i,
                                  "key": str(row["id"]), "license": "MIT"},
                          hint=row.get("model_answer"), asked_format=MATH_V_ASKED, extra={"dropped_chars": dropped})
            if options:
                texts = [str(o) for o in options]
                shown = None if any(_LABEL_ONLY.fullmatch(t.strip()) for t in texts) else texts
                yield Candidate(id=f"mathv-mc:{model}:{row['id']}", shape="gpqa",
                                letters=[chr(65 + k) for k in range(len(texts))], choices=shown, **common)
            elif _INT_RE.fullmatch(str(problem["answer"]).strip()):
                yield Candidate(id=f"mathv-int:{model}:{row['id']}", shape="aime", **common)


# Jack-Lingjie/MMLU-Pro: Meta-Llama-3.1-8B-Instruct under vLLM, the 5-shot chain-of-thought prompt sent as one
# user turn through the chat template (greedy, 2,048 new tokens at most); five subjects, at the commit that
# holds them.
LLAMA31_MMLU_REPO = "Jack-Lingjie/MMLU-Pro"
LLAMA31_MMLU_COMMIT = "4835ab38829eca7a202ae810c0606a2cd9f14d58"
LLAMA31_MMLU_FILES = tuple(
    ForkFile(LLAMA31_MMLU_COMMIT, f"eval_results/Meta-Llama-3.1-8B-Instruct/CoT/all/{subject}.json", subject,
             "Llama-3.1-8B-Instruct", "Llama", False)
    for subject in ("biology", "economics", "law", "other", "psychology"))


def llama31_mmlu_pro_candidates(repo: Path) -> Iterator[Candidate]:
    return mmlu_pro_fork_candidates(
        repo, LLAMA31_MMLU_REPO, "llama31-mmlupro", LLAMA31_MMLU_FILES,
        '5-shot chain of thought ending "The answer is (X)" (MMLU-Pro prompt) in one chat turn')


# --- kuk/simple-evals-ru: data/results/{mmlu,mgsm}/<run>.jsonl (MIT) ---
# Chat models (Qwen2.5, DeepSeek-V3, Llama-3.x and Russian models: GigaChat, YandexGPT, T-lite/T-pro, Saiga,
# Vikhr, RuAdapt, Cotype) on the English benchmarks with simple-evals' zero-shot prompts: MMLU-Pro (200 questions
# per run) ending "Answer: $LETTER", MGSM's English part ending "Answer:" and the integer. One file per run; a
# model run twice (another provider or version) has two files, each its own stratum. Option texts come from the
# repository's own copy of the questions (data/benches/mmlu.jsonl, MMLU-Pro, MIT).
SIMPLE_EVALS_RU_REPO = "kuk/simple-evals-ru"
SIMPLE_EVALS_RU_FAMILIES = (("llama", "Llama"), ("qwen", "Qwen"), ("deepseek", "DeepSeek"),
                            ("gemini", "Gemini"), ("gigachat", "GigaChat"), ("yandexgpt", "YandexGPT"),
                            ("t_lite", "T-Tech (Qwen2.5-based)"), ("t_pro", "T-Tech (Qwen2.5-based)"),
                            ("saiga", "Saiga"), ("vikhr", "Vikhr"), ("ruadapt", "RuAdapt (Qwen2.5-based)"),
                            ("cotype", "Cotype"))
SIMPLE_EVALS_RU_ASKED = {
    "mmlu": "zero-shot; \"The last line of your response should be of the following format: 'Answer: $LETTER' "
            "... Think step by step before answering.\" (simple-evals)",
    "mgsm": 'zero-shot; "Give the reasoning steps before giving the final answer on the last line by itself in '
            'the format of \\"Answer:\\". Do not add anything other than the integer answer" (simple-evals MGSM)',
}


def _simple_evals_ru_family(run: str) -> str:
    return next((fam for key, fam in SIMPLE_EVALS_RU_FAMILIES if key in run), "other")


def simple_evals_ru_candidates(repo: Path) -> Iterator[Candidate]:
    commit = head_commit(repo)
    options = {}
    for line in _git(repo, "show", "HEAD:data/benches/mmlu.jsonl").decode("utf-8").splitlines():
        row = json.loads(line)
        options[row["id"]] = row["options"]
    for bench, prefix in (("mmlu", "sevru-mmlupro"), ("mgsm", "sevru-mgsm")):
        for path in sorted(_blob_paths(repo, f"data/results/{bench}/")):
            run = Path(path).stem  # "15_qwen_2_5_72b": the file's number tells two runs of a model apart
            for i, line in enumerate(_git(repo, "show", f"HEAD:{path}").decode("utf-8").splitlines()):
                row = json.loads(line)
                text, dropped = capped(str(row.get("answer") or ""))
                common = dict(response=text, model=run, family=_simple_evals_ru_family(run), reasoning_model=False,
                              source={"repo": SIMPLE_EVALS_RU_REPO, "path": path, "commit": commit, "index": i,
                                      "license": "MIT" + ("; MMLU-Pro data MIT" if bench == "mmlu" else "")},
                              hint=row.get("pred"), asked_format=SIMPLE_EVALS_RU_ASKED[bench],
                              extra={"dropped_chars": dropped})
                if bench == "mgsm":
                    yield Candidate(id=f"{prefix}:{run}:{row['id']}", shape="aime", **common)
                    continue
                opts = options[row["id"]]
                yield Candidate(id=f"{prefix}:{run}:{row['id']}", shape="gpqa", letters=sorted(opts),
                                choices=[str(opts[k]) for k in sorted(opts)], **common)


# --- MMMU-Benchmark/MMMU: mmmu/example_outputs/<model>/<subject>/output.json (Apache-2.0) ---
# The MMMU authors' example runs on the validation set (30 subjects, 900 questions): LLaVA-1.5-13B (its config asks
# for "the option's letter ... directly", and it mostly gives a bare letter) and Qwen-VL-7B, which answers in free
# form (a sentence naming an option's words, "The answer is (B).", an option's value). Multiple-choice questions
# keep their option texts (`index2ans`; some are only "<image 2>"); short-answer questions are used where the
# reference is an integer. The figure and the question are not stored. The hint is the run's total_val_output.json,
# the source's own parse (which picks a random letter when it finds none).
MMMU_VAL_REPO = "MMMU-Benchmark/MMMU"
MMMU_VAL_MODELS = {"llava1.5_13b": ("LLaVA-1.5-13B", "LLaVA"), "qwen_vl": ("Qwen-VL-7B", "Qwen")}
MMMU_VAL_ASKED = {
    "multiple-choice": "question, options and figure; LLaVA's config: \"Answer with the option's letter from the "
                       "given choices directly.\" (Qwen-VL's prompt is not committed)",
    "short-answer": "question and figure; LLaVA's config: \"Answer the question using a single word or phrase.\" "
                    "(Qwen-VL's prompt is not committed)",
}


def mmmu_val_candidates(repo: Path) -> Iterator[Candidate]:
    commit = head_commit(repo)
    for folder, (model, family) in MMMU_VAL_MODELS.items():
        base = f"mmmu/example_outputs/{folder}"
        parsed = json.loads(_git(repo, "show", f"HEAD:{base}/total_val_output.json"))
        for path in sorted(p for p in _blob_paths(repo, base + "/") if p.endswith("/output.json")):
            subject = path.split("/")[-2]
            for i, row in enumerate(json.loads(_git(repo, "show", f"HEAD:{path}"))):
                text, dropped = capped(str(row.get("response") or ""))
                common = dict(response=text, model=model, family=family, reasoning_model=False,
                              source={"repo": MMMU_VAL_REPO, "path": path, "commit": commit, "index": i,
                                      "key": row["id"], "license": "Apache-2.0"},
                              hint=parsed.get(row["id"]), asked_format=MMMU_VAL_ASKED[row["question_type"]])
                if row["question_type"] == "multiple-choice":
                    letters = list(row["all_choices"])
                    yield Candidate(id=f"mmmu-mc:{model}:{row['id']}", shape="gpqa", letters=letters,
                                    choices=[str(row["index2ans"][k]) for k in letters], **common,
                                    extra={"dropped_chars": dropped, "subset": subject})
                elif _INT_RE.fullmatch(str(row["answer"]).strip("[]' ")):
                    yield Candidate(id=f"mmmu-int:{model}:{row['id']}", shape="aime",
                                    **common, extra={"dropped_chars": dropped})


# --- diegonoti/MMLU-Pro (a fork of TIGER-AI-Lab/MMLU-Pro, Apache-2.0): the owner's runs of Claude-3, GPT-3.5/4o and
# Llama-3 (Bedrock, raw completion) with the MMLU-Pro prompt and system message ("derive your final answer as `The
# answer is ...`") on ten-option history questions: MMLU-Pro's high-school US history (MIT) and the owner's own
# Spanish-language Peruvian history set. Each file is the script's JSON list with `response` and its `pred`; one
# stratum per file. Two files of one or four rows (trial runs) are not used.
HISTORY_MMLU_REPO = "diegonoti/MMLU-Pro"
HISTORY_MMLU_COMMIT = "f37c8a1995aed0f0a1c34ebc3a1dd94f33319f2c"
HISTORY_MMLU_FILES = (
    ("eval_results/claude_diego/history_result.json", "Claude-3 (first Peru run, model not recorded)", "Claude"),
    ("eval_results/claude_diego/history_result_haiku.json", "claude-3-haiku", "Claude"),
    ("eval_results/claude_diego/history_result_sonnet.json", "claude-3-sonnet", "Claude"),
    ("eval_results/claude_diego/history_result_sonnet_hp.json", "claude-3-sonnet", "Claude"),
    ("eval_results/gpt4o_diego/history_result.json", "GPT (first Peru run, model not recorded)", "GPT"),
    ("eval_results/gpt4o_diego/history_result_3.5.json", "gpt-3.5-turbo", "GPT"),
    ("eval_results/gpt4o_diego/history_result_gpt4o.json", "gpt-4o-2024-05-13", "GPT"),
    ("eval_results/gpt4o_diego/history_result_gpt4o_hp.json", "gpt-4o-2024-05-13", "GPT"),
    ("eval_results/llama3/history_result.json", "Llama-3 (first Peru run, model not recorded)", "Llama"),
    ("eval_results/llama3/history_result_llama3-70b.json", "llama3-70b-instruct (Bedrock)", "Llama"),
    ("eval_results/llama3/history_result_llama3_8b_hp.json", "llama3-8b-instruct (Bedrock)", "Llama"),
)
HISTORY_MMLU_ASKED = ('MMLU-Pro few-shot prompt with the system message "derive your final answer as `The answer is '
                      '...`"; the script reads "answer is (X)"')


def history_mmlu_pro_candidates(repo: Path) -> Iterator[Candidate]:
    commit = HISTORY_MMLU_COMMIT
    for path, model, family in HISTORY_MMLU_FILES:
        subset = path.split("/", 1)[1].removesuffix(".json")  # one stratum per file
        for i, row in enumerate(json.loads(_git(repo, "show", f"{commit}:{path}"))):
            options, choices = _history_options(row["options"])
            text, dropped = capped(str(row.get("response") or ""))
            yield Candidate(
                id=f"hist-mmlupro:{subset}:{i}", shape="gpqa", response=text, model=model, family=family,
                reasoning_model=False,
                source={"repo": HISTORY_MMLU_REPO, "path": path, "commit": commit, "index": i,
                        "license": "Apache-2.0 (repository); MMLU-Pro data MIT", "set": row.get("src")},
                letters=[chr(65 + k) for k in range(len(options))], choices=choices,
                hint=row.get("pred"), asked_format=HISTORY_MMLU_ASKED,
                extra={"dropped_chars": dropped, "subset": subset, "option_texts": options})


def _history_options(raw: Any) -> tuple[list[str], list[str] | None]:
    """The options and, where intact, their texts. The Peru files store the list as a Python repr whose first
    characters were cut ("ymara, ...', 'Paracas, ...']"): the options are counted, their texts not kept."""
    if isinstance(raw, list) and len(raw) == 1:
        raw = str(raw[0])  # the damaged repr, wrapped in a list
    if isinstance(raw, list):
        return [str(o) for o in raw], [str(o) for o in raw]
    try:
        parsed = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        parsed = None
    if isinstance(parsed, list) and len(parsed) == 1:
        raw = str(parsed[0])  # the damaged repr, inside a one-item list
    elif isinstance(parsed, list):
        return [str(o) for o in parsed], [str(o) for o in parsed]
    pieces = raw.rstrip().removesuffix("]").split("', '")
    return pieces, None


# --- TIGER-AI-Lab/TheoremQA: outputs/<run>.jsonl (MIT; the questions are TheoremQA's own, MIT) ---
# The TheoremQA authors' 5-shot runs of four open models on the 800 STEM questions: each worked example ends "The
# answer is <value>". The InternLM2 runs use the plain "Problem:/Solution" prompt; the Mistral runs wrap each example
# in "[INST] ... [/INST]" though both Mistral models are base models. The runs had no stop words, so the models go on
# writing made-up problems (or code, or loops) after their answer. Only questions whose reference is an integer are
# used (216 of 800; the others want a decimal, a list, a truth value or an option), and the 17 multiple-choice questions
# whose options are written "(a) ... (b) ..." in the question (the letters become A, B, ...; the option texts are kept,
# the question is not). `pred` is the script's own
# extraction, which keeps only the text before the first blank line whenever "The answer is" occurs twice, so it is
# often no number at all ("False", "", a line of code): a hint, never a label.
THEOREMQA_REPO = "TIGER-AI-Lab/TheoremQA"
THEOREMQA_COMMIT = "acfc9686aa9b49f3c8f189364a9a9ee9c53da039"
THEOREMQA_RUNS = {
    "outputs/internlm2_20b_5shots_short.jsonl": ("InternLM2-20B (base)", "InternLM2", "short"),
    "outputs/internlm2_math_20b_5shots_short.jsonl": ("InternLM2-Math-20B", "InternLM2", "short"),
    "outputs/Mistral_7B_v0.1_5shots_mistral.jsonl": ("Mistral-7B-v0.1 (base)", "Mistral", "mistral"),
    "outputs/Mistral_7B_Base_V0.2_5shots_mistral.jsonl": ("Mistral-7B-v0.2 (base)", "Mistral", "mistral"),
}
THEOREMQA_ASKED = {
    "short": '5-shot "Problem:/Solution:" prompt, each worked example ending "The answer is <value>"',
    "mistral": '5-shot prompt, each example as "[INST] <problem> [/INST]<solution>" ending "The answer is <value>"',
}


def theoremqa_candidates(repo: Path) -> Iterator[Candidate]:
    commit = THEOREMQA_COMMIT
    for path, (model, family, form) in THEOREMQA_RUNS.items():
        lines = _git(repo, "show", f"{commit}:{path}").decode("utf-8").splitlines()
        for i, line in enumerate(lines):
            row = json.loads(line)
            text, dropped = capped(str(row.get("solution") or ""))
            common = dict(response=text, model=model, family=family, reasoning_model=False,
                          source={"repo": THEOREMQA_REPO, "path": path, "commit": commit, "index": i, "license": "MIT"},
                          hint=row.get("pred"), asked_format=THEOREMQA_ASKED[form], extra={"dropped_chars": dropped})
            reference = row["correct"][1] if isinstance(row["correct"], list) else None
            options = _theoremqa_options(row["question"])
            if isinstance(reference, int) and not isinstance(reference, bool):
                yield Candidate(id=f"theoremqa-int:{model}:{i}", shape="aime", **common)
            elif reference is None and options and _OPTION_REF.fullmatch(str(row["correct"][0])):
                yield Candidate(id=f"theoremqa-mc:{model}:{i}", shape="gpqa",
                                letters=[chr(65 + k) for k in range(len(options))], choices=options, **common)


_OPTION_REF = re.compile(r"\([a-f]\)")
_OPTION_MARK = re.compile(r"\(([a-f])\):?\s*")


def _theoremqa_options(question: str) -> list[str] | None:
    """The texts of options written "(a) ...; (b) ..." in a TheoremQA question, or None when it has no such list (or
    one whose letters are not a, b, c, ... in order)."""
    marks = list(_OPTION_MARK.finditer(question))
    if len(marks) < 2 or [m.group(1) for m in marks] != [chr(97 + k) for k in range(len(marks))]:
        return None
    ends = [m.start() for m in marks[1:]] + [len(question)]
    texts = [question[m.end():end] for m, end in zip(marks, ends)]
    texts[-1] = re.sub(r"[,.;]?\s*\b(?:which|what)\b.*$", "", texts[-1], flags=re.DOTALL | re.IGNORECASE)  # the question
    return [t.strip().rstrip(";,.").strip() for t in texts]


# --- Forks and copies of lupantech/MathVista (each keeps the original's CC BY-SA 4.0 license file) whose owners
# committed the testmini answers of models the original does not hold (the ninth batch). Each file is MathVista's
# output JSON (problem id -> question, choices, response, the owner's `extraction`); read at a pinned commit.
@dataclass(frozen=True)
class MathVistaRun:
    repo: str
    commit: str
    path: str
    model: str
    family: str
    reasoning: bool
    asked: str  # how the run's prompt asked for the answer, beyond MathVista's own query


MATHVISTA_QUERY = ('MathVista query: "provide the correct option letter, e.g., A, B, C, D, at the end" or "requiring an '
                   'integer answer and provide the final value, e.g., 1, 2, 3, at the end"')
_SOPHIA_DIR = "results/bunny127_SophiaVL-R1-7B_content_sophiavl_r1_lora_checkpoint-75"
_INTERNVL3_DIR = "results/OpenGVLab_InternVL3-8B-hf_content_internvl3_lora_checkpoint-75"
MATHVISTA_LOCAL_RUNS = (
    MathVistaRun("Da-Emp66/MathVistaForkForLocalModels", "88c92600df131ecb458089f7a7f9db793baa33c7",
                 f"{_SOPHIA_DIR}/output_bunny127_SophiaVL-R1-7B_content_sophiavl_r1_lora_checkpoint-75_test.json",
                 "SophiaVL-R1-7B + LoRA checkpoint-75", "SophiaVL-R1 (Qwen2.5-VL)", True,
                 f"{MATHVISTA_QUERY}, inside a prompt asking for the reasoning in <think></think> and \"your text answer "
                 "within the <answer> </answer> tags\""),
    MathVistaRun("Da-Emp66/MathVistaForkForLocalModels", "88c92600df131ecb458089f7a7f9db793baa33c7",
                 f"{_INTERNVL3_DIR}/output_OpenGVLab_InternVL3-8B-hf_content_internvl3_lora_checkpoint-75_test.json",
                 "InternVL3-8B + LoRA checkpoint-75", "InternVL", False, f"zero-shot, {MATHVISTA_QUERY}"),
)
MATHVISTA_INTERNVL2_RUN = MathVistaRun(
    "LCL-1729/MathVistaInternEval", "0dc6f974b7f400de5fdc4bbd35d37c2aefceefa5",
    "results/internVL2/output_internVL2-1b-mini.json", "InternVL2-1B", "InternVL", False,
    f"zero-shot, {MATHVISTA_QUERY} (a third of testmini)")
MATHVISTA_GPT4O_RUN = MathVistaRun(
    "chengshenge/MathVista", "1631cd06d1329ddde7c7ae4e2af4ec5f8ffbf1a1", "results/gpt4o/output_gpt4o_testmini.json",
    "gpt-4o (text only)", "GPT", False,
    f"zero-shot, {MATHVISTA_QUERY}; the figure did not reach the model (MathVista's GPT class sends text only)")


def mathvista_fork_candidates(repo: Path, runs: tuple[MathVistaRun, ...]) -> Iterator[Candidate]:
    """The ninth batch: MathVista testmini answers of new models, as mathvista_candidates reads the original's."""
    for run in runs:
        rows = json.loads(_git(repo, "show", f"{run.commit}:{run.path}"))
        for i, (pid, row) in enumerate(rows.items()):
            text, dropped = capped(str(row.get("response") or ""))
            common = dict(response=text, model=run.model, family=run.family, reasoning_model=run.reasoning,
                          source={"repo": run.repo, "path": run.path, "commit": run.commit, "index": i, "key": pid,
                                  "license": "CC-BY-SA-4.0"},
                          hint=row.get("extraction"), asked_format=run.asked, extra={"dropped_chars": dropped})
            if row["question_type"] == "multi_choice":
                choices = row["choices"] if isinstance(row["choices"], list) else ast.literal_eval(row["choices"])
                yield Candidate(id=f"mvfork-mc:{run.model}:{pid}", shape="gpqa",
                                letters=[chr(65 + k) for k in range(len(choices))], choices=[str(c) for c in choices],
                                **common)
            elif row["answer_type"] == "integer":
                yield Candidate(id=f"mvfork-int:{run.model}:{pid}", shape="aime", **common)


def mathvista_local_candidates(repo: Path) -> Iterator[Candidate]:
    return mathvista_fork_candidates(repo, MATHVISTA_LOCAL_RUNS)


def mathvista_internvl2_candidates(repo: Path) -> Iterator[Candidate]:
    return mathvista_fork_candidates(repo, (MATHVISTA_INTERNVL2_RUN,))


def mathvista_gpt4o_candidates(repo: Path) -> Iterator[Candidate]:
    return mathvista_fork_candidates(repo, (MATHVISTA_GPT4O_RUN,))


# --- ishaandatta/MMLU-Pro (a fork of TIGER-AI-Lab/MMLU-Pro, Apache-2.0): the owner's own runs in output/ ---
# The owner's parallel evaluation script sends MMLU-Pro's 5-shot chain-of-thought prompt ("The answer is (X)") as
# one user turn to a local OpenAI-compatible server (temperature 0.6); the folder names the model: a DeepSeek-R1
# run whose responses hold the thinking (`<think>...</think>`), Llama-3.1 and Llama-3.3 runs, and "output_parallel",
# whose model the files do not name. The copies of the original's eval_results/ zips are not used (the corpus has
# them from TIGER-AI-Lab/MMLU-Pro). Files missing from the snapshot (too large) are not listed.
DATTA_MMLU_REPO = "ishaandatta/MMLU-Pro"
DATTA_MMLU_COMMIT = "edc305ec895fc8a378f3f3099f8308cbad7bb0bb"
_ALL_SUBJECTS = ("biology", "business", "chemistry", "computer science", "economics", "engineering", "health",
                 "history", "law", "math", "other", "philosophy", "physics", "psychology")
DATTA_MMLU_RUNS = (
    ("output_deepseekR1", "DeepSeek-R1 (local run)", "DeepSeek-R1", True,
     ("biology", "computer science", "health", "history", "other", "philosophy", "psychology")),
    ("output_llama31", "Llama-3.1 (local run)", "Llama", False, _ALL_SUBJECTS),
    ("output_llama33", "Llama-3.3 (local run)", "Llama", False, tuple(s for s in _ALL_SUBJECTS if s != "law")),
    ("output_parallel", "unnamed model (output_parallel)", "unnamed", False, _ALL_SUBJECTS),
)
DATTA_MMLU_FILES = tuple(
    ForkFile(DATTA_MMLU_COMMIT, f"output/{folder}/{subject}_result.json", subject, model, family, reasoning)
    for folder, model, family, reasoning, subjects in DATTA_MMLU_RUNS for subject in subjects)


def datta_mmlu_pro_candidates(repo: Path) -> Iterator[Candidate]:
    for c in mmlu_pro_fork_candidates(
            repo, DATTA_MMLU_REPO, "datta-mmlupro", DATTA_MMLU_FILES,
            '5-shot chain of thought ending "The answer is (X)" (MMLU-Pro prompt) in one chat turn'):
        c.extra["option_texts"] = c.choices  # for the after-sampling check of a letter given with another option's words
        yield c


# --- tanaybaswa/mmlu-pro (a copy of TIGER-AI-Lab/MMLU-Pro with its Apache-2.0 license): the owner's own runs ---
# evaluate_from_api.py there sends MMLU-Pro's 5-shot chain-of-thought prompt ("The answer is (X)") as one user turn,
# temperature 0: AI21's Jamba-1.5-large and Jamba-1.5-mini (two runs of mini, in two folders) and five short GPT-4o
# runs (a few questions per subject each), every file named <model>_<subject>_result_<run time>.json. The copies of
# the original's eval_results/*.zip are not used (the corpus has them from TIGER-AI-Lab/MMLU-Pro).
TANAY_MMLU_REPO = "tanaybaswa/mmlu-pro"
TANAY_MMLU_COMMIT = "aa1b2223b022d7120b69b9a4b3a019efc53ed1d7"
TANAY_MMLU_RUNS = (  # (folder, file-name model, run time, model as recorded here, family)
    ("jamba_large_eval_results", "jamba-1.5-large", "20241128_105928", "Jamba-1.5-large", "Jamba"),
    ("jamba_mini_eval_results", "jamba-1.5-mini", "20241128_103555", "Jamba-1.5-mini (run 1)", "Jamba"),
    ("jamba_mini_2_eval_results", "jamba-1.5-mini", "20241128_104701", "Jamba-1.5-mini (run 2)", "Jamba"),
    *(("eval_results", "gpt-4o", t, f"gpt-4o (run {t[-6:]})", "GPT")
      for t in ("20241128_095624", "20241128_100410", "20241128_100808", "20241128_101335", "20241128_102306")),
)


def tanay_mmlu_pro_candidates(repo: Path) -> Iterator[Candidate]:
    """The thirteenth batch: every result file of each run present at the commit, subject by subject."""
    present = set(_git(repo, "ls-tree", "-r", "--name-only", TANAY_MMLU_COMMIT).decode().splitlines())
    files = tuple(
        ForkFile(TANAY_MMLU_COMMIT, f"{folder}/{name}_{subject}_result_{time}.json", subject, model, family, False)
        for folder, name, time, model, family in TANAY_MMLU_RUNS for subject in _ALL_SUBJECTS
        if f"{folder}/{name}_{subject}_result_{time}.json" in present)
    for c in mmlu_pro_fork_candidates(
            repo, TANAY_MMLU_REPO, "tanay-mmlupro", files,
            '5-shot chain of thought ending "The answer is (X)" (MMLU-Pro prompt) in one chat turn, temperature 0'):
        c.extra["option_texts"] = c.choices  # for the after-sampling check of a letter given with another option's words
        c.extra.pop("subset")  # one stratum per run: the GPT-4o runs hold one or two questions per subject
        yield c
