/* Railyard's clientside callbacks (dashboard/shell.py registers them through Dash's
   ClientsideFunction): the cluster picker and the time control write the URL in the
   browser, with no server round trip. */

function isoMinute(ms) { return new Date(ms).toISOString().slice(0, 16); }

// the grammar components.timerange.parse_time reads: epoch seconds, or a UTC date and
// time (a zone may follow); Date.parse alone took "2024-02-30" for 1 March and "-5" for
// a year, which the server then refused
const TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})([.]\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const LAST_TIME = 253402300799e3;  // 9999-12-31T23:59:59Z, as timerange.LAST_TIME
const EXAMPLE = "2024-05-01T12:00";  // as timerange.EXAMPLE

function readTime(text) {  // ms since the epoch in any year the grammar takes, NaN if unreadable
    text = (text || "").trim();
    const m = TIME.exec(text);
    if (/^[0-9]+([.][0-9]+)?$/.test(text)) {
        return Number(text) * 1000;
    }
    if (!m) { return NaN; }
    const [y, mo, d, h, mi, s] = m.slice(1, 7).map(v => Number(v || 0));
    const utc = Date.UTC(y, mo - 1, d, h, mi, s);
    const back = new Date(utc);  // a day or hour that does not exist comes back changed
    if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1
            || back.getUTCDate() !== d || back.getUTCHours() !== h || mi >= 60 || s >= 60) {
        return NaN;
    }
    const zone = /([+-])(\d{2}):?(\d{2})$/.exec(m[8] || "");
    return utc + Number("0" + (m[7] || "").slice(0, 7)) * 1000  // microseconds, as Python
        - (zone ? (zone[1] === "-" ? -1 : 1) * (zone[2] * 60 + Number(zone[3])) * 60e3 : 0);
}

function parseTime(text) {  // ms since the epoch, NaN when the server would refuse it
    const ms = readTime(text);
    return ms >= 0 && ms <= LAST_TIME ? ms : NaN;
}

function timeError(what, text) {  // components.timerange.parse_time's refusal, "" if none
    const t = (text || "").trim();
    if (!t) { return `${what}: give a date and time, e.g. ${EXAMPLE}`; }
    const ms = readTime(t);
    if (isNaN(ms)) {
        return `${what}: could not read '${t.slice(0, 40)}' as a date and time (e.g. ${EXAMPLE}, UTC)`;
    }
    return isNaN(parseTime(t)) ? `${what}: ${t.slice(0, 40)} is not a time between 1970 and 9999 (UTC)` : "";
}

const DEFAULT_RANGE = "live";  // as timerange.DEFAULT: the window of a URL naming none

/* Each nav link's target keeping the view of the URL ``params`` (its cluster and window);
   the fleet's pages keep no view (dashboard/shell.py FLEET_PAGES). */
function navTargets(navs, params) {
    const shared = new URLSearchParams();
    for (const k of ["cluster", "range", "from", "to"]) {
        if (params.get(k)) { shared.set(k, params.get(k)); }
    }
    const kept = shared.toString() ? "?" + shared.toString() : "";
    return navs.map(p => p === "/queue" ? p : p + kept);
}

/* Back and Forward over the time control's entries. applyRange writes the URL with
   pushState and tells Dash's dcc.Location components nothing, so that the page follows its
   view store in place instead of being drawn again. A Location reads the URL when the app
   starts, on each _dashprivate_pushstate (a dcc.Link, a Location a callback wrote) and on
   popstate, and the pages' router draws the page again from the URL when its path or query
   differ from what the Location read last. Back to that very URL (the window the page was
   drawn with, before a range was picked) drew nothing: the control and the charts stayed
   on the window left until a reload. Then the view follows the URL (followUrl). */
