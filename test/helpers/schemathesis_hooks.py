"""Schemathesis hooks of the suite's run (test/integration/schemathesis.test.ts), loaded through SCHEMATHESIS_HOOKS.

A token per operation: each operation is called with a token of its own, minted through POST /platform/tokens as any
client would, so the platform API's per-token budget (its real size) is spent by one operation's cases and not by the
whole run's; with one token for everything, the operations tested last would only ever see 429. A token whose budget
runs low is followed by another for the same operation, and the minting token replaces itself the same way. Any 429
a minted token meets is written to SLIPWAY_ST_429_LOG (one JSON line each) and fails the test: every check accepts a
429, so it would hide whatever the operation does. At exit, SLIPWAY_ST_STATS gets the counts the test prints.

Refusals no schema can state: `filter_failure` drops a "schema-valid request rejected" failure only where the
server's answer names one of the facts in REFUSALS_NO_SCHEMA_STATES; every other refusal of valid data still fails.

Environment: SLIPWAY_ST_BASE_URL (the api), SLIPWAY_ST_TOKEN (an owner's token: it mints the others and lends them
its scopes), SLIPWAY_ST_429_LOG and SLIPWAY_ST_STATS (files the test reads).
"""

import atexit
import json
import os
import threading

import requests
import schemathesis

BASE_URL = os.environ["SLIPWAY_ST_BASE_URL"]
OWNER_TOKEN = os.environ["SLIPWAY_ST_TOKEN"]
LOG_429 = os.environ["SLIPWAY_ST_429_LOG"]
STATS = os.environ["SLIPWAY_ST_STATS"]
# Long enough for the bounded run; the tokens belong to the test's own organisation.
LIFETIME = "2h"

