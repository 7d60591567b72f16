"""gitmem's own secret rules: the token formats detect-secrets 1.5 does not know, after gitleaks'
public rule list (GitHub fine-grained tokens, Anthropic, OpenAI project keys, Google API keys,
AWS secret access keys, npm, Hugging Face, Databricks, DigitalOcean, Shopify, Mailgun, Heroku,
Discord and Microsoft Teams webhooks, and some forty more vendor prefixes: Vault, Terraform Cloud,
Linear, Postman, age, Doppler, Supabase, New Relic, Grafana, Tailscale, Sentry, Docker Hub, Groq,
xAI, OpenRouter, Atlassian, Azure AD client secrets, Stripe webhook secrets, ...) and the
unquoted assignments of a note, an environment file or an HTTP header (`password: ...`,
`DEPLOY_TOKEN=...`, `X-Api-Key: ...`).

Formats detect-secrets knows (Twilio, SendGrid, Telegram, Azure storage, JWTs, private key
headers, ...) are left to it, except where its pattern is narrower than the format (GitHub
tokens longer than 36 characters, GitLab's other prefixes, Stripe test keys, Slack's xoxe-,
passwords in URLs with a `!` or `$`). A rule is a regular expression and, where the shape alone
is not enough, a check of the value (it must look made up: a digit or symbol among letters, or
random-looking), so that prose, commit hashes, UUIDs and Ids pass. A prefix that names one
vendor's tokens takes a range of lengths, not the one length of today's format: a token cut short
by a partial copy, or one of a format that grew, is still a secret. Every rule's match (its `secret` group when it has one) is
both what the write gate refuses and what the output masks: one set of rules for both.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from gitmem.fsio import read_regular_file, write_text_atomic
from gitmem.secrets.gate import cache_file
from gitmem.secrets.needles import needles

CACHE_NAME = "secret-rule-needles.json"

# A token starts where a letter or digit does not come before it (an underscore may: Markdown's
# `_italic_`; so may the letter of a backslash escape: `\\n` in a pasted JSON string), and ends
# where its alphabet does (a lone underscore after it is Markdown's too).
_START = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrtbf]))"
_END = r"(?![A-Za-z0-9-])(?!_[A-Za-z0-9])"


@dataclass(frozen=True)
class Rule:
    """One secret format: its kind (as a finding names it), its expression and a value check.
    The expression is compiled when first used (the re module keeps it), not at import."""

    kind: str
    source: str
    check: Callable[[str], bool] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.source)

    def values(self, line: str) -> list[tuple[int, int]]:
        """(start, end) of each secret this rule finds in the line."""
        pattern = self.pattern
        group = "secret" if "secret" in pattern.groupindex else 0
        spans = []
        for match in pattern.finditer(line):
            value = match.group(group)
            if value and (self.check is None or self.check(value)):
                spans.append(match.span(group))
        return spans


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def a_path(value: str) -> bool:
    """A file path (`/etc/keys/passphrase.txt`, `~/.config/gh/token2.txt`): where a secret is
    kept, not the secret."""
    return value.startswith(("/", "~/", "./", "../")) and "//" not in value and all(
        part.replace("-", "").replace("_", "").replace(".", "").isalnum()
        for part in value.split("/") if part not in ("", "~", ".", ".."))


def named_thing(value: str) -> bool:
    """A path, or a name made of words (`tls-cert-2024-prod-api-gateway`,
    `aws_secretsmanager_secret.db_credentials_v2.id`): what a secret's name is often set to,
    which no generated credential looks like. A word is lower case letters, or digits, or at
    most six characters of both (`v3`, `oauth2`). (A password may be words: made_up asks a_path
    only.)"""
    if a_path(value):
        return True
    parts = [p for p in re.split(r"[-_./:]+", value) if p]
    return len(parts) >= 2 and all(p.islower() and p.isalpha() or p.isdigit() or
                                   (len(p) <= 6 and p.islower()) for p in parts)


def made_up(value: str) -> bool:
    """A password-like value: 6+ characters, a digit or a symbol among letters, not a
    placeholder (`${VAR}`, `<password>`, `{{ secret }}`, `****`, `xxxxxx`), not a path."""
    if len(value) < 6 or value[0] in "$<{%" or not set(value.lower()) - set("*x."):
        return False
    if a_path(value):
        return False
    if any(c in "()[]{}" for c in value):  # code: `password = os.getenv("DB_PASSWORD")`
        return False
    return any(c.isalpha() for c in value) and any(c.isdigit() or c not in "._-" and not c.isalnum()
                                                   for c in value)


def random_looking(value: str) -> bool:
    """A generated credential: 16+ characters, letters and digits mixed, high entropy; a plain
    word, a version, a path or a hex commit hash is not one."""
    if len(value) < 16 or value[0] in "$<{%" or named_thing(value):
        return False
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    if not letters or not digits:
        return False
    if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", value):  # a commit hash: the history records them
        return False
    # Sixteen symbols give less entropy per character than sixty-four: a random 32-digit hex key
    # often measures under 3.5, and a hex word (`deadbeefcafebabe`) under 2.8.
    hexadecimal = re.fullmatch(r"[0-9a-f]+|[0-9A-F]+", value) is not None
    return entropy(value) >= (2.8 if hexadecimal else 3.5)


def mixed_case(value: str) -> bool:
    """A generated token of letters (digits optional): both cases, high entropy."""
    return (any(c.isupper() for c in value) and any(c.islower() for c in value)
            and entropy(value) >= 3.5)


def base64_key(value: str) -> bool:
    """A 40-character AWS secret access key: upper and lower case letters and digits mixed."""
    return (any(c.isupper() for c in value) and any(c.islower() for c in value)
            and any(c.isdigit() for c in value))


def _rule(kind: str, source: str, check: Callable[[str], bool] | None = None) -> Rule:
    return Rule(kind, source, check)


def _token(kind: str, body: str, check: Callable[[str], bool] | None = None) -> Rule:
    """A rule for a token standing on its own: `body` between the edges _START and _END."""
    return Rule(kind, _START + body + _END, check)


# `API_KEY`, `apikey` and an HTTP header's `X-Api-Key` alike.
_SECRET_NAME = (r"[A-Za-z0-9_.-]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API[_-]?KEY|ACCESS[_-]?KEY"
                r"|PRIVATE[_-]?KEY|AUTH[_-]?KEY|CLIENT[_-]?KEY|CREDENTIALS?|SIGNING[_-]?KEY)"
                r"[A-Za-z0-9_.-]*")
_ASSIGN = r"""["']?\s*(?::=|=>|[:=])\s*["']?"""
_AWS_SECRET_NAME = r"(?:aws[_ .-]?)?secret(?:[_ .-]?(?:access[_ .-]?)?key)?"

RULES: tuple[Rule, ...] = (
    _token("GitHub Fine-Grained Token", r"github_pat_[A-Za-z0-9_]{30,255}", random_looking),
    _token("GitHub Token", r"gh[pousr]_[A-Za-z0-9]{36,255}"),
    _token("Anthropic API Key", r"sk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_-]{32,}"),
    _token("OpenAI Token", r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}",
          random_looking),
    _token("Google API Key", r"AIza[0-9A-Za-z_-]{30,64}", random_looking),
    _token("Google OAuth Client Secret", r"GOCSPX-[A-Za-z0-9_-]{28}"),
    _rule("AWS Secret Access Key",
          r"(?i:" + _AWS_SECRET_NAME + r")[\"']?(?:\s*(?::=|=>|[:=]|\bis\b|\bof\b)\s*|[\s\"',]{1,4})"
          r"[\"'`]?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])", base64_key),
    _rule("AWS Secret Access Key",
          r"(?:\b(?:AKIA|ASIA)[0-9A-Z]{16}\b|(?i:\baws\b)).{0,80}?(?<![A-Za-z0-9/+])(?P<secret>[A-Za-z0-9/+]{40})"
          r"(?![A-Za-z0-9/+=])", base64_key),
    _token("GitLab Token", r"gl(?:pat|ptt|rt|dt|ft|soat|cbt|imt|oas)-[A-Za-z0-9_-]{20,}"),
    _token("Slack Token", r"xox[abposer]-[A-Za-z0-9-]{10,}"),
    _rule("Slack Webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}"),
    _token("Discord Webhook",
          r"discord(?:app)?\.com/api/webhooks/\d{5,30}/(?P<secret>[A-Za-z0-9_-]{40,})"),
    _rule("Microsoft Teams Webhook",
          r"(?:\.webhook\.office\.com/webhookb2|\boutlook\.office(?:365)?\.com/webhook)/"
          r"(?P<secret>[A-Za-z0-9@/_-]{40,})"),
    _token("Stripe Access Key", r"[rs]k_(?:live|test|prod)_[A-Za-z0-9]{16,}"),
    _token("npm Token", r"npm_[A-Za-z0-9]{30,64}", random_looking),
    _token("PyPI Token", r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    _token("Hugging Face Token", r"hf_[A-Za-z0-9]{30,64}", mixed_case),
    _token("Databricks Token", r"dapi[a-h0-9]{32}(?:-\d)?"),
    _token("DigitalOcean Token", r"do[opr]_v1_[a-f0-9]{64}"),
    _token("Shopify Token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    _token("Mailgun Key", r"key-[a-f0-9]{32}"),
    _token("Heroku API Key", r"HRKU-[A-Za-z0-9_-]{58,}"),
    # Vendor prefixes of tokens people paste (gitleaks' public rules, written for this list).
    _token("HashiCorp Vault Token", r"hv[sbr]\.[A-Za-z0-9_-]{24,}", random_looking),
    _token("Terraform Cloud Token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}"),
    _token("Linear API Key", r"lin_(?:api|oauth)_[A-Za-z0-9]{32,}", random_looking),
    _token("Postman API Key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    _token("age Secret Key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    _token("Doppler Token", r"dp\.(?:st|sa|ct|pt|scim|audit)\.[A-Za-z0-9_-]{40,}"),
    _token("Supabase Token", r"sbp_(?:v0_)?[a-f0-9]{40}"),
    _token("New Relic Key", r"NR(?:AK|II|JS|AA)-[A-Za-z0-9]{19,}", random_looking),
    _token("Grafana Token", r"gl(?:sa|c)_[A-Za-z0-9+/=_]{32,}", random_looking),
    _token("Tailscale Key",
          r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{20,}"),
    _token("Firebase Cloud Messaging Key", r"AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}"),
    _token("Sentry Token", r"sntry[su]_[A-Za-z0-9+/=_-]{40,}"),
    _token("Fly.io Token", r"fo1_[A-Za-z0-9_-]{40,}", random_looking),
    _token("PlanetScale Token", r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_.=-]{32,}", random_looking),
    _token("Dropbox Token", r"sl\.[A-Za-z0-9_-]{130,}", random_looking),
    _token("Notion Token", r"(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})", random_looking),
    _token("Figma Token", r"fig[dou]_[A-Za-z0-9_-]{38,}", random_looking),
    _token("Pulumi Token", r"pul-[a-f0-9]{40}"),
    _token("Buildkite Token", r"bkua_[a-f0-9]{40}"),
    _token("Docker Hub Token", r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{24,}", random_looking),
    _token("Groq API Key", r"gsk_[A-Za-z0-9]{48,}", random_looking),
    _token("xAI API Key", r"xai-[A-Za-z0-9]{70,}", random_looking),
    _token("Replicate Token", r"r8_[A-Za-z0-9]{35,}", random_looking),
    _token("Perplexity API Key", r"pplx-[A-Za-z0-9]{40,}", random_looking),
    _token("OpenRouter API Key", r"sk-or-v1-[a-f0-9]{64}"),
    _token("LangSmith API Key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    _token("Pinecone API Key", r"pcsk_[A-Za-z0-9_]{40,}", random_looking),
    _token("Atlassian API Token", r"ATATT3[A-Za-z0-9_=-]{100,}"),
    _token("Bitbucket App Password", r"ATBB[A-Za-z0-9_=.-]{32,}", random_looking),
    _token("Google OAuth Access Token", r"ya29\.[A-Za-z0-9_-]{30,}", random_looking),
    _rule("Azure AD Client Secret",
          r"(?:(?<![A-Za-z0-9~.-])|(?<=\\[nrtbf]))[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}" + _END),
    _token("Cloudflare Origin CA Key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    _token("Stripe Webhook Secret", r"whsec_[A-Za-z0-9+/=]{32,}", random_looking),
    _token("Brevo API Key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    _token("Alibaba Access Key", r"LTAI[A-Za-z0-9]{20}", random_looking),
    _token("Airtable Token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    _token("Mapbox Secret Token", r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}"),
    _rule("Heroku API Key",
          r"(?i:heroku)[\w .-]{0,20}" + _ASSIGN + r"(?P<secret>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-"
          r"[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\b"),
    _rule("Basic Auth Credentials",
          _START + r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@]*:(?P<secret>[^\s/?#@]+)@[A-Za-z0-9\[]",
          lambda value: value[0] not in "$<{%" and bool(set(value) - set("*x"))),
    _rule("Password Assignment",
          r"(?i:\b[\w.-]*(?:passw(?:or)?d|pwd|passphrase))" + _ASSIGN
          + r"(?P<secret>[^\s\"'`,;]{6,})", made_up),
    _rule("Secret Assignment",
          r"(?i:\b" + _SECRET_NAME + r")" + _ASSIGN + r"(?P<secret>[A-Za-z0-9_./+=~-]{16,})",
          random_looking),
    _rule("Authorization Header", r"(?i:\bbearer\s+|\bauthorization:\s*(?:token|basic)\s+)(?P<secret>[A-Za-z0-9._~+/-]{20,}=*)",
          random_looking),
)


@functools.lru_cache(maxsize=1)
def rule_needles() -> tuple[tuple[str, ...] | None, ...]:
    """Each rule's needles (needles.py): read from a cache file keyed by the rules' own text,
    computed (and cached) when there is none, so a process does not parse every rule."""
    key = hashlib.sha256("\n".join(r.source for r in RULES).encode()).hexdigest()
    path = cache_file().with_name(CACHE_NAME)
    try:
        data = json.loads(read_regular_file(path))
        if data.get("key") == key and len(data["needles"]) == len(RULES):
            return tuple(None if pins is None else tuple(pins) for pins in data["needles"])
    except (OSError, ValueError, TypeError, KeyError):
        pass
    found = [needles(rule.source) for rule in RULES]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps({"key": key, "needles": found}), durable=False)
    except OSError:
        pass
    return tuple(None if pins is None else tuple(pins) for pins in found)
