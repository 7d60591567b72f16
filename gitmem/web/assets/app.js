// While a tab shows the page it keeps the warm server that serves it: a server started by a
// call leaves after serve.idleMinutes without a call or a page request, and an open tab that is
// only read would find it gone. One small request a minute (timers of hidden tabs still run).
(function () {
  "use strict";
  setInterval(function () {
    fetch("/alive", { credentials: "same-origin", cache: "no-store" }).catch(function () {});
  }, 60000);
})();

// Search as you type: the results part of /search is fetched after a short pause and swapped
// in; the address bar follows, so a results page can be bookmarked. Without JavaScript the
// form submits to the same /search page.
(function () {
  "use strict";
  var box = document.getElementById("q");
  var form = document.getElementById("search-form");
  if (!box || !form) { return; }
  var timer = null;
  var latest = 0;
  function query() {
    var params = new URLSearchParams(new FormData(form));
    return params;
  }
  function run() {
    var params = query();
    var ticket = ++latest;
    history.replaceState(null, "", "/search?" + params.toString());
    params.set("partial", "1");
    fetch("/search?" + params.toString(), { credentials: "same-origin" })
      .then(function (r) { return r.text(); })
      .then(function (html) {
        if (ticket !== latest) { return; }
        var old = document.getElementById("results");
        var holder = document.createElement("div");
        holder.innerHTML = html;  // the server escaped every value in it
        var fresh = holder.firstElementChild;
        if (old && fresh) { old.replaceWith(fresh); }
      });
  }
  function later() { clearTimeout(timer); timer = setTimeout(run, 250); }
  box.addEventListener("input", later);
  form.addEventListener("change", later);
})();
