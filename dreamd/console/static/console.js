// dreamd console: live updates. When the server says a served directory committed, the open
// page fetches itself again and swaps its <main> in place (no reload, scroll kept).
(function () {
  "use strict";
  var live = document.body.getAttribute("data-live");
  if (!live || !window.EventSource) { return; }
  var busy = false;
  function refresh() {
    if (busy) { return; }
    busy = true;
    fetch(window.location.href, { credentials: "same-origin", headers: { "X-Requested-With": "dreamd-live" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) { return; }
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("main");
        var main = document.getElementById("main");
        if (fresh && main) {
          main.replaceWith(document.importNode(fresh, true));
          var note = document.getElementById("live-state");
          if (note) { note.hidden = false; note.setAttribute("data-at", String(Date.now())); }
          document.body.setAttribute("data-refreshed", String((+document.body.getAttribute("data-refreshed") || 0) + 1));
        }
      })
      .catch(function () {})
      .then(function () { busy = false; });
  }
  var source = new EventSource("/events?dir=" + encodeURIComponent(live));
  source.addEventListener("change", refresh);
})();
