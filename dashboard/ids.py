"""Every component id of the dashboard, in one place, so pages, callbacks and tests agree.

Ids are plain strings prefixed by their page; tests find elements with ``#<id>``.
"""

# app shell
URL = "url"
CLUSTER_PICKER = "cluster-picker"
NAV = "nav"
UNKNOWN_CLUSTER = "unknown-cluster"  # the URL names a cluster the config lacks
JUMP_TO_DATA = "jump-to-data"  # link to where a cluster's metrics are (monitor pages)
APP_ERROR = "app-error"  # one line when a callback failed in a way no page handled
ACCOUNT = "account"  # who is signed in (dashboard/account.py)
ACCOUNT_USER = "account-user"
ACCOUNT_ROLE = "account-role"
ACCOUNT_SIGN_OUT = "account-sign-out"
AUTH_BANNER = "auth-banner"  # auth: none


def nav_link(label: str) -> str:
    """The id of the navigation link to a page (nav-overview, nav-brokers, ...)."""
    return f"nav-{label.lower()}"

# time-range control and view state (monitoring pages)
VIEW = "view"  # the page's view state {cluster, range, from, to}; the URL mirrors it
VIEW_POPPED = "view-popped"  # the URL Back or Forward went to, when the page stays (railyard.js)
RANGE = "range"
RANGE_FROM = "range-from"
RANGE_TO = "range-to"
RANGE_APPLY = "range-apply"
RANGE_ABS = "range-abs"
RANGE_ERROR = "range-error"
REFRESH = "refresh"

# overview
OV_BANNERS = "ov-banners"
OV_LIMIT_BANNERS = "ov-limit-banners"
OV_METRIC_BANNERS = "ov-metric-banners"
OV_HOLD_BANNERS = "ov-hold-banners"  # executing plans a guard or a window holds
OV_CARDS = "ov-cards"
OV_HEALTH = "ov-health"
OV_BROKER_BARS = "ov-broker-bars"
OV_HEALTH_SERIES = "ov-health-series"
OV_PARTITIONS_SERIES = "ov-partitions-series"
OV_LEFTOVERS = "ov-leftovers"  # leftover throttle configs, now
OV_LEFTOVER_ROWS = "ov-leftover-rows"  # the configs listed, as the admin saw them
OV_LEFTOVER_TABLE = "ov-leftover-table"
OV_LEFTOVER_SHOWN = "ov-leftover-shown"  # a digest of what the list shows: unchanged, not redrawn
OV_CLEAR = "ov-clear"  # admins: propose a clear-throttles plan of the listed configs
OV_CLEAR_RESULT = "ov-clear-result"

# brokers
BR_BANNERS = "br-banners"
BR_GRID = "br-grid"
BR_SELECTED = "br-selected"
BR_BYTES = "br-bytes"
BR_LAG = "br-lag"
BR_PARTITIONS = "br-partitions"

# throttles
TH_BANNERS = "th-banners"
TH_ETA = "th-eta"
TH_RATES = "th-rates"
TH_RATES_SERIES = "th-rates-series"
TH_LAG = "th-lag"
TH_REASSIGN_BYTES = "th-reassign-bytes"

# quotas
QU_BANNERS = "qu-banners"
QU_THROTTLED_NOW = "qu-throttled-now"
QU_TOKENS = "qu-tokens"
QU_TOKENS_SERIES = "qu-tokens-series"
QU_RATE = "qu-rate"
QU_THROTTLE = "qu-throttle"

