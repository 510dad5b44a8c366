// The flame graph: flat arrays in, one absolutely positioned box per visible node out.
// Nodes come breadth first (parents before children, siblings together), so totals,
// depths and positions are single passes over the arrays.
(function () {
  try {
    var D = TF.data();
    var parent = D.parent, func = D.func, self = D.self, base = D.base || null;
    var n = parent.length, ROW = 17, MIN_PX = 0.5;
    var total = new Float64Array(n), depth = new Int32Array(n), x = new Float64Array(n);
    var next = new Float64Array(n), i, p;
    for (i = n - 1; i >= 0; i--) { total[i] += self[i]; if (i > 0) total[parent[i]] += total[i]; }
    for (i = 1; i < n; i++) {
      p = parent[i];
      depth[i] = depth[p] + 1;
      x[i] = x[p] + next[p];
      next[p] += total[i];
    }
    var names = new Array(n), files = new Array(n);
    for (i = 0; i < n; i++) {
      var f = func[i];
      names[i] = f < 0 ? "all" : D.texts[D.fname[f]];
      files[i] = f < 0 ? "" : D.texts[D.ffile[f]] + (D.fline[f] >= 0 ? ":" + D.fline[f] : "");
    }
    var chart = document.getElementById("chart"), tip = document.getElementById("tooltip");
    var search = document.getElementById("search"), matchedText = document.getElementById("matched");
    var zoom = 0, matches = null, root = total[0];
    document.getElementById("summary").textContent =
      TF.count(root) + " " + D.unit + ", " + TF.count(n - 1) + " nodes" + (base ? " (difference from the baseline)" : "");

    function colour(i) {
      if (!base) return TF.warm(names[i]);
      var was = base[i], now = total[i];
      var change = (now - was) / Math.max(now, was, 1);  // -1 .. 1
      var level = Math.round(95 - 45 * Math.min(1, Math.abs(change) * 2));
      return change >= 0 ? "hsl(0,80%," + level + "%)" : "hsl(220,80%," + level + "%)";
    }

    function render() {
      var width = chart.clientWidth || 1000, scale = width / Math.max(total[zoom], 1);
      var lo = x[zoom], hi = x[zoom] + total[zoom], zd = depth[zoom];
      var up = {}, node = zoom, maxDepth = 0, shown = [];
      while (node > 0) { node = parent[node]; up[node] = true; }
      for (i = 0; i < n; i++) {
        var visible = i === zoom || up[i] === true ||
          (depth[i] > zd && x[i] >= lo && x[i] < hi && total[i] * scale >= MIN_PX);
        if (visible) { shown.push(i); if (depth[i] > maxDepth) maxDepth = depth[i]; }
      }
      var html = [];
      for (var k = 0; k < shown.length; k++) {
        i = shown[k];
        var left = up[i] || i === zoom ? 0 : (x[i] - lo) * scale;
        var w = up[i] || i === zoom ? width : total[i] * scale;
        var top = D.icicle ? depth[i] * ROW : (maxDepth - depth[i]) * ROW;
        var cls = "n" + (up[i] ? " up" : "") + (matches && matches[i] ? " m" : "");
        html.push('<div class="' + cls + '" data-i="' + i + '" style="left:' + left.toFixed(1) +
          "px;width:" + w.toFixed(1) + "px;top:" + top + "px;background:" + colour(i) + '">' +
          TF.escape(names[i]) + "</div>");
      }
      chart.style.height = (maxDepth + 1) * ROW + "px";
      chart.innerHTML = html.join("");
      document.documentElement.setAttribute("data-rendered", String(shown.length));
    }

    function describe(i) {
      var lines = ["<b>" + TF.escape(names[i]) + "</b>"];
      if (files[i]) lines.push(TF.escape(files[i]));
      lines.push("total: " + TF.count(total[i]) + " " + D.unit + " (" + TF.percent(total[i], root) + ")");
      lines.push("self: " + TF.count(self[i]) + " " + D.unit + " (" + TF.percent(self[i], root) + ")");
      if (base) lines.push("baseline (scaled to this total): " + TF.count(base[i]) + " " + D.unit);
      return lines.join("\n");
    }

    function find(text) {
      matches = null;
      matchedText.textContent = "";
      if (!text) return;
      var pattern;
      try { pattern = new RegExp(text, "i"); } catch (e) { pattern = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i"); }
      matches = new Uint8Array(n);
      var covered = new Uint8Array(n), sum = 0, count = 0;
      for (i = 1; i < n; i++) {
        if (pattern.test(names[i]) || pattern.test(files[i])) { matches[i] = 1; count++; }
        covered[i] = covered[parent[i]] || matches[i];
        if (matches[i] && !covered[parent[i]]) sum += total[i];
      }
      matchedText.textContent = "matched " + TF.count(count) + " nodes, " + TF.count(sum) + " " + D.unit + " (" + TF.percent(sum, root) + ")";
    }

    function showRoot() {  // a flame graph grows upwards: open on its root, at the bottom
      if (D.icicle) return;
      var box = chart.querySelector('[data-i="' + zoom + '"]');
      if (box && box.scrollIntoView) box.scrollIntoView({block: "end"});
      document.documentElement.setAttribute("data-scrolled", String(Math.round(window.scrollY)));
    }

    chart.addEventListener("click", function (event) {
      var box = event.target.closest(".n");
      if (box) { zoom = +box.getAttribute("data-i"); render(); showRoot(); }
    });
    chart.addEventListener("mousemove", function (event) {
      var box = event.target.closest(".n");
      TF.tooltip(tip, box ? describe(+box.getAttribute("data-i")) : null, event);
    });
    chart.addEventListener("mouseleave", function (event) { TF.tooltip(tip, null, event); });
    document.getElementById("reset").addEventListener("click", function () {
      zoom = 0; render(); showRoot();
    });
    search.addEventListener("input", function () { find(search.value); render(); });
    window.addEventListener("resize", render);

    var params = TF.hashParams();  // #search=...&zoom=node, for links and tests
    if (params.search) { search.value = params.search; find(params.search); }
    if (params.zoom && +params.zoom >= 0 && +params.zoom < n) zoom = +params.zoom;
    render();
    showRoot();
  } catch (error) {
    TF.fail(error);
  }
})();
