"""`gitmem config list|get|set|unset`: every setting, shared (memory.json, committed) or local to
this machine (state/), read and changed through one catalog.

Each setting names its reader: the function the part that uses it calls when it reads memory.json.
A value is accepted by `set` exactly when that reader, given the changed memory.json, returns the
value unchanged: a reader that refuses it, or one that would quietly fall back to its default, makes
`set` refuse it with the allowed values. Secrets (the git token) are write-only: `set` hands them to
where tokens belong (git's credential helper when one keeps them, else state/git-token, mode 600),
`get` and `list` show `***`.

Pure functions over a store returning records, for the CLI and any other caller (a settings page).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from gitmem.errors import GitmemError, InvalidInputError
from gitmem.store.registry import Registry, check_freshness

if TYPE_CHECKING:
    from gitmem.store.store import Store

SHARED, LOCAL = "shared", "local"
MASK = "***"
TOKEN_KEY = "git.token"

Reader = Callable[[Registry], Any]


@dataclass(frozen=True)
class Setting:
    """One setting: its dotted key, where it lives, what is allowed, and how gitmem reads it."""

    key: str
    where: str  # shared (memory.json) | local (state/, this machine)
    kind: str  # number | bool | choice (a word or a number) | text | secret
    allowed: str
    help: str
    read: Reader | None = None  # the reader the using part calls (shared settings)


@dataclass(frozen=True)
class SettingValue:
    """A setting as it stands: the value in force, its default, and whether it was given."""

    key: str
    value: Any  # in force (MASK for a secret that is set; None when nothing is)
    default: Any
    explicit: bool  # given in memory.json / on this machine (else the default is in force)
    where: str
    stored_in: str
    allowed: str
    help: str
    secret: bool = False
    changed: bool = False
    problem: str = ""  # the value memory.json holds cannot be read (the reader's one line)
    note: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _stored(name: str) -> Reader:
    """The reader `name` of gitmem/store/settings.py."""
    def read(registry: Registry) -> Any:
        from gitmem.store import settings

        return getattr(settings, name)(registry)
    return read


def _freshness(name: str) -> Reader:
    def read(registry: Registry) -> int:
        check_freshness(registry.setting("freshness") or {})
        return registry.freshness_windows()[name]
    return read


def _runtime(field: str) -> Reader:
    def read(registry: Registry) -> int:
        from gitmem.runtime.budget import Limits

        return int(getattr(Limits.from_settings(registry.setting("runtime")), field))
    return read


def _documents(field: str) -> Reader:
    def read(registry: Registry) -> int:
        from gitmem.documents.shelf import DocLimits

        return int(getattr(DocLimits.from_settings(registry.setting("documents")), field))
    return read


def _capture(field: str) -> Reader:
    def read(registry: Registry) -> int:
        from gitmem.capture.pipeline import capture_settings_of

        found = capture_settings_of(registry)
        return int(getattr(found, field) if hasattr(found, field) else getattr(found.limits, field))
    return read


def _consolidate(name: str) -> Reader:
    def read(registry: Registry) -> int:
        from gitmem.store.settings import consolidate_settings

        return consolidate_settings(registry)[name]
    return read


def _working(name: str) -> Reader:
    def read(registry: Registry) -> int:
        from gitmem.store.settings import working_limits

        return working_limits(registry)[name]
    return read


_DAYS = "a whole number of days from 1 to 100000"
_BYTES64 = "a whole number of bytes >= 64"
_BYTES1K = "a whole number of bytes >= 1024"
_COUNT0 = "a whole number >= 0"
_COUNT1 = "a whole number >= 1"

SETTINGS: tuple[Setting, ...] = (
    Setting("freshness.stable", SHARED, "number", _DAYS, "freshness window of stable entries", _freshness("stable")),
    Setting("freshness.normal", SHARED, "number", _DAYS, "freshness window of normal entries", _freshness("normal")),
    Setting("freshness.volatile", SHARED, "number", _DAYS, "freshness window of volatile entries",
            _freshness("volatile")),
    Setting("contextMaxChars", SHARED, "number", "a whole number of characters >= 200",
            "the context card's budget", _stored("context_max_chars")),
    Setting("context.refreshMinutes", SHARED, "number", "a number of minutes >= 0 (0: never)",
            "how often the prompt hook hands a session what changed in its card", _stored("context_refresh_minutes")),
    Setting("working.activityMaxItems", SHARED, "number", _COUNT1, "notes kept in Recent activity",
            _working("activityMaxItems")),
    Setting("working.activityMaxChars", SHARED, "number", _COUNT1, "characters kept in Recent activity",
            _working("activityMaxChars")),
    Setting("runtime.userLimitBytes", SHARED, "number", _BYTES64, "USER.md budget", _runtime("user")),
    Setting("runtime.memoryLimitBytes", SHARED, "number", _BYTES64, "MEMORY.md budget", _runtime("memory")),
    Setting("runtime.itemLimitBytes", SHARED, "number", _BYTES64, "one runtime item's limit", _runtime("item")),
    Setting("runtime.compactAtPercent", SHARED, "number", "a whole number from 1 to 100", "MEMORY.md "
            "percent of its budget past which maintenance proposes a compaction", _stored("runtime_compact_percent")),
    Setting("documents.bodyLimitBytes", SHARED, "number", _BYTES1K, "one document's body limit",
            _documents("body")),
    Setting("documents.activeLimitBytes", SHARED, "number", _BYTES1K, "all active documents' limit",
            _documents("active")),
    Setting("capture.maxTurnChars", SHARED, "number", _COUNT0, "characters kept of one turn",
            _capture("max_turn_chars")),
    Setting("capture.maxGistChars", SHARED, "number", _COUNT0, "characters kept of a tool result's gist",
            _capture("max_gist_chars")),
    Setting("capture.maxTurns", SHARED, "number", _COUNT0, "turns kept of one session", _capture("max_turns")),
    Setting("capture.maxBytes", SHARED, "number", _COUNT0, "bytes kept of one session", _capture("max_bytes")),
    Setting("capture.maxPaths", SHARED, "number", _COUNT0, "file paths kept of one session",
            _capture("max_paths")),
    Setting("capture.minSignalChars", SHARED, "number", _COUNT0, "signal below which a model is not asked",
            _capture("min_signal")),
    Setting("capture.summaryMaxAttempts", SHARED, "number", _COUNT1, "summary attempts before notes are kept",
            _capture("attempts")),
    Setting("capture.turnMinutes", SHARED, "number", "a number of minutes >= 0 (0: every turn)",
            "least minutes between two captures of a session at its turns' ends", _stored("capture_turn_minutes")),
    Setting("consolidate.batchSize", SHARED, "number", _COUNT1, "digests per consolidation pass",
            _consolidate("batchSize")),
    Setting("consolidate.maxPromptBytes", SHARED, "number", _COUNT1, "bytes of one consolidation prompt",
            _consolidate("maxPromptBytes")),
    Setting("consolidate.maxDigestBytes", SHARED, "number", _COUNT1, "bytes of one digest in a prompt",
            _consolidate("maxDigestBytes")),
    Setting("consolidate.maxAttempts", SHARED, "number", _COUNT1, "passes before a digest needs review",
            _consolidate("maxAttempts")),
    Setting("consolidate.keepDigests", SHARED, "number", _COUNT1, "settled digests kept",
            _consolidate("keepDigests")),
    Setting("consolidate.review", SHARED, "choice", "off, everything, or a confidence from 0 to 1",
            "which proposed facts wait in the review queue instead of being written",
            _stored("consolidate_review")),
    Setting("serve.autoStart", SHARED, "bool", "true or false", "start the warm server on first use",
            _stored("serve_auto_start")),
    Setting("serve.idleMinutes", SHARED, "number", "a number of minutes >= 0 (0: never)",
            "idle minutes before a self-started server exits", _stored("serve_idle_minutes")),
    Setting("serve.refreshMinutes", SHARED, "number", "a number of minutes >= 0 (0: never)",
            "how often the warm server runs the freshness pass (`gitmem refresh`)", _stored("serve_refresh_minutes")),
    Setting("search.rerank", SHARED, "bool", "true or false", "search asks the model ladder to reorder its "
            "top 30 hits (`search --rerank`)", _stored("search_rerank")),
    Setting("spaces.default", SHARED, "text", "a mounted space's name, or home (empty: ask)",
            "where a new entry goes when spaces are mounted and no routing rule chooses",
            _stored("default_space")),
    Setting("git.remote", SHARED, "text", "a git URL or the path of a git repository (a token in it is moved out)",
            "the remote `gitmem sync` uses", lambda r: r.git.get("remote")),
    Setting("git.branch", SHARED, "text", "a git branch name (needs git.remote)", "the branch `gitmem sync` uses",
            lambda r: r.git.get("branch") or "main"),
    Setting(TOKEN_KEY, LOCAL, "secret", "a token without spaces (give `-` to read it from stdin)",
            "the HTTPS token for git.remote (this machine only, write-only)"),
)
_BY_KEY = {s.key: s for s in SETTINGS}


def find_setting(key: str) -> Setting:
    """The setting `key` names; an unknown key is a one-line error listing the known ones."""
    found = _BY_KEY.get(key)
    if found is None:
        raise InvalidInputError(f"unknown setting {key!r}; the settings are: {', '.join(_BY_KEY)}")
    return found


def parse_value(setting: Setting, text: str) -> Any:
    """A command-line value as the setting's kind holds it (numbers and true/false as JSON)."""
    if setting.kind in ("text", "secret"):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text  # the reader refuses it, naming what is allowed


