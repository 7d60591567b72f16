"""The runtime tier loses nothing and repeats nothing, whatever happens to it on several machines.

Random sequences of steps on clones of one bare remote, through the real CLI: hand edits of
USER.md / MEMORY.md (append a line, change one, delete one, convert the file to CRLF, paste a
line holding `§`, which must refuse the next write and change nothing), runtime writes (add,
replace, remove), syncs, and fresh clones made in the middle. Each item is changed only by the
machine that made it, so the outcome is known without any conflict: after every machine has synced
until nothing moves, each machine's memories.json and projections hold every live item exactly
once, and nothing else. GITMEM_RUNTIME_EXAMPLES sets the number of examples (10).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import Cli, git

EXAMPLES = int(os.environ.get("GITMEM_RUNTIME_EXAMPLES", "10"))
FILES = {"user": "global/runtime/USER.md", "memory": "global/runtime/MEMORY.md"}
RECORDS = "global/runtime/memories.json"
STEPS = ("append", "edit", "delete", "crlf", "paste", "add", "replace", "remove", "sync", "clone")
NAMES = ("alpha", "beta", "gamma", "delta")
MAX_MACHINES = 4


@dataclass
class Machine:
    root: Path
    name: str
    cli: Cli = field(init=False)

    def __post_init__(self) -> None:
        self.cli = Cli(self.root, CliRunner())

    def __call__(self, *args: str) -> Result:
        return self.cli(*args, env={"GITMEM_MACHINE": self.name})

    def head(self) -> str:
        return git(self.root, "rev-parse", "HEAD").strip()


@dataclass
class World:
    """The machines, and what the runtime tier must hold: live text -> (target, owner)."""

    tmp: Path
    remote: Path
    machines: list[Machine] = field(default_factory=list)
    live: dict[str, tuple[str, str]] = field(default_factory=dict)
    counter: int = 0

    def text(self, machine: Machine, words: str) -> str:
        self.counter += 1
        return f"Fact {self.counter} from {machine.name} {words}".strip()

    def clone(self) -> None:
        machine = Machine(self.tmp / NAMES[len(self.machines)], NAMES[len(self.machines)])
        result = machine("init", "--remote", str(self.remote))
        assert result.exit_code == 0, result.output
        self.machines.append(machine)

    def own(self, machine: Machine, pick: int) -> str | None:
        mine = sorted(t for t, (_target, owner) in self.live.items() if owner == machine.name)
        return mine[pick % len(mine)] if mine else None


# -- the projection files as a person edits them ---------------------------------------------
def read_lines(path: Path) -> tuple[list[str], str]:
    text = path.read_bytes().decode("utf-8") if path.exists() else ""
    return text.splitlines(), "\r\n" if "\r\n" in text else "\n"


def write_lines(path: Path, lines: list[str], newline: str) -> None:
    path.write_bytes("".join(line + newline for line in lines).encode("utf-8"))


def snapshot(machine: Machine) -> tuple[str, str, str, dict[str, bytes]]:
    files = {p: (machine.root / p).read_bytes() for p in (*FILES.values(), RECORDS)
             if (machine.root / p).exists()}
    return (machine.head(), git(machine.root, "ls-files", "-s"),
            git(machine.root, "status", "--porcelain"), files)


def step(world: World, kind: str, machine: Machine, pick: int, target: str, words: str) -> None:
    own = world.own(machine, pick)
    if kind in ("edit", "delete", "replace", "remove") and own is None:
        kind = "add"
    if own is not None and kind in ("edit", "delete", "replace", "remove"):
        target = world.live[own][0]
    path = machine.root / FILES[target]
    if kind == "append":
        new = world.text(machine, words)
        lines, newline = read_lines(path)
        write_lines(path, [*lines, new], newline)
        world.live[new] = (target, machine.name)
    elif kind == "edit" and own is not None:
        new = f"{own}, changed {world.text(machine, words)}"
        lines, newline = read_lines(path)
        write_lines(path, [new if line.strip() == own else line for line in lines], newline)
        del world.live[own]
        world.live[new] = (target, machine.name)
    elif kind == "delete" and own is not None:
        lines, newline = read_lines(path)
        write_lines(path, [line for line in lines if line.strip() != own], newline)
        del world.live[own]
    elif kind == "crlf" and path.exists():
        lines, _newline = read_lines(path)
        write_lines(path, lines, "\r\n")
    elif kind == "paste":
        saved = path.read_bytes() if path.exists() else None
        lines, newline = read_lines(path)
        write_lines(path, [*lines, f"pasted § from {machine.name}"], newline)
        before = snapshot(machine)
        refused = machine("runtime", "add", world.text(machine, "never written"))
        assert refused.exit_code == 2 and "contains §" in refused.stderr, refused.output
        assert snapshot(machine) == before, "a refused write changed something"
        if saved is None:
            path.unlink()
        else:
            path.write_bytes(saved)
    elif kind == "add":
        new = world.text(machine, words)
        result = machine("runtime", "add", new, "--target", target)
        assert result.exit_code == 0, result.output
        world.live[new] = (target, machine.name)
    elif kind == "replace" and own is not None:
        new = f"{own}, replaced {world.text(machine, words)}"
        result = machine("runtime", "replace", own, new, "--target", target)
        assert result.exit_code == 0, result.output
        del world.live[own]
        world.live[new] = (target, machine.name)
    elif kind == "remove" and own is not None:
        result = machine("runtime", "remove", own, "--target", target)
        assert result.exit_code == 0, result.output
        del world.live[own]
    elif kind == "sync":
        result = machine("sync")
        assert result.exit_code == 0, result.output
    elif kind == "clone" and len(world.machines) < MAX_MACHINES:
        world.clone()


def settle(world: World) -> None:
    """Every machine syncs, round after round, until no HEAD moves, the remote's included (a
    machine's push moves only the remote: the machines before it in the round fetch it next)."""

    def heads() -> list[str]:
        return [m.head() for m in world.machines] + [git(world.remote, "rev-parse", "main").strip()]

    for _round in range(5):
        before = heads()
        for machine in world.machines:
            result = machine("sync")
            assert result.exit_code == 0, result.output
        if heads() == before:
            return
    pytest.fail("the machines never stopped exchanging commits")


