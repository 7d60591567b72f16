"""Fake model commands for tests: small scripts that read the prompt on stdin and reply the way a
real model might — well, badly, slowly or not at all."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

KINDS = ("good", "empty", "fail", "slow", "reasoning", "truncated-json", "prose", "only-done",
         "nothing", "none", "json", "partial", "bad-line", "confidence", "secret", "maintain",
         "maintain-secret", "maintain-distinct")

_SCRIPT = r'''
import json, os, re, sys, time

kind = sys.argv[1]
prompt = sys.stdin.read()
if os.environ.get("FAKE_MODEL_LOG"):
    with open(os.environ["FAKE_MODEL_LOG"], "a") as log:
        log.write(kind + "\n")
digests = re.findall(r"^### digest (\S+)", prompt, re.M)
runtime_items = re.findall(r"^\[rt-[^\]]+\] (.*)$", prompt, re.M)
merging = "### runtime merge" in prompt


def maintained(secret=""):
    """A runtime merge (the longest item) or compaction (each item's first five words)."""
    if merging:
        return "MERGED: " + (secret or max(runtime_items, key=len))
    shortened = dict.fromkeys(" ".join(t.split()[:5]) for t in runtime_items)
    return "\n".join(f"- {t}" for t in [*shortened][:-1] + [secret or [*shortened][-1]])
entries = re.findall(r"^### entry (\S+)", prompt, re.M)


def answer():
    ranked = re.findall(r"^\[(\d+)\] ", prompt, re.M)
    if ranked and "Question:" in prompt:  # search rerank: the entries in reverse order
        return "Most helpful first: " + ", ".join(reversed(ranked))
    if digests:
        lines = []
        for d in digests:
            lines.append(f"- [{d} | workspace:made-up-key | semantic | high] queue :: The worker acks only after the handler commits.")
            lines.append(f"- [{d} | global | learnings | normal] rabbitmq :: A prefetch of 50 starved the other consumers; use 10.")
            lines.append(f"- [{d} | workspace:x | codebase | normal] src/queue/worker.py :: The job worker: handles queue messages and acks after processing.")
            lines.append(f"DONE {d}")
        return "\n".join(lines)
    if entries:
        verbs = ["KEEP {}", "UPDATE {} :: Staging RabbitMQ now listens on port 5674.", "FORGET {}"]
        return "\n".join(verbs[i % 3].format(e) for i, e in enumerate(entries))
    return "\n".join([
        "- **Delivery:** jobs are at-least-once; the worker acks after the handler commits.",
        "- **Prefetch:** keep the RabbitMQ prefetch at 10; 50 starved the other consumers.",
        "- **Staging:** RabbitMQ on staging listens on port 5673.",
        "- **Failure mode:** acking before processing loses in-flight jobs on a crash.",
        "- **Config:** the prefetch lives in config/rabbitmq.yml.",
    ])


if kind == "good":
    print(answer())
elif kind == "empty":
    pass
elif kind == "fail":
    print("partial output", flush=True)
    sys.stderr.write("error: the model server refused the request\n")
    sys.exit(2)
elif kind == "slow":
    time.sleep(30)
    print(answer())
elif kind == "reasoning":
    print("<think>\nThe user wants facts. Something like:\n- [<digest> | global | semantic | high] x :: a made-up fact\nKEEP global-sem-9999\n- **Invented:** never keep this bullet\n</think>")
    print("Here is what you sent me:")
    print(prompt)
    print("And my answer:")
    print(answer())
elif kind == "truncated-json":
    items = [{"digest": d, "scope": "global", "layer": "semantic", "importance": "normal",
              "topic": "queue", "text": f"Fact {n} from the digest."} for n, d in enumerate(digests * 2)]
    items += [{"id": e, "action": "KEEP"} for e in entries]
    text = json.dumps({"entries": items, "done": digests}, indent=1)
    print("```json\n" + text[: int(len(text) * 0.8)])
elif kind == "json":
    items = [{"digest": d, "scope": "workspace:acme", "layer": "procedural", "importance": "high",
              "topic": "deploy", "text": "Deploys go through staging first.",}
             for d in digests]
    print("Sure! " + json.dumps({"entries": items, "done": digests}).replace("}]", "},]"))
elif kind == "prose":
    print("These sessions were productive. The team fixed a queue problem and talked about rounding.")
elif kind == "only-done":
    print("\n".join(f"DONE {d}" for d in digests))
elif kind == "nothing":
    print("NO_DURABLE_CONTENT")
elif kind == "none":
    print("NONE")
elif kind == "partial":
    # Attributes only the first digest.
    d = digests[0]
    print(f"- [{d} | global | semantic | normal] queue :: The queue is RabbitMQ.\nDONE {d}")
elif kind == "confidence":
    # A confidence per fact: sure, unsure, none given (counts as sure), and a percentage.
    for d in digests:
        print(f"- [{d} | workspace:x | semantic | high | 0.9] queue :: The worker acks only after the handler commits.")
        print(f"- [{d} | global | learnings | normal | 0.4] rabbitmq :: A prefetch of 50 starved the other consumers; use 10.")
        print(f"- [{d} | workspace:x | codebase | normal] src/queue/worker.py :: The job worker: handles queue messages and acks after processing.")
        print(f"- [{d} | global | semantic | low | stable | 55%] staging :: Staging RabbitMQ listens on port 5673.")
        print(f"DONE {d}")
elif kind == "secret":
    # One clean fact, one that repeats a token the session showed.
    for d in digests:
        print(f"- [{d} | global | semantic | high | 0.9] queue :: The worker acks only after the handler commits.")
        token = "ghp_" + "k3J9x2LmQ7vR4tY8wZ1bN6cF0dH5sA2pE9gU"
        print(f"- [{d} | global | semantic | high | 0.9] ci :: The CI token is {token}")
        print(f"DONE {d}")
elif kind == "maintain":
    print(maintained())
elif kind == "maintain-secret":
    print(maintained("The deploy token is ghp_" + "k3J9x2LmQ7vR4tY8wZ1bN6cF0dH5sA2pE9gU"))
elif kind == "maintain-distinct":
    print("DISTINCT")
elif kind == "bad-line":
    d = digests[0]
    print(f"- [{d} | global | gossip | normal] office :: Someone likes tea.")
    print(f"- [not-a-digest | global | semantic | normal] x :: from nowhere")
    print(f"- [{d} | global | semantic | low] queue :: The queue is RabbitMQ.")
    print(f"DONE {d}")
'''


def fake_model(folder: Path, kind: str) -> str:
    """The shell command of a fake model of this kind (its script written into `folder`)."""
    assert kind in KINDS, kind
    script = folder / "fake_model.py"
    if not script.exists():
        script.write_text(_SCRIPT, encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {kind}"