# -- reading --------------------------------------------------------------------------------------
def _raw(data: dict[str, Any], key: str) -> tuple[bool, Any]:
    """(given, value) of `key` in memory.json data (git.* at the top, the rest under settings)."""
    group, _, name = key.rpartition(".")
    holder = data.get("git") if group == "git" else data.get("settings")
    for part in ([group] if group and group != "git" else []):
        holder = holder.get(part) if isinstance(holder, dict) else None
    if isinstance(holder, dict) and name in holder:
        return True, holder[name]
    return False, None


def _default(setting: Setting) -> Any:
    assert setting.read is not None
    return setting.read(Registry({}))


def _shared_value(registry: Registry, setting: Setting, **extra: Any) -> SettingValue:
    assert setting.read is not None
    given, raw = _raw(registry.data, setting.key)
    problem, value = "", raw
    try:
        value = setting.read(registry)
    except GitmemError as exc:
        problem = exc.message
    if setting.key == "git.remote" and value:
        from gitmem.redaction import redact

        value = redact(str(value))
    return SettingValue(setting.key, value, _default(setting), given, SHARED, "memory.json", setting.allowed,
                        setting.help, problem=problem, **extra)


def _token_value(store: Store, **extra: Any) -> SettingValue:
    from gitmem.sync.remoteinfo import credential_source

    setting = _BY_KEY[TOKEN_KEY]
    remote = str(store.registry.git.get("remote") or "")
    source = credential_source(store.root, remote or "https://")
    # A helper answers for the remote's host only: without a remote it holds nothing of ours.
    is_set = source["kind"] in ("env", "file") or (source["kind"] == "helper" and bool(remote))
    return SettingValue(TOKEN_KEY, MASK if is_set else None, None, is_set, LOCAL,
                        source["detail"], setting.allowed, setting.help, secret=True, **extra)