# (what the server's message says, why no schema can say it[, the only operation it is dropped on]). Each is a fact
# of the world at request time, or of stored state, that a JSON Schema of the request cannot hold; the messages are
# our own and name the fact, so no other refusal matches them.
REFUSALS_NO_SCHEMA_STATES = [
    ("Invalid cursor", "a cursor is opaque: only a nextCursor the server returned is one, whatever its characters"),
    ("does not resolve", "whether a host resolves is DNS at the time of the request; no name the fuzzer makes up does"),
    ("addresses cannot be called", "whether a host's addresses are public is DNS at the time of the request"),
    ("baseUrl refused", "whether the host resolves, and to a public address, is DNS at the time of the request"),
    ("is not a zip file", "the part is bytes to a schema; that they make a zip archive is their content, not shape"),
    # IDs of things made before: the fuzzer can only make them up, and one made up names nothing.
    ("is unknown, expired or not this organisation's", "an uploadId names an upload made before"),
    ("is not a secret of this organisation", "a gitTokenSecretId names a secret stored before"),
    ("Unknown productId", "a productId names a product created before"),
    ("is not an instance of this deployment", "an instance name names a container of the deployment"),
    # State: the same valid request is accepted in one state of the organisation and refused in another.
    # The console's session routes answer the session cookie only; which credential a request carries is not its data.
    ("was not made with a console session cookie", "which of the two security schemes a request used is its credential, not its data"),
    ("Save a webhook URL first", "a test event needs a webhook saved before, which no request body carries"),
    ("was already refunded", "a sale is refunded once; the same request is refused after"),
    ("must be before", "`from` before `to` compares two parameters, which JSON Schema has no keyword for"),
    # A builder path's segment may hold 255 bytes of UTF-8 (what file systems take); JSON Schema counts characters.
    ("has a segment longer than 255 bytes", "a segment's limit is in UTF-8 bytes, which no JSON Schema keyword counts"),
    # An organisation always keeps an owner: demoting one is valid unless it is the last, which the members decide.
    ("is the last owner of the organisation", "whether other owners exist is the organisation's state", "PATCH /platform/users/{id}"),
    # An image name holds at most 255 characters (the engine's limit). The pattern states the reference's shape; the
    # name's length would be a lookahead over it, which made generating each matching value take seconds, so the
    # field's description states it instead (shared/images/reference.ts, IMAGE_REFERENCE).
    ("the repository name is longer than 255 characters", "the name's length inside the reference, stated in its description"),
    # An env change names a variable in `set` or in `unset`, not both: JSON Schema cannot relate one field's keys to
    # another field's items.
    ("cannot be both set and removed in one change", "a key of one field among the items of another", "PATCH /platform/deployments/{id}/env"),
    # A builder save names each path once: uniqueItems compares whole items, and two files with one path and
    # different contents are different items; no JSON Schema keyword makes one property unique across an array.
    ("each path once", "one property unique across an array's items", "PUT /platform/builder/sessions/{id}/files"),
    # A project always keeps an admin: demoting or removing one is valid unless it is the last, which the members
    # decide (a project the run created has its creator as its only admin).
    ("is the last admin of project", "whether other admins exist is the project's members", "PATCH /platform/projects/{id}/members/{userId}", "DELETE /platform/projects/{id}/members/{userId}"),
    # Removing a variable names one the deployment has: its stored environment decides, which no request carries.
    ("so there is nothing to remove", "whether a variable is set is the deployment's stored environment", "PATCH /platform/deployments/{id}/env"),
    # A metrics window holds at most 1,440 points: (to - from) / step relates three parameters, which JSON Schema
    # cannot compare.
    ("points; at most", "(to - from) / step relates three parameters", "GET /platform/deployments/{id}/container-metrics/history"),
    # A project is deleted without force only when it holds no live deployment: its deployments decide.
    ("live deployment", "whether the project holds live deployments is stored state", "DELETE /platform/projects/{id}"),
    # A change is checked on the project as it will be: without repoUrl in the body, whether one is stored decides.
    ("gitTokenSecretId needs the repoUrl", "the project's stored repoUrl", "PUT /platform/projects/{id}"),
    # A mount path's pattern states absolute and normal; the runtime's own directories (/proc, /sys, /dev) and the
    # length in UTF-8 bytes would take lookaheads, which make generating each matching value slow (as image names).
    ("cannot be mounted at", "a path under the runtime's own directories, which a pattern says only with lookaheads", "POST /platform/deployments/{id}/volumes", "POST /platform/deployments"),
    # A webhook is called over HTTP: format "uri" admits every scheme (a run met a redis:// URL another answer held),
    # and a pattern beside it made generating URIs slow; the field's description states the scheme.
    ("an http:// or https:// URL", "the scheme a URI field takes", "PUT /platform/sales/webhook"),
    # The AI builder's session state: what it holds decides, which no request carries (a run that made a session met
    # each of these).
    ("has no files to publish yet", "whether the session holds files", "POST /platform/builder/sessions/{id}/publish"),
    ("has no files to share yet", "whether the session holds files", "POST /platform/builder/sessions/{id}/share"),
    ("has no sandbox yet", "whether a sandbox was configured before", "POST /platform/builder/sessions/{id}/sandbox/sync"),
    ("is a file, so", "one path of the array a prefix of another's, which no JSON Schema keyword relates", "PUT /platform/builder/sessions/{id}/files"),
    (" offers ", "the models the session's provider offers", "PUT /platform/builder/sessions/{id}/model"),
    # One writer: a deployment with a volume runs one instance. The rule relates two fields (volumes non-empty, then
    # replicas at most 1), which the document would state only with if/then.
    ("a deployment with a volume runs one instance", "volumes and replicas together", "POST /platform/deployments"),
    # A cron expression's grammar (five fields, each a range of its own: minutes 0-59, hours 0-23, …) is Temporal's
    # to parse; the pattern states its characters only.
    ("The schedule was refused", "a cron expression's grammar and ranges", "PUT /platform/databases/{id}/backup-schedule", "PUT /platform/deployments/{id}/databases/{dbId}/backup-schedule"),
    ("may be at most 4096 bytes long", "a length in UTF-8 bytes, which no JSON Schema keyword counts", "POST /platform/deployments/{id}/volumes", "POST /platform/deployments"),
    # Buckets: what the bucket holds and what its keys and links are decide, which no request carries.
    ("holds objects; delete them first", "whether the bucket holds objects", "DELETE /platform/buckets/{id}"),
    ("belongs to the link with deployment", "whether the key is a link's", "DELETE /platform/buckets/{id}/credentials/{keyId}"),
    ("a bucket is linked to deployments of its own project", "the projects the bucket and the deployment are in", "POST /platform/buckets/{id}/links"),
    # Usage: a period's dates are compared and measured, which JSON Schema cannot do with two parameters, and a
    # month's length (no 30 February) is the calendar's.
    ("is not a real date or instant", "how many days a month has", "GET /platform/usage"),
    ("is longer than 366 days", "the distance between from and to, two parameters", "GET /platform/usage"),
    # Custom domains: a host name's rules beyond its shape (IDNA, each label's length, wildcards, IP literals, public
    # suffixes, the service's own domain) are shared/domains/hostname.ts's; whether another organisation verified the
    # host, or this one added it, is the state of the world; verify's DNS answer is the world at the time.
    ("wildcard domains are not supported", "a wildcard inside a host name, which the pattern would state as a lookahead", "POST /platform/domains"),
    ("is an IP address; a custom domain is a DNS name", "an IP literal's grammar beside a host name's", "POST /platform/domains"),
    ("is a single label", "a host name's label count", "POST /platform/domains"),
    ("hostname is empty", "a host name of spaces only, which the pattern would state as a lookahead", "POST /platform/domains"),
    ("is a public suffix", "the list of public suffixes", "POST /platform/domains"),
    ("where the service gives deployments their own addresses", "the service's own domain (EDGE_DOMAIN), configuration", "POST /platform/domains"),
    ("is not a valid international domain name", "IDNA's rules (UTS #46), which no pattern states", "POST /platform/domains"),
    ("is not a bare host name", "a host name's characters", "POST /platform/domains"),
    ("each dot-separated label is 1 to 63", "each label's length", "POST /platform/domains"),
    ("ends in a numeric label", "a top-level domain's letters", "POST /platform/domains"),
    ("longer than the 253 characters DNS allows", "the length after punycode", "POST /platform/domains"),
    ("is verified by another organisation", "whether another organisation verified the host", "POST /platform/domains", "POST /platform/domains/{id}/verify"),
    ("is already added in this organisation", "whether this organisation added the host before", "POST /platform/domains"),
    # Database sources: a statement's grammar is the safety check's parser's to read (a string to a schema); whether
    # the source answers, and what its database says, is the world at the time of the request.
    ("blocked by a safety check", "whether SQL is one read-only statement is its grammar, which only a parser reads", "POST /platform/database-sources/{id}/query", "POST /platform/database-sources/{id}/ask"),
    ("Could not connect to the source", "whether the source's server answers is the network at the time of the request", "POST /platform/database-sources/{id}/query", "GET /platform/database-sources/{id}/schema"),
    ("The source cannot be queried", "the source's host at the time of the request, or its managed database's state", "POST /platform/database-sources/{id}/query", "GET /platform/database-sources/{id}/schema"),
    ("The database refused the statement", "what the source's database accepts is its own schema", "POST /platform/database-sources/{id}/query"),
    ("ran past its time limit", "how long the source's database takes", "POST /platform/database-sources/{id}/query"),
    ("is a managed database by reference", "whether the source refers to a managed database", "PATCH /platform/database-sources/{id}"),
    ("is neither a host name nor an IPv4 or IPv6 address", "an IPv6 address's grammar (how many groups, one `::`), which the pattern states loosely", "POST /platform/database-sources", "PATCH /platform/database-sources/{id}"),
    ("which has no SQL to query", "the engine of the database the ID names", "POST /platform/database-sources"),
    ("has no enabled AI provider", "whether the organisation holds an enabled AI provider", "POST /platform/database-sources/{id}/ask"),
    ("is disabled; enable it", "whether the named AI provider is enabled", "POST /platform/database-sources/{id}/ask"),
    ("does not offer the model", "the models the named AI provider offers", "POST /platform/database-sources/{id}/ask"),
    # Support tickets: which status may follow is the ticket's stored status; a closed one takes no comments.
    ("cannot become", "which status may follow which is the ticket's stored status", "PATCH /platform/tickets/{id}"),
    ("already.", "the ticket's stored status", "PATCH /platform/tickets/{id}"),
    ("takes no comments; reopen it first", "whether the ticket is closed", "POST /platform/tickets/{id}/comments"),
    # Organisation settings: the plan's providers and the providers given or stored relate fields and stored state;
    # a token's or a deploy's limits are the organisation's stored settings.
    ("plan, which offers", "the providers the organisation's plan offers", "PATCH /platform/organization"),
    ("is not among allowedProviders", "defaultProvider against allowedProviders, given or stored", "PATCH /platform/organization"),
    ("maximum token lifetime", "the organisation's stored tokenMaxLifetimeS", "POST /platform/tokens"),
    ("allowed providers", "the organisation's stored allowedProviders", "POST /compat/deploy", "POST /compat/deploy/source", "POST /platform/deployments"),
    # Regions: which a provider has is this server's (ENGINE_REGION; cloud providers none yet), and the default region
    # is checked against the default provider, given in the same request or stored.
    ("must be a region of the default provider", "the default provider's regions, given or stored, on this server", "PATCH /platform/organization"),
    ("does not have the organisation's defaultRegion", "the stored defaultRegion against the default provider given", "PATCH /platform/organization"),
    ("on this server; its regions", "the provider's regions are this server's ENGINE_REGION", "POST /compat/deploy", "POST /compat/deploy/source", "POST /platform/deployments"),
    ("The organisation's defaultRegion", "the organisation's stored defaultRegion", "POST /compat/deploy", "POST /compat/deploy/source", "POST /platform/deployments"),
    # Git connections and bindings: the stored connection, its secret and the server's Git host rules decide.
    ("A generic connection needs baseUrl", "a field required for one value of another (provider generic)", "POST /platform/git/connections"),
    ("baseUrl must be https://", "whether http:// is allowed is the server's ALLOW_PRIVATE_GIT_HOSTS", "POST /platform/git/connections"),
    ("tokenSecretId is refused", "the hosts and environment the stored secret is bound to", "POST /platform/git/connections"),
    ("not on the connection’s host", "the host of the connection the ID names", "POST /platform/git/bindings"),
    ("gitTokenSecretId is refused", "the hosts the connection's stored secret is bound to", "POST /platform/git/bindings"),
    ("repoUrl is refused", "whether the repository's host resolves to a public address is DNS at the time of the request", "POST /platform/git/bindings"),
    ("binding; delete it", "whether bindings use the connection", "DELETE /platform/git/connections/{id}"),
    ("bindings; delete them", "whether bindings use the connection", "DELETE /platform/git/connections/{id}"),
]

