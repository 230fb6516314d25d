"""Plans: propose, two-person approval of the frozen bytes, execution requests, audit.

Every rule lives here, never only in a page or the API: the role and authorship rules
(backend/store/workflow.py), the sha256 the approver was shown, expiry, and a cluster
that still matches the plan's basis. A refusal is Forbidden (403) or Conflict (409) with
one line naming the rule; every state change writes an audit row in the same transaction.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn, TypeVar

from sqlalchemy import Connection
from sqlalchemy.exc import SQLAlchemyError

from backend.errors import BadInput, Conflict, Forbidden, NotFound, Unavailable
from backend.gateways.base import ClusterReader
from backend.model.bounds import MAX_LONG
from backend.model.snapshot import Snapshot
from backend.services import approval_status
from backend.services.plan_basis import ConfigsOf, TopicsOf, changes_since
from backend.services.plan_kinds import CLEAR as CLEAR  # the clear-throttles kind, for callers
from backend.services.plan_kinds import KINDS, REASSIGNMENT, kind_of
from backend.store import store as repo
from backend.store.approvals import DEFAULT as DEFAULT_APPROVAL
from backend.store.approvals import Progress, Requirement
from backend.store.audit import NOT_SEALED, append, canonical_json, row_alone
from backend.store.store import AUDIT_COMMENT_CHARS, AuditEntry, AuditPage, Decision, Plan, Store
from backend.store.workflow import OUTCOMES, SYSTEM, TRANSITIONS, Actor, authorize, next_state

MAX_PLAN_ID = 2**31 - 1  # plans.id is an INTEGER column: PostgreSQL's is 32 bits
MAX_TITLE_CHARS = 200
# a start time at most this far off: an executing plan waiting for its start holds its
# cluster's executor (one plan executes at a time there), so later plans wait behind it
MAX_NOT_BEFORE_DAYS = 30
# a decision's reason, kept whole in its audit row too; every GET of the plan returns them
MAX_COMMENT_CHARS = AUDIT_COMMENT_CHARS
AUDIT_PAGE_ROWS = 1000  # the most audit rows one page holds
MAX_NAME_CHARS = 200  # the user columns of plans, decisions and audit (schema.py)
# characters PostgreSQL text cannot hold (NUL) or that no one types into a title or a
# comment; a comment keeps its line breaks and tabs
_CONTROL = {chr(c) for c in range(32)} | {"\x7f"}
_COMMENT_CONTROL = _CONTROL - {"\n", "\r", "\t"}
MAX_CHANGES_NAMED = 5
# an approval that lost a race to another approval is tried again on the plan as it now is:
# each round one of the racers wins, so this bounds the approvers racing on one plan
MAX_APPROVAL_ROUNDS = 32
log = logging.getLogger(__name__)


def plan_sha256(kind: str, cluster: str, content: dict, throttle: int | None,
                throttle_mode: dict | None = None) -> str:
    """The sha256 an approver approves: of the canonical JSON of everything that runs
    (an adaptive throttle's mode and floor too; a fixed throttle's plan hashes as before)."""
    frozen = {"kind": kind, "cluster": cluster, "content": content, "throttle": throttle}
    if throttle_mode is not None:
        frozen["throttle_mode"] = throttle_mode
    return hashlib.sha256(canonical_json(frozen).encode()).hexdigest()


Service = TypeVar("Service", bound=Callable[..., Any])
REFUSED = "refused"  # the audit action of a Forbidden attempt


def audits_refusal(action: str) -> Callable[[Service], Service]:
    """For a service called as (store, actor, plan_id?, ...): a Forbidden it raises is
    written to the audit log first, as "refused" (who tried ``action`` on which plan, from
    where, and the rule that refused it), as a wrong password is: a role probing for
    rights it lacks leaves a trace. One row, however deep the refusal was raised."""
    def wrap(service: Service) -> Service:
        @functools.wraps(service)
        def run(store: Store, actor: Actor, *args: Any, **kwargs: Any) -> Any:
            try:
                return service(store, actor, *args, **kwargs)
            except Forbidden as e:
                if not getattr(e, "audited", False):
                    e.audited = True
                    _record_refusal(store, actor, action, args, e)
                raise
        return run  # type: ignore[return-value]
    return wrap


def _record_refusal(store: Store, actor: Actor, action: str, args: tuple,
                    refusal: Forbidden) -> None:
    """The refusal's audit row; a store that cannot take it is logged, and the user
    still hears the refusal (not the store's trouble)."""
    plan_id = args[0] if args and isinstance(args[0], int) else None
    try:
        store.record(datetime.now(UTC), {
            "user": actor.name, "action": REFUSED, "plan_id": plan_id,
            "address": actor.address, "detail": {"attempted": action, "reason": str(refusal)}})
    except (SQLAlchemyError, Unavailable) as e:
        log.error("refused %s by %s not audited: %s", action, actor.name,
                  str(e).splitlines()[0] if str(e) else type(e).__name__)


def may_propose(store: Store, actor: Actor, kind: str | None = None) -> None:
    """Forbidden (audited) for an actor who may not propose a plan of ``kind``: the API
    asks before a preview's work, which propose checks again. A clear-throttles plan
    takes its own right, and its refusal is audited as that attempt ("clear_throttles",
    as throttle_leftovers.propose_clear audits it) for every role: an approver's read
    "propose" and an operator's "clear_throttles" for the same request."""
    (_may_clear if kind == CLEAR else _may_propose)(store, actor)


@audits_refusal("propose")
def _may_propose(store: Store, actor: Actor) -> None:
    authorize(actor, "propose")


@audits_refusal(CLEAR)
def _may_clear(store: Store, actor: Actor) -> None:
    authorize(actor, CLEAR)


def _now(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(UTC)
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    return now.astimezone(UTC)


def _not_scheduled(field: str, what: str, kind: str) -> BadInput:
    """The refusal of a start time or window for a kind that runs when executed, naming
    the kinds that wait (the registry's ``scheduled``)."""
    waiting = [f"a {name}" for name, k in KINDS.items() if k.scheduled]
    verb = "waits" if len(waiting) == 1 else "wait"
    return BadInput(f"{field}: only {' or '.join(waiting)} {verb} for {what}, not a {kind}")


@audits_refusal("propose")
def propose(store: Store, actor: Actor, *, cluster: str, kind: str, content: dict,
            preview: dict, snapshot: Snapshot | None, title: str | None = None,
            throttle: int | None = None, throttle_mode: dict | None = None,
            outside_windows: bool = False, now: datetime | None = None,
            not_before: Any = None) -> Plan:
    """Store a plan computed against ``snapshot`` (the cluster now) as proposed (a
    clear-throttles plan: against the config values in its content; admins only), with
    the approval requirement its cluster's policy gives its frozen numbers.
    ``outside_windows``: a reassignment that may start batches outside the cluster's
    execution windows (an emergency); signed in its content, and the approval rules'
    ``outside_window`` condition reads it.
    ``throttle_mode``: {"mode": "adaptive", "floor": bytes/s} runs it between the floor
    and ``throttle`` (the ceiling) by the traffic it measures (backend/executor/adaptive.py);
    None or {"mode": "fixed"}: at ``throttle``.
    ``not_before``: a reassignment starts no batch before this time (ISO 8601 with a zone,
    or epoch seconds); it goes into the content, so into the sha256 the approver signs."""
    authorize(actor, "propose")
    _check_name(actor)
    plan_kind = KINDS.get(kind)
    if plan_kind is not None and plan_kind.propose_right is not None:
        authorize(actor, plan_kind.propose_right)
    if plan_kind is None:
        raise BadInput(f"kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    if not isinstance(cluster, str) or not cluster.strip():
        raise BadInput("cluster: required")
    if not isinstance(content, dict):
        raise BadInput("plan: expected a JSON object")
    if throttle is not None and (isinstance(throttle, bool) or not isinstance(throttle, int)
                                 or not 0 < throttle <= MAX_LONG):
        raise BadInput(f"throttle: expected a positive integer (bytes/s) up to Kafka's "
                       f"largest value (2^63-1), got {str(throttle)[:30]}")
    now = _now(now)
    if not_before not in (None, ""):
        if not plan_kind.scheduled:
            raise _not_scheduled("not_before", "a start time", kind)
        start = parse_time(not_before, "not_before")
        if start <= now.timestamp():  # a typo of the day or the zone, most likely
            raise BadInput(f"not_before: {str(not_before).strip()[:40]} is already past: give "
                           "a later time, or leave it empty to start once approved")
        if start > now.timestamp() + MAX_NOT_BEFORE_DAYS * 86400:
            raise BadInput(f"not_before: {str(not_before).strip()[:40]} is more than "
                           f"{MAX_NOT_BEFORE_DAYS} days away: propose it nearer the time (a "
                           f"plan waiting for its start holds its cluster's executor, and "
                           f"plans executed after it wait behind it)")
        content = {**content, "not_before": start}
    if outside_windows not in (False, None):
        if outside_windows is not True:
            raise BadInput(f"outside_windows: expected true or false, got "
                           f"{str(outside_windows)[:20]}")
        if not plan_kind.scheduled:
            raise _not_scheduled("outside_windows", "a window", kind)
        content = {**content, "outside_windows": True}
    throttle_mode = checked_throttle_mode(throttle_mode, throttle,
                                          plan_kind.throttled)
    try:
        sha = plan_sha256(kind, cluster, content, throttle, throttle_mode)
    except (TypeError, ValueError) as e:
        raise BadInput(f"plan: not JSON ({e})") from None
    basis = plan_kind.basis(snapshot, content)
    policy = store.approval.of(cluster)
    requirement = policy.requirement(
        approval_status.facts(kind, content, preview, basis,
                              content.get("outside_windows") is True, policy.reads))
    title = _checked_text(title or "", "title", MAX_TITLE_CHARS, _CONTROL).strip() \
        or plan_kind.title(content)
    if plan_kind.name == REASSIGNMENT and preview.get("unresolved") \
            and not title.startswith("partial"):  # the queue shows titles only
        title = f"partial: {title}"[:MAX_TITLE_CHARS]
    row = {"kind": kind, "cluster": cluster, "title": title, "author": actor.name,
           "created_at": now, "expires_at": now + timedelta(hours=store.expiry_hours),
           "updated_at": now, "state": "proposed", "content": content, "sha256": sha,
           "basis": basis, "preview": preview, "throttle": throttle,
           "cancel_requested_at": None, "version": 1, "approval": requirement.to_dict(),
           "throttle_mode": throttle_mode}
    with store.write() as conn:
        plan_id = repo.insert_plan(conn, **row)
        append(conn, at=now, user=actor.name, action="propose", plan_id=plan_id,
               before=None, after="proposed", address=actor.address,
               detail={"sha256": sha, "approval": row["approval"]})
    # the row as stored, not read back: a 100k-move plan's content and basis are megabytes
    # of JSON to decode again (what get reads back equals these values)
    return Plan(id=plan_id, **row)


def parse_time(value: Any, where: str) -> float:
    """Epoch seconds from an ISO 8601 date-time with its zone or from epoch seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e11:
        return float(value)
    if isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.strip())
        except ValueError:
            when = None
        if when is not None and when.tzinfo is not None:
            return when.timestamp()
    raise BadInput(f"{where}: expected a date-time with its zone such as "
                   f"2026-12-01T22:00+01:00 (or epoch seconds), got {str(value)[:40]!r}")


def start_terms(store: Store, plan: Plan) -> tuple[float | None, bool]:
    """When a reassignment may start at the earliest and whether it may run outside the
    cluster's execution windows (both signed with it), read from the content already
    loaded or from the store's two fields."""
    if plan.content is not None:
        return plan.content.get("not_before"), plan.content.get("outside_windows") is True
    with store.read() as conn:
        return repo.plan_start_terms(conn, plan.id)


def checked_throttle_mode(mode: Any, ceiling: int | None, throttled: bool = True) -> dict | None:
    """A proposal's throttle mode as frozen: None (fixed) or {"mode": "adaptive", "floor"};
    BadInput naming what is wrong (an adaptive throttle needs a ceiling and a floor at or
    below it)."""
    if mode is None:
        return None
    if not isinstance(mode, dict) or mode.get("mode") not in ("fixed", "adaptive") \
            or set(mode) - {"mode", "floor"}:
        raise BadInput('throttle_mode: expected {"mode": "fixed"} or {"mode": "adaptive", '
                       f'"floor": bytes/s}}, got {str(mode)[:60]}')
    if mode["mode"] == "fixed":
        return None
    if not throttled:
        raise BadInput("throttle_mode: this kind of plan has no throttle to adapt")
    if ceiling is None:
        raise BadInput("throttle_mode: an adaptive throttle needs a throttle (its ceiling)")
    floor = mode.get("floor")
    if isinstance(floor, bool) or not isinstance(floor, int) or not 0 < floor <= ceiling:
        raise BadInput(f"throttle_mode.floor: expected a positive integer (bytes/s) at most "
                       f"the throttle {ceiling}, got {str(floor)[:30]}")
    return {"mode": "adaptive", "floor": floor}


def get(store: Store, plan_id: int) -> Plan:
    """The plan with its content, basis and decisions; NotFound when there is none."""
    return _load(store, plan_id)


def summary(store: Store, plan_id: int) -> Plan:
    """The plan and its decisions without content and basis (None): what its page paints
    first, without decoding megabytes of a 100k-move plan's JSON."""
    return _load(store, plan_id, content=False, basis=False)


def basis_of(store: Store, plan_id: int) -> dict | None:
    """The plan's basis (plan_basis: the replicas it was computed against) without its
    content, a 100k-move plan's megabytes; NotFound when there is no such plan."""
    return _load(store, plan_id, content=False).basis


def is_plan_id(text: str) -> bool:
    """``text`` is a plan id as a URL carries it: ASCII digits, 1..MAX_PLAN_ID."""
    return text.isascii() and text.isdigit() and 0 < int(text) <= MAX_PLAN_ID


def _load(store: Store, plan_id: int, content: bool = True, basis: bool = True) -> Plan:
    if not 0 < plan_id <= MAX_PLAN_ID:  # no such row, and past what the column holds
        raise NotFound(f"no plan {plan_id}")
    with store.read() as conn:
        plan = repo.load_plan(conn, plan_id, content, basis)
    if plan is None:
        raise NotFound(f"no plan {plan_id}")
    return plan


def list_plans(store: Store, cluster: str | None = None, state: str | None = None,
               limit: int = 500) -> list[Plan]:
    """Newest first; content and basis are left out (``get`` has them)."""
    with store.read() as conn:
        return repo.query_plans(conn, cluster, state, limit)


def titles(store: Store, ids: set[int]) -> dict[int, str]:
    """Plan id -> title, for the plans an answer names."""
    with store.read() as conn:
        return repo.plan_titles(conn, ids)


@audits_refusal("approve")
def approve(store: Store, actor: Actor, plan_id: int, *, sha256: str, comment: str = "",
            topics_of: TopicsOf, configs_of: ConfigsOf | None = None,
            now: datetime | None = None) -> Plan:
    """Approve exactly the bytes the approver was shown, for the cluster as it still is:
    one of the approvals its stored requirement asks for. The plan stays proposed until
    they are all in, then the approval that completes them makes it approved (exactly
    one, however many approve at once: a lost race is retried on the plan as it is)."""
    comment = _comment(comment)
    now = _now(now)
    plan = _load(store, plan_id, content=False)  # the basis is checked, not the moves
    checked = False
    for _ in range(MAX_APPROVAL_ROUNDS):
        authorize(actor, "approve", plan.author)
        _check_state(plan, "approve")
        _check_unexpired(plan, now)
        _check_shown(plan, sha256, "approved")
        progress = plan.progress()
        refusal = progress.refusal(actor)
        if refusal is not None:
            raise (Conflict if actor.name in progress.approvers else Forbidden)(
                f"plan {plan.id}: {refusal}")
        if not checked:  # the cluster is read once; a retry re-reads only the plan
            _check_basis(plan, topics_of, configs_of)
            checked = True
        after = progress.after(actor)
        # the sealed row says what was approved and in which role: what the start checks
        # (execution_doubt), where the decisions table could be written past the services
        detail = {"sha256": sha256, "role": actor.role}
        if progress.requirement != DEFAULT_APPROVAL:
            detail |= {"rule": after.requirement.rule, "approvals": len(after.approvers),
                       "required": after.requirement.approvers}
        changed = _try_change(store, actor, plan, "approve", now,
                              decision=("approve", comment, sha256), detail=detail,
                              target=None if after.met else plan.state)
        if changed is not None:
            return changed
        plan = _load(store, plan_id, content=False, basis=False)
    _lost(store, plan)


@audits_refusal("reject")
def reject(store: Store, actor: Actor, plan_id: int, *, comment: str = "",
           sha256: str | None = None, now: datetime | None = None) -> Plan:
    """Reject a proposed plan (someone other than its author)."""
    comment = _comment(comment)
    if sha256 is not None:  # stored with the decision, in a 64-character column
        _checked_text(sha256, "sha256", 64, _CONTROL)
    now = _now(now)
    plan = summary(store, plan_id)
    authorize(actor, "reject", plan.author)
    _check_state(plan, "reject")
    if sha256 is not None:  # the decision names the bytes it was about: they must be these
        _check_shown(plan, sha256, "rejected")
    if not comment.strip():  # the author proposes again from it: a bare "no" says nothing
        raise BadInput("comment: a rejection needs a reason (what the author should change)")
    return _change(store, actor, plan, "reject", now, decision=("reject", comment, sha256))


@audits_refusal("withdraw")
def withdraw(store: Store, actor: Actor, plan_id: int, *, comment: str = "",
             now: datetime | None = None) -> Plan:
    """The author takes back a plan nobody has decided yet; a withdrawal is no decision,
    so its reason (``comment``) is kept in its audit row."""
    now = _now(now)
    comment = _comment(comment)
    plan = summary(store, plan_id)
    authorize(actor, "withdraw", plan.author)
    _check_state(plan, "withdraw")
    return _change(store, actor, plan, "withdraw", now,
                   detail={"comment": comment} if comment else None)


@audits_refusal("execute")
def execute(store: Store, actor: Actor, plan_id: int, *, gateway: ClusterReader | None,
            topics_of: TopicsOf, configs_of: ConfigsOf | None = None, migration: bool = False,
            now: datetime | None = None) -> Plan:
    """Execute, for every kind of plan (the API's and the plan page's): who asks may
    execute (a refused viewer is audited, before any question about the cluster), then
    the plan's kind says whether this cluster (``gateway``) can run it the way asked
    (``migration``: a shrink's migration instead of its stages), then request_execute."""
    plan = _load(store, plan_id, content=False)
    authorize(actor, "execute", plan.author)
    kind = kind_of(plan.kind)
    kind.check_execute(plan if kind.large else get(store, plan_id), gateway, migration)
    return request_execute(store, actor, plan_id, topics_of=topics_of, configs_of=configs_of,
                           now=now)


@audits_refusal("execute")
def request_execute(store: Store, actor: Actor, plan_id: int, *, topics_of: TopicsOf,
                    configs_of: ConfigsOf | None = None, now: datetime | None = None) -> Plan:
    """approved -> executing, after re-checking expiry and the cluster (the executor
    then runs it)."""
    now = _now(now)
    plan = _load(store, plan_id)  # the moves too: they must hash to the approved sha256
    authorize(actor, "execute", plan.author)
    _check_state(plan, "execute")
    _check_unexpired(plan, now)
    doubt = execution_doubt(store, plan, "approved")
    if doubt is not None:
        if summary(store, plan_id).version != plan.version:  # another Execute came first
            _lost(store, plan)
        raise Conflict(doubt.cause)
    _check_basis(plan, topics_of, configs_of)
    return _change(store, actor, plan, "execute", now)


# a plan's audit rows that tell its state (its proposal, decisions, execute and end), and
# the executor's first step of a run (backend/executor/runs.py)
TRAIL_ACTIONS = ("propose", *TRANSITIONS, "execution_started")


@dataclass(frozen=True)
class Doubt:
    """Why a plan may not run, in one line. ``unsealed``: only because one of its audit
    rows is not sealed, which on PostgreSQL holds for a moment after every commit
    (Store.write seals the rows once the transaction has committed)."""

    cause: str
    unsealed: bool = False


def execution_doubt(store: Store, plan: Plan, state: str, trail: bool = True) -> Doubt | None:
    """Why ``plan`` (loaded with its content) may not run, None when it may: its content
    must hash to its sha256 (plan_sha256, as propose computed it), and, with ``trail``,
    its own sealed audit rows (backend/store/audit.py row_alone) must show it proposed
    with that sha256, approved by as many users other than its proposer as the
    requirement its proposal recorded asks for (one, for a plan proposed before
    requirements were: the stored column is the plans table's, which is not sealed),
    and now in ``state`` (approved at the Execute request, executing at its start, with no
    earlier start). Someone who can write the database but not read the audit key can
    change the plans table, not these rows. Each approve row holds the sha256 approved
    and the approver's role, so the rule's roles and admin are checked too (rows written
    before they did: the proposal's sha256 stands for what was approved, roles unknown)."""
    try:
        sha = plan_sha256(plan.kind, plan.cluster, plan.content, plan.throttle,
                          plan.throttle_mode)
    except (TypeError, ValueError):  # not JSON: edited outside Railyard
        sha = None
    if sha != plan.sha256:
        return Doubt(f"plan {plan.id}'s content does not hash to the sha256 its approvers "
                     f"signed")
    if not trail:
        return None
    rows = audit_entries(store, plan=plan.id, actions=TRAIL_ACTIONS)
    for e in rows:
        problem = row_alone(store.keys, asdict(e))
        if problem is not None:
            return Doubt(f"plan {plan.id}'s audit row {e.id} ({e.action} by {e.user}): "
                         f"{problem}", unsealed=problem == NOT_SEALED and store.postgres)
    if not rows or rows[0].action != "propose":
        return Doubt(f"plan {plan.id} has no proposal in its audit trail")
    proposal = rows[0]
    recorded = proposal.detail if isinstance(proposal.detail, dict) else {}
    if recorded.get("sha256") != plan.sha256:
        return Doubt(f"plan {plan.id}'s sha256 is not the one its proposal in the audit "
                     f"trail recorded")
    requirement = Requirement.from_dict(recorded.get("approval"))
    roles: dict[str, str | None] = {}  # approver -> role, as their approve rows say
    for e in rows:
        said = e.detail if isinstance(e.detail, dict) else {}
        if e.action != "approve" or e.user == proposal.user or e.user in roles:
            continue
        if said.get("sha256", plan.sha256) != plan.sha256:  # rows before 2026-11-29: none
            return Doubt(f"plan {plan.id}'s approval by {e.user} (audit row {e.id}) is of "
                         f"sha256 {str(said['sha256'])[:12]}..., not the plan's")
        roles[e.user] = said.get("role")
    if len(roles) < requirement.approvers:
        return Doubt(f"plan {plan.id} has {len(roles)} approval{'s' * (len(roles) != 1)} "
                     f"in its audit trail, its rule asks for {requirement.approvers}")
    if None not in roles.values():  # each row says its role: the rule's roles and admin
        progress = Progress(requirement, tuple(roles), tuple(r or "" for r in roles.values()))
        odd = [u for u, r in roles.items() if r not in requirement.roles]
        if odd or not progress.met:
            return Doubt(f"plan {plan.id}'s approvals in its audit trail do not meet rule "
                         f"'{requirement.rule}': {progress.text()}"
                         + (f" ({', '.join(odd)} approved in a role it does not count)"
                            if odd else ""))
    last = [e for e in rows if e.action != "execution_started"][-1]
    if last.after != state:
        return Doubt(f"plan {plan.id} is {plan.state} but its audit trail says it is "
                     f"{last.after}")
    started = next((e for e in rows if e.action == "execution_started" and e.id > last.id),
                   None)
    if started is not None:
        return Doubt(f"plan {plan.id} already started (audit row {started.id}): its "
                     f"execution row is gone")
    return None


@audits_refusal("cancel")
def request_cancel(store: Store, actor: Actor, plan_id: int, *,
                   now: datetime | None = None) -> Plan:
    """Ask the executor to stop an executing plan; it then finishes it as cancelled."""
    now = _now(now)
    plan = summary(store, plan_id)
    authorize(actor, "cancel", plan.author)
    _check_name(actor)
    if plan.state != "executing":
        raise Conflict(f"plan {plan.id} is {plan.state}: only an executing plan can be "
                       f"cancelled")
    if plan.cancel_requested_at is not None:
        return plan
    if not store.transition(plan.id, plan.state, plan.version, state=plan.state, at=now,
                            cancel_requested=True, audit_row={
                                "user": actor.name, "action": "cancel-requested",
                                "before": plan.state, "after": plan.state,
                                "address": actor.address}):
        _lost(store, plan)
    return replace(plan, version=plan.version + 1, updated_at=now, cancel_requested_at=now)


@audits_refusal("finish")
def finish(store: Store, actor: Actor, plan_id: int, outcome: str, *, detail: Any = None,
           now: datetime | None = None) -> Plan:
    """The executor's end of a run: executing -> completed, failed or cancelled."""
    if outcome not in OUTCOMES:
        raise BadInput(f"outcome: expected one of {', '.join(OUTCOMES)}, got {outcome!r}")
    now = _now(now)
    plan = summary(store, plan_id)
    authorize(actor, "execute", plan.author)
    _check_state(plan, OUTCOMES[outcome])
    return _change(store, actor, plan, OUTCOMES[outcome], now, detail=detail)


def record(store: Store, actor: Actor, plan_id: int | None, action: str, *,
           detail: Any = None, now: datetime | None = None,
           also: Callable[[Connection], bool] | None = None) -> bool:
    """An event that changes no plan's state (an executor step, a throttle set), with
    ``also`` the change it records in its transaction (Store.record); whether it was
    written (False: ``also`` matched nothing)."""
    if action in TRANSITIONS or action in ("propose", "cancel-requested"):
        raise ValueError(f"'{action}' is a state change: use its own function")
    return store.record(_now(now), {"user": actor.name, "action": action,
                                    "plan_id": plan_id, "address": actor.address,
                                    "detail": detail}, also=also)


def expire_due(store: Store, now: datetime | None = None) -> list[int]:
    """Move proposed and approved plans past their expiry to expired; their ids."""
    now = _now(now)
    with store.read() as conn:
        due = repo.due_plans(conn, TRANSITIONS["expire"][0], now)
    return [plan_id for plan_id, state, version in due
            if store.transition(plan_id, state, version, state="expired", at=now, audit_row={
                "user": SYSTEM.name, "action": "expire", "before": state,
                "after": "expired"})]


class ExpirySweeper(threading.Thread):
    """Moves overdue plans to expired every ``interval`` seconds (approve and execute
    refuse them anyway; this makes lists and the audit log say so). A store that does
    not answer is retried at the next sweep."""

    def __init__(self, store: Store, interval: float = 60.0) -> None:
        super().__init__(name="plan-expiry", daemon=True)
        self.store, self.interval = store, interval
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(self.interval):
            try:
                expire_due(self.store)
            except SQLAlchemyError as e:
                log.warning("plan expiry sweep failed: %s", str(e).splitlines()[0])

    def stop(self) -> None:
        self._halt.set()


def audit_entries(store: Store, *, plan: int | None = None, user: str | None = None,
                  since: datetime | None = None, until: datetime | None = None,
                  cluster: str | None = None, actions: tuple[str, ...] | None = None,
                  limit: int | None = None) -> list[AuditEntry]:
    """Every matching audit row, oldest first (the first ``limit`` when given), read page
    by page: a window long past is read whole however many rows came after it."""
    out: list[AuditEntry] = []
    after = None
    with store.read() as conn:
        while limit is None or len(out) < limit:
            page = repo.audit_page(conn, plan=plan, user=user, since=since, until=until,
                                   cluster=cluster, actions=actions, after=after,
                                   limit=AUDIT_PAGE_ROWS)
            out += page.entries
            if page.next is None:
                break
            after = page.next
    return out if limit is None else out[:limit]


def audit_page(store: Store, *, plan: int | None = None, user: str | None = None,
               since: datetime | None = None, after: int | None = None,
               newest_first: bool = False, limit: int = AUDIT_PAGE_ROWS) -> AuditPage:
    """A page of audit rows in chain order with the count of all that match: following
    ``next`` reaches every row (a plan's trail from its proposal on)."""
    with store.read() as conn:
        return repo.audit_page(conn, plan=plan, user=user, since=since, after=after,
                               newest_first=newest_first, limit=limit)


# ---- rules ---------------------------------------------------------------------------
def _checked_text(value: Any, field: str, limit: int, refused: set[str]) -> str:
    """A title or comment as stored: a string of at most ``limit`` characters without
    control characters (PostgreSQL refuses NUL: a 500 rather than a reason)."""
    if not isinstance(value, str):
        raise BadInput(f"{field}: expected a string, got {type(value).__name__}")
    if len(value) > limit:
        raise BadInput(f"{field}: {len(value):,} characters, more than the {limit:,} "
                       f"allowed")
    bad = next((c for c in value if c in refused), None)
    if bad is not None:
        raise BadInput(f"{field}: control character {bad!r} at position "
                       f"{value.index(bad)}: give plain text")
    return value


def _comment(comment: Any) -> str:
    return _checked_text(comment or "", "comment", MAX_COMMENT_CHARS, _COMMENT_CONTROL)


def _check_name(actor: Actor) -> None:
    """The user's name fits the store's user columns (a proxy's header may send any)."""
    if len(actor.name) > MAX_NAME_CHARS:
        raise BadInput(f"user name: {len(actor.name)} characters, more than the "
                       f"{MAX_NAME_CHARS} the plan store keeps")


def _check_state(plan: Plan, action: str) -> None:
    if next_state(action, plan.state) is None:
        sources = " or ".join(sorted(TRANSITIONS[action][0]))
        raise Conflict(f"plan {plan.id} is {plan.state}, not {sources}: it cannot be "
                       f"{_past(action)} now")


def _check_unexpired(plan: Plan, now: datetime) -> None:
    if now >= plan.expires_at:
        raise Conflict(f"plan {plan.id} expired at {plan.expires_at.isoformat()}: "
                       f"re-propose it")


def stale(store: Store, plan_id: int, topics_of: TopicsOf,
          configs_of: ConfigsOf | None = None) -> str | None:
    """Why approving or executing plan ``plan_id`` would be refused now for a cluster that
    changed under its basis; None when the basis holds or the plan is past both. Read
    only: the plan's page says it before anyone clicks (an approver saw "Breaks nothing"
    on a plan whose moves another plan had made, and learnt it only from Approve)."""
    if summary(store, plan_id).state not in ("proposed", "approved"):
        return None  # without reading its basis, megabytes for a 100k-move plan
    plan = _load(store, plan_id, content=False)  # the basis is checked, not the moves
    if plan.state not in ("proposed", "approved"):
        return None
    return basis_refusal(plan, topics_of, configs_of)


def basis_refusal(plan: Plan, topics_of: TopicsOf,
                  configs_of: ConfigsOf | None = None) -> str | None:
    """What Approve and Execute answer for ``plan`` (its basis loaded) on the cluster
    ``topics_of`` shows: the changes under its basis, or None when it holds; the lists'
    stale marks (services.plan_queue) say it in the same words."""
    changes = changes_since(plan.cluster, plan.basis, topics_of, configs_of)
    if not changes:
        return None
    named = "; ".join(changes[:MAX_CHANGES_NAMED])
    more = len(changes) - MAX_CHANGES_NAMED
    return (f"cluster {plan.cluster} changed since plan {plan.id} was proposed: "
            f"{named}{f' (and {more} more)' if more > 0 else ''}: re-propose")


def _check_basis(plan: Plan, topics_of: TopicsOf, configs_of: ConfigsOf | None) -> None:
    refusal = basis_refusal(plan, topics_of, configs_of)
    if refusal is not None:
        raise Conflict(refusal)


def _check_shown(plan: Plan, sha256: str, decided: str) -> None:
    """Conflict unless ``sha256`` is the plan's: the decision was made on other bytes."""
    if sha256 != plan.sha256:
        raise Conflict(f"the sha256 you {decided} ({str(sha256)[:12]}...) is not plan "
                       f"{plan.id}'s ({plan.sha256[:12]}...): reload the plan and review it")


def _past(action: str) -> str:
    return {"approve": "approved", "reject": "rejected", "withdraw": "withdrawn",
            "execute": "executed", "expire": "expired", "complete": "completed",
            "fail": "failed", "cancel": "cancelled"}[action]


def _change(store: Store, actor: Actor, plan: Plan, action: str, now: datetime,
            decision: tuple[str, str, str | None] | None = None, detail: Any = None) -> Plan:
    """One transition: conditional update, decision row, audit row, in one transaction;
    Conflict when someone changed the plan first."""
    changed = _try_change(store, actor, plan, action, now, decision, detail)
    if changed is None:
        _lost(store, plan)
    return changed


def _try_change(store: Store, actor: Actor, plan: Plan, action: str, now: datetime,
                decision: tuple[str, str, str | None] | None = None, detail: Any = None,
                target: str | None = None) -> Plan | None:
    """``_change``, None when the plan changed first; ``target``: the state it leads to
    when not the action's (an approval that leaves the plan proposed)."""
    target = target or TRANSITIONS[action][1]
    _check_name(actor)
    made, row = (), None
    if decision is not None:
        kind, comment, sha = decision
        row = {"user": actor.name, "decision": kind, "comment": comment or "", "sha256": sha,
               "role": actor.role}
        made = (Decision(actor.name, kind, comment or "", sha, now, actor.role),)
    # an approved plan has expiry_hours from its approval to be started (issue 28: not
    # from its proposal, nor from the window it waits for)
    expires = now + timedelta(hours=store.expiry_hours) if target == "approved" else None
    if not store.transition(plan.id, plan.state, plan.version, state=target, at=now,
                            decision=row, expires_at=expires, audit_row={
                                "user": actor.name, "action": action,
                                "before": plan.state, "after": target,
                                "address": actor.address, "detail": detail}):
        return None
    # the row is exactly this now: the update matched this version and nothing else changed
    return replace(plan, state=target, version=plan.version + 1, updated_at=now,
                   decisions=plan.decisions + made, expires_at=expires or plan.expires_at)


def _lost(store: Store, plan: Plan) -> NoReturn:
    """Someone changed the plan between our read and our update: refuse, saying how."""
    with store.read() as conn:
        now = repo.load_plan(conn, plan.id, content=False, basis=False)
    state = now.state if now is not None else "gone"
    raise Conflict(f"plan {plan.id} changed while you acted (it is now {state}): someone "
                   f"else decided first")
