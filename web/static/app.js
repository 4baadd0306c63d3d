// Progressive enhancement only: every page works without this script.
(function () {
  "use strict";

  // Runs table: filter as you type/select, without a round trip.
  var form = document.querySelector("form.filters[data-live-filter]");
  if (form) {
    var rows = Array.prototype.slice.call(document.querySelectorAll("#runs tbody tr"));
    var apply = function () {
      var f = {};
      Array.prototype.forEach.call(form.elements, function (el) { if (el.name) f[el.name] = el.value; });
      var shown = 0;
      rows.forEach(function (tr) {
        var d = tr.dataset, day = d.day || "";
        var keep = (!f.env || d.env === f.env) && (!f.model || d.model === f.model) &&
          (!f.dataset || d.dataset === f.dataset) && (!f.rubric || d.rubric === f.rubric) &&
          (!f.status || d.status === f.status) && (!f.from || day >= f.from) && (!f.to || (day && day <= f.to));
        tr.classList.toggle("hidden", !keep);
        if (keep) shown++;
      });
      var n = document.getElementById("shown-count");
      if (n) n.textContent = String(shown);
    };
    form.addEventListener("change", apply);
    form.addEventListener("input", apply);
  }

  // Live updates: while any listed run is running, poll the JSON endpoint
  // (the server reads only what was appended to results.jsonl since).
  var live = document.querySelectorAll("[data-live-id]");
  if (live.length) {
    var poll = function () {
      var running = document.querySelectorAll("[data-live-status='running']").length;
      if (!running) return;
      fetch("/api/runs", { cache: "no-store" }).then(function (r) { return r.json(); }).then(function (runs) {
        var byId = {};
        runs.forEach(function (r) { byId[r.id] = r; });
        Array.prototype.forEach.call(document.querySelectorAll("[data-live-id]"), function (el) {
          var r = byId[el.dataset.liveId];
          if (!r) return;
          var set = function (sel, v) { var c = el.querySelector(sel); if (c) c.textContent = v; };
          set(".live-rows", String(r.rows));
          set(".live-status", r.status);
          set(".live-reward", r.completed ? r.avg_reward.toFixed(4) : "\u2014");
          el.dataset.liveStatus = r.status;
        });
        var known = document.querySelectorAll("#runs tbody tr").length;
        var banner = document.getElementById("live-banner");
        if (banner && known && runs.length > known) {
          banner.textContent = (runs.length - known) + " new run(s): reload to see them";
          banner.classList.remove("hidden");
        }
      }).catch(function () { /* the server stopped; keep the page as it is */ });
    };
    setInterval(poll, 2000);
  }
})();