# What a fuzzed PATCH /platform/organization may set that would stop the run's own calls (a token lifetime below the
# minted tokens', providers that refuse every deploy): put back after each, and before a mint the maximum refused.
SETTINGS_RESET = {"tokenMaxLifetimeS": None, "allowedProviders": None, "defaultProvider": None, "defaultRegion": None}

# Left unspent on each token: the checks' own probes (the same request again, another method) carry the case's token
# and may land after the last answer this hook read the budget from.
RESERVE = 40

_lock = threading.Lock()
_scopes = None
_stats = {"minted": 0, "mostOnOneToken": 0, "withoutMintedToken": 0, "dropped": 0}


class Budgeted:
    """A token and what its platform budget had left at its last answer (None before its first)."""

    def __init__(self, token):
        self.token = token
        self.remaining = None
        self.used = 0

    def low(self, reserve):
        return self.remaining is not None and self.remaining <= reserve


_minter = Budgeted(OWNER_TOKEN)
_by_operation = {}
_by_token = {}


def _read_budget(holder, headers):
    value = headers.get("x-ratelimit-remaining") or headers.get("X-RateLimit-Remaining")
    if isinstance(value, list):
        value = value[0] if value else None
    if value is not None:
        holder.remaining = int(value)


# A minting token hands over to a successor after this many of its own calls, whatever its budget headers said
# last: they are read only from its own answers, and anything else spending it would go unseen until a 429.
MINTER_CALLS = 50