def held(machine: Machine) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(target -> contents in memories.json, target -> item lines of the projection)."""
    data = json.loads((machine.root / RECORDS).read_text(encoding="utf-8"))
    assert not [i for i in data["items"] if "conflict" in i], "a conflict appeared"
    records = {t: sorted(i["content"] for i in data["items"] if i["target"] == t) for t in FILES}
    projections = {}
    for target, relpath in FILES.items():
        lines, _newline = read_lines(machine.root / relpath)
        projections[target] = sorted(line for line in lines if line.strip() not in ("", "§"))
    return records, projections


step_lists = st.lists(st.tuples(st.sampled_from(STEPS), st.integers(0, 3), st.integers(0, 20),
                                st.sampled_from(tuple(FILES)),
                                st.sampled_from(["", "é ü", "tabs\tand  spaces", "x" * 40])),
                      min_size=3, max_size=12)


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(step_lists)
def test_every_item_is_kept_exactly_once_on_every_machine(
        tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int, int, str, str]]) -> None:
    tmp = tmp_path_factory.mktemp("runtime-world")
    remote = tmp / "remote.git"
    git(tmp, "init", "-q", "--bare", "-b", "main", str(remote))
    world = World(tmp, remote)
    world.clone()
    first = world.machines[0]
    step(world, "add", first, 0, "memory", "seed")
    step(world, "add", first, 0, "user", "seed")
    step(world, "sync", first, 0, "memory", "")
    world.clone()
    for kind, who, pick, target, words in steps:
        machine = world.machines[who % len(world.machines)]
        step(world, kind, machine, pick, target, " ".join(words.split()))
    settle(world)
    wanted = {t: sorted(text for text, (target, _o) in world.live.items() if target == t) for t in FILES}
    for machine in world.machines:
        records, projections = held(machine)
        assert records == wanted, f"{machine.name}: memories.json"
        assert projections == wanted, f"{machine.name}: projections"
        assert git(machine.root, "status", "--porcelain") == "", machine.name
