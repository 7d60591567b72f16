"""Synthetic memory stores for benchmarks: realistic topic files written directly (no git)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path


def _words(text: str) -> list[str]:
    """The whitespace-separated words of a text block."""
    return text.split()

ENTRIES_PER_FILE = 20
LAYER_WEIGHTS: dict[str, int] = {
    "semantic": 30, "episodic": 15, "procedural": 12, "learnings": 12,
    "decisions": 10, "codebase": 11, "history": 10,
}
WORKSPACE_ONLY = ("codebase", "history")
ABBR = {"semantic": "sem", "episodic": "epi", "procedural": "pro", "learnings": "lrn",
        "decisions": "dec", "codebase": "cod", "history": "his"}

NOUNS = _words("""
service database cache queue worker scheduler gateway proxy router cluster node pod container
image registry pipeline build release deploy deployment rollback migration schema table index
column query transaction lock mutex thread process socket port endpoint request response header
token session cookie credential secret certificate key vault config setting flag feature toggle
branch commit merge rebase conflict tag remote origin upstream fork hook test fixture mock suite
coverage benchmark profile trace span metric alert dashboard log logger handler middleware plugin
module package dependency version lockfile wheel artifact bucket storage volume disk snapshot
backup restore replica shard partition topic consumer producer stream event message payload
schema validator parser lexer tokenizer analyzer stemmer index searcher ranking score snippet
user account role permission policy audit team owner reviewer incident outage postmortem runbook
staging production sandbox preview environment region zone latency throughput timeout retry
backoff limit quota budget cost invoice billing customer tenant workspace project repository
manifest frontmatter heading entry layer memory context card digest transcript consolidation
capture watermark freshness verification importance volatility supersession conflict marker
""")
VERBS = _words("""
move migrate upgrade downgrade pin bump rename split merge revert rotate renew expire rebuild
reindex compact vacuum restart reload scale shard replicate cache invalidate throttle debounce
retry timeout fail crash hang leak block deadlock race flake skip disable enable configure
deploy release publish tag promote archive delete purge prune backfill seed refactor inline
extract document review approve reject escalate page notify monitor alert profile optimize
""")
ADJECTIVES = _words("""
slow fast flaky stable broken stale fresh old new legacy primary secondary internal external
public private shared local remote nightly weekly manual automatic optional required default
strict lenient async sync blocking concurrent idempotent atomic durable transient critical minor
""")
TOOLS = _words("""
postgres redis kafka nginx docker kubernetes helm terraform ansible github gitlab jenkins
pytest mypy ruff black poetry uv pip npm yarn webpack vite react django flask fastapi celery
sqlite whoosh grafana prometheus sentry datadog pagerduty slack jira linear vault consul
""")
TITLE_WORDS = NOUNS + ADJECTIVES + TOOLS
PEOPLE = _words("alice bob carol dave erin frank grace heidi ivan judy mallory oscar peggy trent")
DIRS = _words("src lib app core api cli web tests docs scripts infra deploy tools gitmem server client")
EXTS = _words("py ts js go rs md yaml toml json sql sh")
FILLER = _words("""
because after before during while since although when then which that this those these also
still only just already again often usually sometimes rarely never always maybe probably
""")
ZH_WORDS = _words("""
数据库 缓存 队列 服务 部署 回滚 迁移 配置 环境 生产 测试 预发 端口 版本 依赖 升级 降级
索引 搜索 排序 分词 中文 日志 监控 告警 延迟 超时 重试 锁 并发 事务 提交 合并 冲突 分支
仓库 远程 同步 推送 拉取 钩子 脚本 构建 发布 镜像 容器 集群 节点 负载 均衡 证书 密钥 令牌
会话 用户 权限 角色 审计 备份 恢复 快照 磁盘 内存 性能 瓶颈 优化 重构 文档 规范 约定 决定
原因 结果 问题 方案 步骤 经验 教训 事故 复盘 值班 周报 需求 接口 字段 参数 模块 插件 框架
""")
ZH_GLUE = _words("的 了 在 把 被 和 与 需要 已经 应该 不要 可以 因为 所以 但是 如果 然后 每次 之后 之前")


@dataclass
class SynthConfig:
    """Shape of a synthetic store."""

    entries: int
    workspaces: int = 4
    chinese_ratio: float = 0.10
    seed: int = 7
    today: date = date(2026, 12, 2)


class Synth:
    """Deterministic text generator with Zipf-like word choice."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self._cum: dict[int, tuple[list[str], list[float]]] = {}
        self.identifiers = self._make_identifiers(3000)
        self.paths = self._make_paths(1500)

    def zipf(self, words: list[str]) -> str:
        """A word drawn with Zipf-like frequency (weight 1/(rank+50), as content words have)."""
        key = id(words)
        if key not in self._cum:
            order = list(words)
            random.Random(len(words)).shuffle(order)
            total, cum = 0.0, []
            for rank in range(len(order)):
                total += 1.0 / (rank + 50)
                cum.append(total)
            self._cum[key] = (order, cum)
        order, cum = self._cum[key]
        return self.rng.choices(order, cum_weights=cum)[0]

    def _make_identifiers(self, count: int) -> list[str]:
        out: list[str] = []
        for _ in range(count):
            a, b = self.rng.choice(VERBS + NOUNS), self.rng.choice(NOUNS)
            style = self.rng.randrange(4)
            if style == 0:
                out.append(f"{a}_{b}")
            elif style == 1:
                out.append(a + b.capitalize())
            elif style == 2:
                out.append(f"{a.upper()}_{b.upper()}")
            else:
                out.append(f"{a}-{b}")
        return out

    def _make_paths(self, count: int) -> list[str]:
        out: list[str] = []
        for _ in range(count):
            depth = self.rng.randrange(1, 4)
            parts = [self.rng.choice(DIRS) for _ in range(depth)]
            name = self.rng.choice(NOUNS + self.identifiers[:200]).lower().replace("-", "_")
            out.append("/".join(parts) + f"/{name}.{self.rng.choice(EXTS)}")
        return out

    def english_sentence(self) -> str:
        """One sentence of plausible engineering prose."""
        r = self.rng
        words = [self.zipf(NOUNS).capitalize(), self.zipf(VERBS) + r.choice(["s", "ed", "", "ing"])]
        for _ in range(r.randrange(4, 12)):
            kind = r.random()
            if kind < 0.45:
                words.append(self.zipf(NOUNS))
            elif kind < 0.6:
                words.append(self.zipf(ADJECTIVES))
            elif kind < 0.72:
                words.append(r.choice(FILLER))
            elif kind < 0.80:
                words.append(self.zipf(TOOLS))
            elif kind < 0.86:
                words.append(f"`{r.choice(self.identifiers)}`")
            elif kind < 0.91:
                words.append(r.choice(self.paths))
            elif kind < 0.95:
                words.append(str(r.choice([r.randrange(1024, 65535), r.randrange(2, 500)])))
            elif kind < 0.98:
                words.append(f"v{r.randrange(0, 9)}.{r.randrange(0, 30)}")
            else:
                words.append(r.choice(PEOPLE))
        return " ".join(words) + "."

    def chinese_sentence(self) -> str:
        """One sentence of Chinese engineering prose, sometimes mixed with English terms."""
        r = self.rng
        parts: list[str] = []
        for _ in range(r.randrange(4, 10)):
            parts.append(self.zipf(ZH_WORDS))
            if r.random() < 0.5:
                parts.append(r.choice(ZH_GLUE))
            if r.random() < 0.12:
                parts.append(f" {self.zipf(TOOLS)} ")
            if r.random() < 0.05:
                parts.append(f" {r.randrange(1024, 65535)} ")
        return "".join(parts) + "。"

    def title(self, chinese: bool) -> str:
        if chinese:
            return "".join(self.zipf(ZH_WORDS) for _ in range(self.rng.randrange(2, 5)))
        r = self.rng
        words = [self.zipf(NOUNS).capitalize(), self.zipf(VERBS)]
        words += [self.zipf(TITLE_WORDS) for _ in range(r.randrange(1, 5))]
        return " ".join(words)

    def body(self, chinese: bool) -> str:
        count = self.rng.randrange(1, 5)
        make = self.chinese_sentence if chinese else self.english_sentence
        return " ".join(make() for _ in range(count))

    def history_entry(self) -> tuple[str, str]:
        r = self.rng
        sha = f"{r.randrange(16**7):07x}"
        title = f"{self.zipf(VERBS).capitalize()} {self.zipf(NOUNS)} {self.zipf(NOUNS)} ({sha})"
        files = ", ".join(r.sample(self.paths, r.randrange(1, 4)))
        return title, f"{self.english_sentence()}\n\nFiles: {files}"


