"""Checks unify_bench's JSON on stdin: it parses, and each run holds the
fields the scaling comparison of issue #15 reads, with sane values."""
import json
import sys

FIELDS = ("ranks", "definitions_per_rank", "global_definitions",
          "root_received_bytes", "root_seconds", "root_cpu_seconds", "root_peak_bytes",
          "root_peak_bytes_per_global_definition", "inner_rank", "inner_children",
          "inner_subtree_ranks", "inner_is_busiest", "inner_received_bytes", "inner_seconds",
          "inner_cpu_seconds", "inner_peak_bytes")

result = json.load(sys.stdin)
runs = result["runs"]
assert runs, "no run measured"
for run in runs:
    missing = [field for field in FIELDS if field not in run]
    assert not missing, f"run {run} lacks {missing}"
    assert run["global_definitions"] >= run["definitions_per_rank"] > 0, run
    assert run["root_received_bytes"] > 0 and run["root_seconds"] >= 0, run
    assert run["inner_received_bytes"] > 0 and run["inner_children"] > 0, run
    assert run["inner_rank"] == run["ranks"] // 2 and run["inner_is_busiest"], run
assert result["largest_ranks_run"] == runs[-1]["ranks"], result
print(f"unify benchmark: {len(runs)} runs, largest {runs[-1]['ranks']} ranks")
