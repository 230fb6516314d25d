/* Railyard's clientside callbacks (dashboard/shell.py registers them through Dash's
   ClientsideFunction): the cluster picker and the time control write the URL in the
   browser, with no server round trip. */

function isoMinute(ms) { return new Date(ms).toISOString().slice(0, 16); }

function parseTime(text) {  // what components.timerange.parse_time accepts (UTC)
    text = (text || "").trim();
    if (!text) { return NaN; }
    if (/^[0-9]+([.][0-9]+)?$/.test(text)) { return Number(text) * 1000; }
    const zoned = /(Z|[+-][0-9][0-9]:?[0-9][0-9])$/.test(text);
    return Date.parse(zoned ? text : text.replace(" ", "T") + "Z");
}

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
                let error = "";
                const unread = (what, text, eg) => (text || "").trim()
                    ? `${what}: could not read '${text.trim()}' as a date and time (e.g. ${eg}, UTC)`
                    : `${what}: give a date and time, e.g. ${eg}`;
                if (isNaN(t0)) { error = unread("from", from, "2024-05-01T12:00"); }
                else if (isNaN(t1)) { error = unread("to", to, "2024-05-01T13:00"); }
                else if (t1 <= t0) { error = "to must be after from"; }
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
            const shared = new URLSearchParams();
            for (const k of ["cluster", "range", "from", "to"]) {
                if (params.get(k)) { shared.set(k, params.get(k)); }
            }
            const kept = shared.toString() ? "?" + shared.toString() : "";
            return [state, "", from, to, key !== "abs", key === "abs"]
                .concat(navs.map(p => p + kept));
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