let dashReadUrl = window.location.pathname + window.location.search;
window.addEventListener("_dashprivate_pushstate", function () {
    dashReadUrl = window.location.pathname + window.location.search;
});
window.addEventListener("popstate", function () {
    const url = window.location.pathname + window.location.search;
    const redrawn = url !== dashReadUrl;  // the router draws the page from the URL itself
    dashReadUrl = url;
    const dc = window.dash_clientside;
    if (!redrawn && dc && dc.set_props && document.getElementById("range")) {  // ids.RANGE
        dc.set_props("view-popped", {data: {search: window.location.search, at: Date.now()}});
    }
});

/* The plan page's two-second refresh (pages/plan.py, its timer ids.PV_TICK) stops while a
   click's answer is out, and run_plan's answer starts it again. A click the server failed
   on (a 500, a refused request, no answer at all) never had that answer: the page stood
   still until it was loaded again. Every request of run_plan (the one callback whose
   outputs hold the timer's ``disabled``) is watched here: one that fails, or answers
   without the timer, starts it again; the next refresh's answer stops it if the plan no
   longer executes. */
const PLAN_TIMER = "pv-tick";  // ids.PV_TICK
const PLAN_TIMER_OUTPUT = new RegExp(`(^|[.][.])${PLAN_TIMER}[.]disabled([.][.]|$)`);

function startPlanTimer() {
    const dc = window.dash_clientside;
    if (dc && dc.set_props && document.getElementById("pv-execution")) {  // ids.PV_EXECUTION
        dc.set_props(PLAN_TIMER, {disabled: false});
    }
}

function writesPlanTimer(url, init) {  // a request of run_plan
    if (!String(url).includes("_dash-update-component") || !init
            || typeof init.body !== "string") {
        return false;
    }
    try {
        return PLAN_TIMER_OUTPUT.test(JSON.parse(init.body).output || "");
    } catch (e) {
        return false;
    }
}

const fetchOfPage = window.fetch;
window.fetch = async function (url, init) {
    if (!writesPlanTimer(url, init)) {
        return fetchOfPage.apply(this, arguments);
    }
    let answer;
    try {
        answer = await fetchOfPage.apply(this, arguments);
    } catch (e) {  // no answer: the server down, the connection refused
        startPlanTimer();
        throw e;
    }
    if (!answer.ok) {  // a 500, a refused request (403, 429, ...)
        startPlanTimer();
        return answer;
    }
    answer.clone().json().then(data => {  // a failure the server's on_error answered
        const timer = ((data || {}).response || {})[PLAN_TIMER];
        if (!timer || !("disabled" in timer)) { startPlanTimer(); }
    }, startPlanTimer);
    return answer;
};

