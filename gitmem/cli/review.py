"""`gitmem review`: the facts consolidation left for a person — list, accept (as written or
edited), reject."""

from __future__ import annotations

from typing import Any

import click

from gitmem.cli.options import emit, get_store, json_option
from gitmem.errors import InvalidInputError


def _list_text(data: dict[str, Any]) -> str:
    if not data["items"]:
        return "the review queue is empty"
    lines = [f"{data['count']} proposals wait for review:"]
    for item in data["items"]:
        if item.get("kind"):
            lines += _runtime_lines(item)
            continue
        sure = f", confidence {item['confidence']:g}" if item.get("confidence") is not None else ""
        lines.append(f"  {item['id']}  [{item['scope']}/{item['layer']}] {item['topic']}  "
                     f"(digest {item['digest']}{sure}, {item['machine']} {str(item['at'])[:10]})")
        lines.append(f"      {item['text']}")
    lines.append("accept one with `gitmem review accept ID [--text ... | --edit]`, "
                 "turn it down with `gitmem review reject ID [--reason ...]`")
    return "\n".join(lines)


def _runtime_lines(item: dict[str, Any]) -> list[str]:
    """A runtime maintenance proposal: what it replaces and by what."""
    lines = [f"  {item['id']}  [{item['scope']}/runtime {item['target']}] {item['topic']}: {item['reason']}  "
             f"({item['machine']} {str(item['at'])[:10]})"]
    lines += [f"      - {s['id']}: {s['content']}" for s in item.get("sources") or []]
    lines += [f"      + {text}" for text in item.get("texts") or []]
    return lines


@click.group(invoke_without_command=True)
@json_option
@click.pass_context
def review(ctx: click.Context, as_json: bool) -> None:
    """The review queue: proposed facts consolidation was unsure of (setting consolidate.review)."""
    if ctx.invoked_subcommand is None:
        from gitmem.consolidate.review import review_list

        data = review_list(get_store(ctx))
        emit(data, as_json, lambda: _list_text(data))


@review.command(name="list")
@json_option
@click.pass_context
def list_items(ctx: click.Context, as_json: bool) -> None:
    """The waiting items, oldest first."""
    from gitmem.consolidate.review import review_list

    data = review_list(get_store(ctx))
    emit(data, as_json, lambda: _list_text(data))


def _edited(ctx: click.Context, ident: str) -> str:
    """The item's text as the person changed it in $VISUAL/$EDITOR (unchanged: refused)."""
    from gitmem.consolidate.review import review_list

    items = review_list(get_store(ctx))["items"]
    matches = [i for i in items if i["id"] == ident] or [i for i in items if str(i["id"]).startswith(ident)]
    original = str(matches[0]["text"]) if len(matches) == 1 else ""
    if not original:
        return ""  # the accept names what is wrong with the id
    edited = click.edit(original + "\n", extension=".md")
    if edited is None or edited.strip() == original.strip():
        raise InvalidInputError("the text was left unchanged: nothing accepted "
                                "(`gitmem review accept ID` accepts it as written)")
    return edited


@review.command()
@click.argument("item")
@click.option("--text", "new_text", help="Accept with this text instead of the proposed one.")
@click.option("--edit", is_flag=True, help="Edit the proposed text in $VISUAL/$EDITOR first.")
@json_option
@click.pass_context
def accept(ctx: click.Context, item: str, new_text: str | None, edit: bool, as_json: bool) -> None:
    """Write ITEM as an entry (with its digest as source) and take it off the queue."""
    from gitmem.consolidate.review import review_accept

    if edit and new_text is not None:
        raise click.UsageError("give --text or --edit, not both")
    if edit:
        new_text = _edited(ctx, item) or None
    done = review_accept(get_store(ctx), item, text=new_text)
    how = "edited and written" if done["edited"] else "written"
    if done.get("already"):
        emit(done, as_json, lambda: f"{done['item']} was {done['note']}: it is {done['id']} ({done['path']})")
        return
    emit(done, as_json, lambda: f"accepted {done['item']}: {how} as {done['id']} ({done['path']})"
         + (f"; {done['note']}" if done["note"] else "") + f"; {done['remaining']} left to review")


@review.command()
@click.argument("item")
@click.option("--reason", default="", help="Why (kept with the rejection).")
@json_option
@click.pass_context
def reject(ctx: click.Context, item: str, reason: str, as_json: bool) -> None:
    """Take ITEM off the queue and remember it, so the same fact is not proposed again."""
    from gitmem.consolidate.review import review_reject

    done = review_reject(get_store(ctx), item, reason=reason)
    emit(done, as_json, lambda: f"rejected {done['item']}: the same fact will not be proposed again; "
         f"{done['remaining']} left to review")


COMMANDS = (review,)