def _fields(synth: Synth, entry_id: str, today: date) -> list[str]:
    r = synth.rng
    created = today - timedelta(days=r.randrange(0, 720))
    verified = created + timedelta(days=r.randrange(0, max(1, (today - created).days + 1)))
    importance = r.choices(["critical", "high", "normal", "low"], [3, 12, 70, 15])[0]
    volatility = r.choices(["stable", "normal", "volatile"], [30, 55, 15])[0]
    lines = [
        f"**Id:** {entry_id}", f"**Importance:** {importance}", f"**Volatility:** {volatility}",
        f"**Created:** {created.isoformat()}", f"**Verified:** {verified.isoformat()}",
        f"**Source:** session:{r.randrange(16**4):04x}",
    ]
    roll = r.random()
    if roll < 0.02:
        lines.append(f"**Forgotten:** {today.isoformat()}")
    elif roll < 0.04:
        lines.append(f"**Superseded-by:** {entry_id}9")
    elif roll < 0.05:
        lines.append(f"**Valid-until:** {(today - timedelta(days=3)).isoformat()}")
    return lines


def _scopes(config: SynthConfig) -> list[str]:
    return ["global"] + [f"ws-{n:02d}" for n in range(config.workspaces)]


def _render_file(synth: Synth, config: SynthConfig, scope: str, layer: str, slug: str,
                 counter: dict[tuple[str, str], int], count: int) -> str:
    lines = ["---", f"topic: {slug}", f"layer: {layer}", f"scope: {scope}", "---",
             f"# {slug.replace('-', ' ').title()}", ""]
    for _ in range(count):
        key = (scope, layer)
        counter[key] = counter.get(key, 0) + 1
        entry_id = f"{scope}-{ABBR[layer]}-{counter[key]:04d}"
        chinese = synth.rng.random() < config.chinese_ratio
        if layer == "history" and not chinese:
            title, body = synth.history_entry()
        else:
            title, body = synth.title(chinese), synth.body(chinese)
        lines += [f"## {title}", body, "", *_fields(synth, entry_id, config.today), ""]
    return "\n".join(lines)