class MintRefused(RuntimeError):
    def __init__(self, status, text):
        super().__init__(text)
        self.status = status


def _minter_call(method, path, **kwargs):
    headers = {"Authorization": f"Bearer {_minter.token}"}
    response = requests.request(method, f"{BASE_URL}{path}", headers=headers, timeout=60, **kwargs)
    _minter.used += 1
    _read_budget(_minter, response.headers)
    if response.status_code != 200:
        raise MintRefused(response.status_code, f"{method} {path} answered {response.status_code}: {response.text[:500]}")
    return response.json()["data"]


def _grantable():
    """What the minting token may grant now: its scopes within its user's role (a fuzzed role change narrows it)."""
    return _minter_call("GET", "/platform/tokens/current")["permissions"]


def _reset_settings():
    try:
        _minter_call("PATCH", "/platform/organization", json=SETTINGS_RESET)
    except MintRefused:
        # A fuzzed role change took organization.manage from the minter: the settings stay, and so may the refusals.
        pass


def _mint_with(scopes, name):
    try:
        return _mint_once(scopes, name)
    except MintRefused as refused:
        if refused.status != 400 or "maximum token lifetime" not in str(refused):
            raise
        _reset_settings()
        return _mint_once(scopes, name)


def _mint_once(scopes, name):
    global _minter
    body = {"scopes": scopes, "expiresIn": LIFETIME}
    if _minter.low(5) or _minter.used >= MINTER_CALLS:
        # The minting token spends its own budget too: before it runs out, it mints its successor.
        successor = _minter_call("POST", "/platform/tokens", json={**body, "name": "schemathesis minter"})
        _minter = Budgeted(successor["token"])
    return Budgeted(_minter_call("POST", "/platform/tokens", json={**body, "name": name[:100]})["token"])