def settings_list(store: Store) -> list[SettingValue]:
    """Every setting with the value in force."""
    store.require()
    registry = store.registry
    return [_token_value(store) if s.where == LOCAL else _shared_value(registry, s) for s in SETTINGS]


def setting_get(store: Store, key: str) -> SettingValue:
    setting = find_setting(key)
    store.require()
    return _token_value(store) if setting.where == LOCAL else _shared_value(store.registry, setting)


# -- changing -------------------------------------------------------------------------------------
def _place(data: dict[str, Any], key: str, value: Any, remove: bool) -> None:
    group, _, name = key.rpartition(".")
    holder = data.setdefault("settings", {})
    if not isinstance(holder, dict):
        raise InvalidInputError("memory.json: 'settings' must be an object; fix it by hand")
    if group:
        inner = holder.get(group)
        if not isinstance(inner, dict):
            if remove:
                return
            inner = holder[group] = {}
        holder = inner
    if remove:
        holder.pop(name, None)
        if group and not holder:
            data["settings"].pop(group, None)
    else:
        holder[name] = value


def _check(setting: Setting, candidate: Registry, value: Any) -> None:
    """Refuse `value` unless the setting's reader, given `candidate`, reads it back unchanged."""
    assert setting.read is not None
    shown = json.dumps(value, ensure_ascii=False)
    try:
        read = setting.read(candidate)
    except GitmemError:
        raise InvalidInputError(f"{setting.key} cannot be {shown}: it must be {setting.allowed}") from None
    if read != value or isinstance(read, bool) != isinstance(value, bool):
        raise InvalidInputError(f"{setting.key} cannot be {shown}: it must be {setting.allowed}")


