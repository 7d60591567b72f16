"""`gitmem resolve TARGET [--ours|--theirs|--both]`: settle one conflict block. Parse, call, print."""

from __future__ import annotations

import click

from gitmem.cli.options import emit, get_store, json_option


@click.command(name="resolve")
@click.argument("target", metavar="ID|PATH:LINE")
@click.option("--ours", "how", flag_value="ours",
              help="Keep the version this machine wrote (else the one after <<<<<<<).")
@click.option("--theirs", "how", flag_value="theirs", help="Keep the other machine's version.")
@click.option("--both", "how", flag_value="both",
              help="Keep both: the second becomes an entry of its own with a new Id.")
@json_option
@click.pass_context
def resolve(ctx: click.Context, target: str, how: str | None, as_json: bool) -> None:
    """Settle the conflict on an entry (ID) or a state/working section (PATH:LINE, as `gitmem
    conflicts` prints it); one commit. Without a flag, commit your own edit of the file once its
    markers are gone."""
    from gitmem.verbs.resolve import resolve as do_resolve

    result = do_resolve(get_store(ctx), target, how)

    def text() -> str:
        lines = [f"resolved {result.target} in {result.path}: {result.kept}"]
        lines += [f"new entry: {new}" for new in result.new_ids]
        if result.commit is None:
            lines.append("staged for the git operation in progress: `git commit` (or `git rebase"
                         " --continue`) finishes it")
        else:
            lines.append(f"committed {result.commit[:12]}; `gitmem sync` shares it")
        lines.append(f"{result.left} conflict(s) left" + (" (`gitmem conflicts` lists them)"
                                                          if result.left else ""))
        return "\n".join(lines)

    emit(result.as_json(), as_json, text)


COMMANDS = (resolve,)