def _mint(name):
    """A new token with what the owner may grant; the caller holds the lock."""
    global _scopes
    if _scopes is None:
        _scopes = _grantable()
    try:
        minted = _mint_with(_scopes, name)
    except MintRefused as refused:
        if refused.status != 403:
            raise
        # A fuzzed request changed the owner's role (another owner was made, then this one demoted): mint what is
        # left to grant, and the operations that needed more answer 403, which the checks accept.
        _scopes = _grantable()
        minted = _mint_with(_scopes, name)
    _by_token[minted.token] = minted
    _stats["minted"] += 1
    return minted


@schemathesis.auth(refresh_interval=None)
class TokenPerOperation:
    def get(self, case, context):
        label = context.operation.label
        with _lock:
            current = _by_operation.get(label)
            if current is None or current.low(RESERVE):
                current = _by_operation[label] = _mint(f"schemathesis {label}")
            return current.token

    def set(self, case, data, context):
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}


@schemathesis.hook
def after_call(context, case, response):
    sent = response.request.headers.get("Authorization", "")
    holder = _by_token.get(sent[len("Bearer ") :]) if sent.startswith("Bearer ") else None
    with _lock:
        if holder is None:
            _stats["withoutMintedToken"] += 1
            return
        holder.used += 1
        _stats["mostOnOneToken"] = max(_stats["mostOnOneToken"], holder.used)
        # Only the platform budget is per token; the compatibility API's headers count per organisation.
        if case.operation.path.startswith("/platform/"):
            _read_budget(holder, response.headers)
        if case.operation.label == "PATCH /platform/organization" and response.status_code == 200:
            _reset_settings()
        if response.status_code == 429:
            with open(LOG_429, "a", encoding="utf-8") as log:
                body = response.content[:300].decode("utf-8", "replace")
                log.write(json.dumps({"operation": case.operation.label, "body": body}) + "\n")


@schemathesis.hook
def filter_failure(context, failure, case, response):
    if failure.code != "ST202" or response is None:
        return True
    answer = response.content[:2000].decode("utf-8", "replace")
    for says, _why, *only in REFUSALS_NO_SCHEMA_STATES:
        if says in answer and (not only or case.operation.label in only):
            with _lock:
                _stats["dropped"] += 1
            return False
    return True


@atexit.register
def _write_stats():
    with open(STATS, "w", encoding="utf-8") as out:
        json.dump(_stats, out)