def setting_set(store: Store, key: str, value: Any) -> SettingValue:
    """Set one setting: a shared one in memory.json as one commit, a secret where it belongs."""
    setting = find_setting(key)
    if isinstance(value, str):
        value = parse_value(setting, value)
    if setting.key == TOKEN_KEY:
        return _set_token(store, value)
    if setting.key.startswith("git."):
        return _set_git(store, setting, str(value))
    return settings_set(store, {setting.key: value})[0]


def settings_set(store: Store, changes: Mapping[str, Any]) -> list[SettingValue]:
    """Set several shared settings of memory.json in one commit; when one value is refused,
    nothing is written. Values given as text are parsed as `config set` parses them."""
    settings = [find_setting(key) for key in changes]
    for setting in settings:
        if setting.where != SHARED or setting.key.startswith("git."):
            raise InvalidInputError(f"{setting.key} is set on its own: gitmem config set {setting.key} VALUE")
    values = {s.key: parse_value(s, v) if isinstance(v, str) else v for s, v in zip(settings, changes.values(), strict=True)}
    with store.writing("config set") as txn:
        data = copy.deepcopy(store.registry.data)
        for key, value in values.items():
            _place(data, key, value, remove=False)
        candidate = Registry(data)
        for setting in settings:
            _check(setting, candidate, values[setting.key])
        store.save_registry(txn, candidate)
        txn.message = "config set " + ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}"
                                                for key, value in values.items())
        changed = "memory.json" in txn.touched
    return [_shared_value(store.registry, s, changed=changed) for s in settings]


def setting_unset(store: Store, key: str) -> SettingValue:
    """Remove one setting so its default is in force again (one commit when it was given)."""
    setting = find_setting(key)
    if setting.key == TOKEN_KEY:
        return _unset_token(store)
    if setting.key.startswith("git."):
        raise InvalidInputError(f"{setting.key} cannot be unset; point the store elsewhere with "
                                f"`gitmem config set {setting.key} VALUE`")
    with store.writing("config unset") as txn:
        data = copy.deepcopy(store.registry.data)
        _place(data, setting.key, None, remove=True)
        store.save_registry(txn, Registry(data))
        txn.message = f"config unset {setting.key}"
        changed = "memory.json" in txn.touched
    return _shared_value(store.registry, setting, changed=changed)


def _set_git(store: Store, setting: Setting, value: str) -> SettingValue:
    """git.remote / git.branch go through `gitmem remote set` (git config, memory.json, one commit)."""
    from gitmem.sync.remote import remote_set

    store.require()
    if setting.key == "git.remote":
        done = remote_set(store, value)
    else:
        remote = store.registry.git.get("remote")
        if not remote:
            raise InvalidInputError("git.branch cannot be set before git.remote: "
                                    "`gitmem config set git.remote URL` first")
        done = remote_set(store, str(remote), branch=value)
    store.reload()
    return _shared_value(store.registry, setting, changed=True, note=done.get("token_message") or "")


def _set_token(store: Store, token: str) -> SettingValue:
    from gitmem.redaction import register_secret
    from gitmem.store.txn import refuse_subagent
    from gitmem.sync.tokens import place_token

    token = token.strip()
    if not token or any(ch.isspace() for ch in token):
        raise InvalidInputError(f"{TOKEN_KEY} cannot be that value: it must be {_BY_KEY[TOKEN_KEY].allowed}")
    register_secret(token)
    refuse_subagent("config set")
    store.require()
    with store.locked():
        remote = str(store.registry.git.get("remote") or "")
        placement = place_token(store.root, remote, token)
    where = ("git's credential helper" if placement.where == "helper" else placement.description)
    return _token_value(store, changed=True, note=f"the token was saved to {where}; it is not committed")


def _unset_token(store: Store) -> SettingValue:
    from gitmem.store.txn import refuse_subagent
    from gitmem.sync.tokens import TOKEN_FILE

    refuse_subagent("config unset")
    store.require()
    path = store.root / TOKEN_FILE
    with store.locked():
        removed = path.is_file()
        path.unlink(missing_ok=True)
    value = _token_value(store, changed=removed)
    if value.explicit:  # what is still in force is the user's own helper or the environment
        return SettingValue(**{**asdict(value), "note": f"a token is still given by {value.stored_in}; "
                                                        "remove it there"})
    return value