# what-if
WI_STATE = "wi-state"
WI_BANNERS = "wi-banners"
WI_TABS = "wi-tabs"
# limits
WI_LIM_ACTION = "wi-lim-action"
WI_LIM_TOPIC = "wi-lim-topic"
WI_LIM_PARTITIONS = "wi-lim-partitions"
WI_LIM_RF = "wi-lim-rf"
WI_LIM_MBP = "wi-lim-max-broker-partitions"
WI_LIM_MP = "wi-lim-max-partitions"
WI_LIM_RUN = "wi-lim-run"
WI_LIM_ERROR = "wi-lim-error"
WI_LIM_VERDICT = "wi-lim-verdict"
WI_LIM_BARS = "wi-lim-bars"
WI_LIM_PLACEMENT = "wi-lim-placement"
# throttle
WI_TH_PLAN = "wi-th-plan"
WI_TH_PLAN_NAME = "wi-th-plan-name"
WI_TH_RATE = "wi-th-rate"
WI_TH_RATE_EXACT = "wi-th-rate-exact"  # the throttle typed in MB/s, kept in step
WI_TH_CAPACITY = "wi-th-capacity"
WI_TH_ERROR = "wi-th-error"
WI_TH_SUMMARY = "wi-th-summary"
WI_TH_BAND = "wi-th-band"
WI_TH_ETA = "wi-th-eta"
# quota
WI_QU_REQUESTS = "wi-qu-requests"
WI_QU_REQUESTS_NAME = "wi-qu-requests-name"
WI_QU_RATE = "wi-qu-rate"
WI_QU_SAMPLES = "wi-qu-samples"
WI_QU_WINDOW = "wi-qu-window"
WI_QU_RUN = "wi-qu-run"
WI_QU_ERROR = "wi-qu-error"
WI_QU_SUMMARY = "wi-qu-summary"
WI_QU_BUCKET = "wi-qu-bucket"
# sweeps
WI_SW_KIND = "wi-sw-kind"
WI_SW_GRID = "wi-sw-grid"
WI_SW_WORKLOAD = "wi-sw-workload"
WI_SW_WORKLOAD_FIELD = "wi-sw-workload-field"  # shown for limits sweeps only
WI_SW_END = "wi-sw-end"  # fleet sweeps: history up to (UTC)
WI_SW_END_FIELD = "wi-sw-end-field"
WI_SW_RUN = "wi-sw-run"
WI_SW_CANCEL = "wi-sw-cancel"
WI_SW_TOKEN = "wi-sw-token"
WI_SW_PROGRESS = "wi-sw-progress"
WI_SW_PROGRESS_TEXT = "wi-sw-progress-text"
WI_SW_RESULT = "wi-sw-result"
WI_SW_ERROR = "wi-sw-error"
WI_SW_CHART = "wi-sw-chart"
WI_SW_TABLE = "wi-sw-table"
WI_SW_DOWNLOAD = "wi-sw-download"
WI_SW_DOWNLOAD_BUTTON = "wi-sw-download-button"
WI_SW_ROWS = "wi-sw-rows"

# plans: the preview block (reassignments, shrinks and a plan's own view share it)
PLAN_CARDS = "plan-cards"
PLAN_WORDS = "plan-words"
PLAN_BARS = "plan-bars"
PLAN_GRID = "plan-grid"
PLAN_GRID_BOX = "plan-grid-box"
PLAN_FILTER = "plan-filter"
PLAN_TOKEN = "plan-token"  # which draft (or stored plan) the grid pages through
PLAN_JSON_BUTTON = "plan-json-button"
PLAN_JSON_DOWNLOAD = "plan-json-download"
PLAN_COMMAND = "plan-command"

# reassignments
RA_SOURCE = "ra-source"
RA_GOAL = "ra-goal"
RA_BROKERS = "ra-brokers"
RA_UTILIZATION = "ra-utilization"
RA_THRESHOLD = "ra-threshold"
RA_GOAL_FIELDS = "ra-goal-fields"
RA_UPLOAD_FIELDS = "ra-upload-fields"
RA_UPLOAD = "ra-upload"
RA_UPLOAD_NAME = "ra-upload-name"
RA_UPLOAD_TOKEN = "ra-upload-token"
RA_THROTTLE = "ra-throttle"
RA_RUN = "ra-run"
RA_ERROR = "ra-error"
RA_BANNERS = "ra-banners"
RA_PREVIEW = "ra-preview"

# shrinks
SH_TOPIC = "sh-topic"
SH_PARTITIONS = "sh-partitions"
SH_DELAY = "sh-delay"
SH_RUN = "sh-run"
SH_ERROR = "sh-error"
SH_BANNERS = "sh-banners"
SH_PREVIEW = "sh-preview"
SH_ON_CLUSTER = "sh-on-cluster"  # what executing a shrink does on this cluster

PLAN_TITLE = "plan-title-input"
PLAN_NOT_BEFORE = "plan-not-before-input"  # a reassignment starts no batch before it
PLAN_OUTSIDE_WINDOWS = "plan-outside-windows"  # it may start batches outside the windows
PLAN_PROPOSE = "plan-propose"
PLAN_PROPOSE_ERROR = "plan-propose-error"
PLAN_ADAPTIVE = "plan-adaptive"  # propose with an adaptive throttle (the throttle: its ceiling)
PLAN_FLOOR = "plan-floor"  # the adaptive throttle's floor, MB/s