window.dash_clientside = Object.assign({}, window.dash_clientside, {
    railyard: {
        /* The picked cluster goes into the URL (the page then follows the URL). */
        pickCluster: function (picked) {
            const params = new URLSearchParams(window.location.search);
            if (!picked || params.get("cluster") === picked) {
                return window.dash_clientside.no_update;
            }
            params.set("cluster", picked);
            return "?" + params.toString();
        },

        /* A range picked (or an absolute range applied): the view store, the control's
           fields, the URL, and every nav link keeping the view. ``hrefs``: the nav links'
           current targets, whose paths they keep. */
        applyRange: function (key, clicks, from, to, view, ...hrefs) {
            const navs = hrefs.map(h => (h || "").split("?")[0]);
            const nu = window.dash_clientside.no_update;
            const trig = (window.dash_clientside.callback_context.triggered || [])
                .map(t => t.prop_id);
            const state = Object.assign({}, view);
            const changed = trig.includes("range.value") ? key !== view.range
                : trig.includes("range-apply.n_clicks") && Boolean(clicks);
            if (!changed) {  // the control mounting with the view it was drawn from
                return Array(6 + navs.length).fill(nu);
            }
            if (key === "abs") {
                if (trig.includes("range.value")) {  // switching: start from the last hour
                    const now = Date.now();
                    from = isoMinute(now - 3600e3);
                    to = isoMinute(now);
                }
                const t0 = parseTime(from), t1 = parseTime(to);
                let error = timeError("from", from) || timeError("to", to);
                if (!error && t1 <= t0) { error = "to must be after from"; }
                if (!error && !(t1 - t0 >= 60e3 && t1 - t0 <= 366 * 86400e3)) {  // timerange.MIN_SPAN, MAX_SPAN
                    error = "from and to: give a window from 1 minute to 366 days long";
                }
                if (!error && t0 >= Date.now()) { error = `from: ${from.trim()} UTC has not happened yet`; }
                if (error) { return [nu, error, from, to, false, true].concat(navs.map(() => nu)); }
                Object.assign(state, {range: "abs", from: from, to: to});
            } else {
                Object.assign(state, {range: key, from: null, to: null});
            }
            const params = new URLSearchParams(window.location.search);
            for (const k of ["range", "from", "to"]) {
                if (state[k]) { params.set(k, state[k]); } else { params.delete(k); }
            }
            const search = params.toString() ? "?" + params.toString() : "";
            window.history.pushState({}, "", window.location.pathname + search);
            return [state, "", from, to, key !== "abs", key === "abs"]
                .concat(navTargets(navs, params));
        },

        /* Back or Forward to an entry applyRange wrote (the listener below): the view
           store, the control and the nav links as the page draws them from that URL
           (dashboard/shell.py page_frame), the page's charts then following the store.
           The radio set to the view's range leaves applyRange nothing to do. */
        followUrl: function (popped, view, options, ...hrefs) {
            const navs = hrefs.map(h => (h || "").split("?")[0]);
            if (!popped || !view) {
                return Array(7 + navs.length).fill(window.dash_clientside.no_update);
            }
            const params = new URLSearchParams(popped.search);
            const asked = params.get("range");
            const key = (options || []).some(o => o.value === asked) ? asked : DEFAULT_RANGE;
            const state = Object.assign({}, view,
                                        {range: key, from: params.get("from"), to: params.get("to")});
            return [state, key, state.from || "", state.to || "", key !== "abs", "", key === "abs"]
                .concat(navTargets(navs, params));
        },
    },
});

/* Grid cell formatters (dash-ag-grid valueFormatter {"function": "thousands(params.value)"}):
   the cell keeps its number, so sorting and filtering stay numeric. */
var dagfuncs = (window.dashAgGridFunctions = window.dashAgGridFunctions || {});

/* 12500 -> "12,500"; 84.3 stays "84.3"; no value -> "-". */
dagfuncs.thousands = function (value) {
    if (value === null || value === undefined || value === "") { return "-"; }
    if (isNaN(Number(value))) { return String(value); }  // "never", "unlimited"
    return Number(value).toLocaleString("en-US", {maximumFractionDigits: 2});
};