def _topic_path(scope: str, layer: str, slug: str) -> str:
    base = "global" if scope == "global" else f"workspaces/{scope}"
    return f"{base}/{layer}/{slug}.md"


def build_store(root: Path, config: SynthConfig) -> list[str]:
    """Write a store of about `config.entries` entries under root; returns the topic paths."""
    synth = Synth(config.seed)
    scopes = _scopes(config)
    layers = list(LAYER_WEIGHTS)
    weights = list(LAYER_WEIGHTS.values())
    counter: dict[tuple[str, str], int] = {}
    written: list[str] = []
    remaining = config.entries
    serial = 0
    while remaining > 0:
        layer = synth.rng.choices(layers, weights)[0]
        candidates = [s for s in scopes if not (s == "global" and layer in WORKSPACE_ONLY)]
        scope = synth.rng.choice(candidates)
        serial += 1
        slug = f"{synth.zipf(NOUNS)}-{synth.zipf(NOUNS)}-{serial}"
        count = min(ENTRIES_PER_FILE, remaining)
        relpath = _topic_path(scope, layer, slug)
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_render_file(synth, config, scope, layer, slug, counter, count), "utf-8")
        written.append(relpath)
        remaining -= count
    for scope in scopes[1:]:
        state = root / "workspaces" / scope / "state.md"
        state.write_text(f"# State\n\n## Build\nThe build of {scope} is green.\n\n"
                         f"**Verified:** {config.today.isoformat()}\n", "utf-8")
    return written


def make_queries(count: int, seed: int = 11) -> list[str]:
    """A realistic mix of queries: words, pairs, identifiers, Chinese, questions, partial words."""
    synth = Synth(seed)
    r = synth.rng
    makers = [
        (30, lambda: synth.zipf(NOUNS)),
        (20, lambda: f"{synth.zipf(NOUNS)} {synth.zipf(NOUNS)}"),
        (10, lambda: f"{synth.zipf(VERBS)} {synth.zipf(NOUNS)} {synth.zipf(TOOLS)}"),
        (8, lambda: r.choice(synth.identifiers)),
        (5, lambda: r.choice(synth.paths)),
        (8, lambda: synth.zipf(ZH_WORDS)),
        (4, lambda: synth.zipf(ZH_WORDS)[:1]),
        (4, lambda: f"{synth.zipf(ZH_WORDS)} {synth.zipf(TOOLS)}"),
        (6, lambda: f"when did we {synth.zipf(VERBS)} the {synth.zipf(NOUNS)} to {synth.zipf(TOOLS)}?"),
        (5, lambda: synth.zipf(NOUNS)[:5]),
    ]
    weights = [w for w, _ in makers]
    return [r.choices(makers, weights)[0][1]() for _ in range(count)]


def make_partial_queries(count: int, seed: int = 13) -> list[str]:
    """Words typed part of the way (`stagin`) or from the middle (`ployme`), alone or after a
    whole word, drawn from the same word distribution as the store."""
    synth = Synth(seed)
    r = synth.rng

    def word() -> str:
        while True:
            picked = synth.zipf(r.choice([NOUNS, NOUNS, VERBS, TOOLS]))
            if len(picked) >= 6:
                return picked

    def half_typed() -> str:
        picked = word()
        return picked[: len(picked) - r.randrange(1, 4)]

    def mid_word() -> str:
        picked = word()
        start = r.randrange(1, 3)
        return picked[start : max(start + 4, len(picked) - r.randrange(0, 3))]

    makers = [
        (4, half_typed),
        (4, mid_word),
        (2, lambda: f"{synth.zipf(NOUNS)} {r.choice([half_typed, mid_word])()}"),
    ]
    weights = [w for w, _ in makers]
    return [r.choices(makers, weights)[0][1]() for _ in range(count)]
