"""Which generated programs a harness run compiles (tests/harness/), and what their oracles found.

``make test`` runs the quick profile (ten fixed programs that between them use every option, two of them for TPU);
``SHARDCONV_FUZZ=long`` (``make fuzz``) runs ``SHARDCONV_HARNESS_PROGRAMS`` programs (300) from a fresh
base seed, printed (``SHARDCONV_HARNESS_BASE`` repeats a run); ``SHARDCONV_HARNESS_SEEDS=12,tpu:3`` runs
exactly those programs.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

from support.program_gen import Program, generate

QUICK = [  # between them, every step, output, mesh order, axis type and option of the generator
    "cpu:121", "cpu:30", "cpu:2300", "cpu:70", "cpu:1425", "cpu:73", "cpu:66", "cpu:132", "tpu:1494", "tpu:1320",
]
BATCH = 40  # programs per child process
CHILD = Path(__file__).resolve().parent / "make_programs.py"
STATS: Counter[str] = Counter()  # per oracle, the programs it found something in
FINDINGS: dict[str, list[str]] = {}  # "program/oracle" -> what it found


def _seeds() -> tuple[str, list[str]]:
    """(profile, ``platform:seed`` of each program it runs)."""
    named = os.environ.get("SHARDCONV_HARNESS_SEEDS")
    if named:
        return "named", [s if ":" in s else f"cpu:{s}" for s in named.split(",")]
    if os.environ.get("SHARDCONV_FUZZ") == "long":
        n = int(os.environ.get("SHARDCONV_HARNESS_PROGRAMS", "300"))
        base = int(os.environ.get("SHARDCONV_HARNESS_BASE", str(random.randrange(1_000_000))))
        seeds = [f"{'tpu' if i % 25 == 0 else 'cpu'}:{base + i}" for i in range(n)]  # one TPU program in 25
        return f"long, SHARDCONV_HARNESS_BASE={base}", seeds
    return "quick", QUICK


PROFILE, SEEDS = _seeds()
PROGRAMS = [generate(int(s.split(":")[1]), platform=s.split(":")[0]) for s in SEEDS]


def _compile(batch: list[Program], out: Path, *mode: str) -> None:
    """One child for the batch; when XLA crashes it, the program it was compiling is marked (rejected,
    or its verbose dump crashed: ``verbose.crashed``) and a new child takes the rest."""
    marker = "verbose.done" if mode else "result.json"
    while batch:
        listing = out / f"programs-{batch[0].platform}-{batch[0].seed}.json"
        listing.write_text(json.dumps([json.loads(p.to_json()) for p in batch]), encoding="utf-8")
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
        child = subprocess.run([sys.executable, str(CHILD), str(out), str(listing), *mode], env=env, timeout=3600,
                               capture_output=True, text=True)
        done = [(out / p.name / marker).exists() for p in batch]
        if child.returncode == 0 and all(done):
            return
        k = done.index(False)
        (out / batch[k].name).mkdir(exist_ok=True)
        why = f"the compile's process died (exit {child.returncode}): {child.stderr[-3000:]}"
        if mode:
            (out / batch[k].name / "verbose.crashed").write_text(why, encoding="utf-8")
        else:
            (out / batch[k].name / "result.json").write_text(json.dumps({"rejected": why}), encoding="utf-8")
        batch = batch[k + 1 :]


def compile_all(programs: list[Program], out: Path) -> None:
    """Each program compiled into ``out/<name>/``: one child per platform and device count, BATCH at a time."""
    groups: dict[tuple[str, bool], list[Program]] = {}
    for p in programs:
        wide = p.platform == "cpu" and (p.n_devices > 8 or max(p.device_ids, default=0) >= 8)
        groups.setdefault((p.platform, wide), []).append(p)
    for group in groups.values():
        for i in range(0, len(group), BATCH):
            _compile(group[i : i + BATCH], out)
            accepted = [p for p in group[i : i + BATCH] if "rejected" not in (out / p.name / "result.json").read_text()]
            _compile(accepted, out, "verbose")