/* A byte rate as components.charts.rate_text writes it: 950 B/s, 12.3 kB/s, 5.31 MB/s. */
dagfuncs.byteRate = function (value) {
    if (value === null || value === undefined || value === "") { return "-"; }
    if (isNaN(Number(value))) { return String(value); }
    const scales = [[1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (const [scale, prefix] of scales) {
        if (Math.abs(value) >= scale) {
            return Number((value / scale).toPrecision(3)).toLocaleString("en-US") +
                " " + prefix + "B/s";
        }
    }
    return Math.round(value).toLocaleString("en-US") + " B/s";
};

/* 1610612736 -> "1.61 GB" (powers of ten, as the plan page writes them); no value -> "—". */
dagfuncs.bytes = function (value) {
    if (value === null || value === undefined || value === "") { return "—"; }
    const scales = [[1e12, "TB"], [1e9, "GB"], [1e6, "MB"], [1e3, "kB"]];
    for (const [scale, unit] of scales) {
        if (Math.abs(value) >= scale) {
            return Number((value / scale).toPrecision(3)).toLocaleString("en-US") + " " + unit;
        }
    }
    return Math.round(value).toLocaleString("en-US") + " B";
};

/* 0.375 -> "37.5%"; no value -> "—". */
dagfuncs.percent = function (value) {
    if (value === null || value === undefined || value === "") { return "—"; }
    return (100 * value).toLocaleString("en-US", {maximumFractionDigits: 1}) + "%";
};

/* Seconds as components.tables.duration writes them: 45 s, 12 min, 3.5 h; none -> "—". */
dagfuncs.duration = function (value) {
    if (value === null || value === undefined || value === "") { return "—"; }
    if (value < 90) { return Math.round(value) + " s"; }
    if (value < 7200) { return Math.round(value / 60) + " min"; }
    return (value / 3600).toFixed(1) + " h";
};

/* A plan id cell as a link to the plan's page (/queue's grid, the throttle configs' clear
   plan); no plan -> "-". */
var dagcomponentfuncs = (window.dashAgGridComponentFunctions =
    window.dashAgGridComponentFunctions || {});
dagcomponentfuncs.PlanLink = function (props) {
    if (props.value === null || props.value === undefined) { return "-"; }
    return React.createElement("a", {href: "/plans/" + props.value, className: "plan-link"},
                               "#" + props.value);
};

/* /queue's view (pages/queue.py) into the address bar and its "Link to this view":
   the filters and the grid's sorted column ("-field" descending), defaults left out. */
// the audit filters Show checked (its page store) into the address bar and the link, the
// rest of the query (cluster, range) kept: a reload shows the same rows
window.dash_clientside.railyard.auditUrl = function (page) {
    if (!page || !page.query) { return window.dash_clientside.no_update; }
    const params = new URLSearchParams(window.location.search);
    for (const k of ["plan", "user", "since"]) {
        const v = page.query[k];
        if (v === null || v === undefined || v === "") { params.delete(k); }
        else { params.set(k, String(v)); }
    }
    const search = params.toString() ? "?" + params.toString() : "";
    if (window.location.pathname === "/audit" && window.location.search !== search) {
        window.history.replaceState({}, "", "/audit" + search);
    }
    return "/audit" + search;
};

window.dash_clientside.railyard.queueUrl = function (cluster, state, mine, columns) {
    const params = new URLSearchParams();
    if (cluster && cluster !== "*") { params.set("cluster", cluster); }
    if (state) { params.set("state", state); }
    if (mine && mine.length) { params.set("mine", "1"); }
    const sorted = (columns || []).find(c => c.sort);
    const sort = sorted ? (sorted.sort === "desc" ? "-" : "") + sorted.colId : "";
    if (sort && sort !== "-id") { params.set("sort", sort); }
    const search = params.toString() ? "?" + params.toString() : "";
    if (window.location.pathname === "/queue" && window.location.search !== search) {
        window.history.replaceState({}, "", "/queue" + search);
    }
    return "/queue" + search;
};

// /queue's optional columns (pages/queue.py OPTIONAL) follow the grid's width: each shows
// from the width in ``shownFrom`` (queue.shown_from), checked as the grid is drawn and
// whenever it changes size (the window, or the page's scrollbar coming or going); the
// title's tooltip then names the hidden columns' values
window.dash_clientside.railyard.fitColumns = function (_rows, gridId, shownFrom) {
    dash_ag_grid.getApiAsync(gridId).then(api => {
        const grid = document.getElementById(gridId);
        if (!grid || grid._fit) { return; }
        grid._fit = new ResizeObserver(() => {
            if (!grid.isConnected) { grid._fit.disconnect(); return; }
            for (const [field, px] of Object.entries(shownFrom)) {
                api.setColumnsVisible([field], grid.clientWidth >= px);
            }
            api.refreshCells({columns: ["title"], force: true});
        });
        grid._fit.observe(grid);
    });
    return window.dash_clientside.no_update;
};