# a plan's own view (/plans/<id>)
PV_PLAN = "pv-plan"  # {"id", "sha256"}: the plan and the sha256 this page showed
PV_BANNERS = "pv-banners"
PV_STATE = "pv-state"
PV_FACTS = "pv-facts"
PV_CLEAR_CONFIGS = "pv-clear-configs"  # a clear-throttles plan's configs
PV_SHA = "pv-sha"
PV_APPROVALS = "pv-approvals"  # its approval requirement and approvals so far
PV_COMMENT = "pv-comment"
PV_COMMENT_FIELD = "pv-comment-field"  # its label: hidden with the buttons it goes with
PV_APPROVE = "pv-approve"
PV_REJECT = "pv-reject"
PV_WITHDRAW = "pv-withdraw"
PV_RESULT = "pv-result"
PV_NOTE = "pv-note"  # what deciding means for the signed-in user now
PV_DECISIONS = "pv-decisions"
PV_AUDIT = "pv-audit"
PV_JSON = "pv-json"  # the exact JSON, filled in when first opened
PV_JSON_OPEN = "pv-json-open"  # its summary line: clicking it opens the panel
PV_EXECUTION = "pv-execution"  # the executor (issue 12) shows progress, execute, cancel here
PV_EXECUTE = "pv-execute"
PV_PAUSE = "pv-pause"
PV_RESUME = "pv-resume"
PV_CANCEL = "pv-cancel"
PV_CANCEL_CONFIRM = "pv-cancel-confirm"  # asks before a Cancel is sent
PV_EXEC_RESULT = "pv-exec-result"
PV_PROGRESS = "pv-progress"
PV_PROGRESS_BAR = "pv-progress-bar"
PV_HOLD = "pv-hold"  # why a guard or a window holds the execution
PV_TICK = "pv-tick"  # refreshes the progress while the plan executes
PV_MIGRATE = "pv-migrate"  # a shrink on a cluster that cannot delete partitions: its migration
PV_STEPS = "pv-steps"  # the migration's steps, done ones ticked
PV_CHECK_NEXT = "pv-check-next"  # checks the migration's next step off (operators)
PV_CHECK_RESULT = "pv-check-result"
PV_THROTTLE = "pv-throttle"  # the throttle's mode, the controller's note, the time left
PV_THROTTLE_SWITCH = "pv-throttle-switch"  # fixed <-> adaptive (the execute right)
PV_THROTTLE_RESULT = "pv-throttle-result"
PV_THROTTLE_PLOT = "pv-throttle-plot"  # holds the chart (or why there is none yet)
PV_THROTTLE_CHART = "pv-throttle-chart"  # per broker: the throttle beside the replication

# audit log
AU_PLAN = "au-plan"
AU_USER = "au-user"
AU_SINCE = "au-since"
AU_APPLY = "au-apply"
AU_ERROR = "au-error"
AU_GRID = "au-grid"
AU_PLANS = "au-plans"
AU_NEXT = "au-next"  # the audit log's next page
AU_PAGE = "au-page"  # dcc.Store: the filters shown and where the next page starts
AU_COUNT = "au-count"
AU_LINK = "au-link"  # the filters shown, as a link (Show writes them into the URL too)

# incident report link (every monitoring page)
INCIDENT_REPORT = "incident-report"

# capacity
CAP_STATE = "cap-state"  # cluster and 'today' of the view (the URL's cluster and end)
CAP_BANNERS = "cap-banners"
CAP_WINDOW = "cap-window"
CAP_GROWTH = "cap-growth"
CAP_ADD = "cap-add"
CAP_MBP = "cap-max-broker-partitions"
CAP_MP = "cap-max-partitions"
CAP_TOPIC = "cap-topic"
CAP_BY = "cap-by"
CAP_ANSWER = "cap-answer"
CAP_TABLE = "cap-table"
CAP_CLUSTER_CHART = "cap-cluster-chart"
CAP_BROKER_CHART = "cap-broker-chart"
CAP_EXPORT_HTML = "cap-export-html"
CAP_EXPORT_PDF = "cap-export-pdf"
CAP_EXPORT_CSV = "cap-export-csv"
CAP_EXPORT_STATUS = "cap-export-status"  # what an export is doing, or why it failed

# /plans
PL_WAITING = "pl-waiting"  # the plans waiting for the signed-in user's approval
PL_FILTERS = "pl-filters"

# /queue: every plan of every cluster (pages/queue.py)
QU_CLUSTER = "qu-cluster"  # filter: one cluster or all
QU_STATE = "qu-state"  # filter: one state or all
QU_MINE = "qu-mine"  # filter: only the plans that need my approval
QU_GRID = "qu-grid"
QU_COUNT = "qu-count"  # how many plans the grid shows
QU_SHOWN = "qu-shown"  # a digest of the rows shown: a refresh that changes nothing sends none
QU_REFRESH = "qu-refresh"
QU_ERROR = "qu-error"
QU_LINK = "qu-link"  # this view's shareable URL (the address bar follows it too)
QU_FIT = "qu-fit"  # the grid width (px) from which each optional column shows
OV_QUEUE = "ov-queue"  # the Overview's link to its cluster's plans in the queue
