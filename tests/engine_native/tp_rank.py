"""Run under torchrun by the tensor-parallel tests: rank 0 generates greedily and writes what it saw; the other
ranks serve steps. argv: MODEL OUT_JSON [PROMPT_IDS_JSON] [MODE: tp (default) or ep]."""
import json
import sys

from engine.base import SamplingParams
from engine.native.llm import LLM
from engine.native.rank_worker import serve_if_worker
from engine.native.ranks import launched

world = launched().world_size
model, out = sys.argv[1], sys.argv[2]
default = [[5, 9, 14, 3], [7, 7, 21, 30, 2, 11, 4, 8, 19]]
prompts = json.loads(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] else default
mode = sys.argv[4] if len(sys.argv) > 4 else "tp"
if (code := serve_if_worker(device="cpu", threads=1, timeout_s=60)) is not None:
    sys.exit(code)
llm = LLM(model=model, dtype="float32", threads=1, kv_cache_gib=0.02, dist_timeout_s=60, **{mode: world})
outputs = llm.generate(prompts, SamplingParams(max_tokens=12, temperature=0.0))
# The logits row the sampler sees for the first prompt's next token (a logits processor receives it).
rows = []
llm.engine.add_request(prompts[0], SamplingParams(max_tokens=1, temperature=0.0),
                       logits_processor=lambda out_ids, row: rows.append(row.tolist()))
while llm.engine.has_unfinished():
    llm.engine.step()
llm.engine.close()
weight_bytes = sum(p.numel() * p.element_size() for p in llm.engine.model.parameters())
experts = getattr(llm.engine.model, "routed_expert_bytes", lambda: None)()
json.dump({"tokens": [o.token_ids for o in outputs], "weight_bytes": weight_bytes, "routed_expert_bytes": experts,
           "logits": rows[0]}, open(out, "w"))
