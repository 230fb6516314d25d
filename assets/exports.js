/* Report downloads (an a.export-link in an .export-group: the capacity page's HTML, PDF
   and CSV): fetched here, so a failed export says why on the page (the server's one line,
   in the group's .export-status) instead of a download link that silently gets nothing;
   a report that arrives is saved under the file name the server gives it; a link shown
   disabled is not followed. */

function exportStatus(link, text, kind) {
    const group = link.closest(".export-group");
    const status = group ? group.querySelector(".export-status") : null;
    if (!status) { return; }
    status.textContent = text;
    status.className = "export-status" + (kind ? " banner banner-" + kind : "");
    status.setAttribute("role", kind === "error" ? "alert" : "status");
}

function saveBlob(blob, name) {
    const url = URL.createObjectURL(blob);
    const a = document.createElement("a");
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
}

async function exportReport(link) {
    const what = link.textContent;
    exportStatus(link, "Preparing the " + what + "...", "info");
    try {
        const response = await fetch(link.href, {credentials: "same-origin"});
        if (response.redirected && new URL(response.url).pathname === "/login") {
            exportStatus(link, what + " export failed: the session ended; sign in again",
                         "error");
            return;
        }
        if (!response.ok) {
            const reason = (await response.text()).trim() || response.statusText;
            exportStatus(link, what + " export failed: " + reason, "error");
            return;
        }
        const disposition = response.headers.get("Content-Disposition") || "";
        const name = (/filename="([^"]+)"/.exec(disposition) || [])[1] || "report";
        saveBlob(await response.blob(), name);
        exportStatus(link, what + " saved as " + name, "");
    } catch (error) {
        exportStatus(link, what + " export failed: the dashboard did not answer (" +
                     error.message + ")", "error");
    }
}

function exportLink(event) {
    return event.target.closest ? event.target.closest("a.export-link") : null;
}

/* A link the page shows disabled (aria-disabled="true": the page's own forecast was
   refused, no history yet, and its title says why) does nothing, not even opened in a
   new tab; the server refuses such an export on its own anyway. */
function disabled(link) {
    return link.getAttribute("aria-disabled") === "true";
}

document.addEventListener("click", function (event) {
    const link = exportLink(event);
    if (link && disabled(link)) { event.preventDefault(); return; }
    if (!link || !link.href || event.ctrlKey || event.metaKey || event.shiftKey) { return; }
    event.preventDefault();
    exportReport(link);
});

document.addEventListener("auxclick", function (event) {  // a middle click opens a tab
    const link = exportLink(event);
    if (link && disabled(link)) { event.preventDefault(); }
});
