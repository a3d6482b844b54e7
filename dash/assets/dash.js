// tigris dash: refreshes the live sections of the page in place, and streams
// the query box's results. The page works without it (it then reloads
// itself, when live, through a <noscript> refresh).
(function () {
  "use strict";
  var secs = Number(document.body.dataset.refresh || 0);
  var paused = false;
  var pause = document.getElementById("pause");
  if (pause) {
    pause.hidden = false;
    pause.addEventListener("click", function () {
      paused = !paused;
      pause.textContent = paused ? "Resume" : "Pause";
      pause.setAttribute("aria-pressed", String(paused));
    });
  }

  // refresh fetches the page again and swaps every [data-live] section,
  // keeping open <details> open and leaving alone a section where someone
  // is typing.
  function refresh() {
    if (paused || document.hidden) return;
    fetch(location.href, { headers: { "X-Tigris-Dash": "refresh" }, cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        var open = {};
        document.querySelectorAll("details[open][id]").forEach(function (d) { open[d.id] = true; });
        var active = document.activeElement;
        doc.querySelectorAll("[data-live][id]").forEach(function (fresh) {
          var cur = document.getElementById(fresh.id);
          if (!cur) return;
          if (active && cur.contains(active) && active.matches("input, select, textarea")) return;
          fresh.querySelectorAll("details[id]").forEach(function (d) { d.open = !!open[d.id]; });
          cur.replaceWith(document.importNode(fresh, true));
        });
        document.body.dataset.refreshed = String(Date.now());
      })
      .catch(function () { /* the next tick tries again */ });
  }
  if (secs > 0) setInterval(refresh, secs * 1000);

  var form = document.getElementById("query-form");
  if (form && window.fetch && window.TextDecoder) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var out = document.getElementById("query-out");
      out.textContent = "";
      fetch(form.action, { method: "POST", body: new URLSearchParams(new FormData(form)) })
        .then(function (r) {
          var reader = r.body.getReader();
          var dec = new TextDecoder();
          function pump() {
            return reader.read().then(function (c) {
              if (c.done) return;
              out.textContent += dec.decode(c.value, { stream: true });
              return pump();
            });
          }
          return pump();
        })
        .catch(function (e) { out.textContent += "\n" + e; });
    });
  }
})();
