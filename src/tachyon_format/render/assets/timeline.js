// The timeline: a canvas per thread lane, one rectangle per kept bucket, and the stack of
// the bucket under the cursor (innermost frame first).
(function () {
  try {
    var D = TF.data();
    var lanesBox = document.getElementById("lanes"), cursor = document.getElementById("cursor");
    var buckets = Math.max(D.buckets, 1), LABEL = 220;
    document.getElementById("summary").textContent = TF.count(D.samples) + " samples, " +
      D.lanes.length + " threads, " + (D.buckets * D.bucket_us / 1e6).toFixed(3) + " s" +
      (D.bucket_us > 1 ? ", " + TF.count(D.bucket_us) + " \u00b5s per column" : "");
    document.getElementById("legend").innerHTML = D.categories.map(function (c) {
      return '<span style="--c:' + c.colour + '">' + TF.escape(c.name) + "</span>";
    }).join("");

    var canvases = D.lanes.map(function (lane, index) {
      var row = document.createElement("div");
      row.className = "lane";
      row.innerHTML = '<div class="label" title="' + TF.escape(lane.label) + '">' + TF.escape(lane.label) + "</div>";
      var canvas = document.createElement("canvas");
      canvas.setAttribute("data-lane", String(index));
      row.appendChild(canvas);
      lanesBox.appendChild(row);
      return canvas;
    });

    function draw() {
      canvases.forEach(function (canvas, index) {
        var lane = D.lanes[index], width = canvas.clientWidth || 800, ratio = window.devicePixelRatio || 1;
        canvas.width = Math.round(width * ratio);
        canvas.height = Math.round(16 * ratio);
        var g = canvas.getContext("2d"), step = canvas.width / buckets;
        g.clearRect(0, 0, canvas.width, canvas.height);
        for (var k = 0; k < lane.bucket.length; k++) {
          g.fillStyle = D.categories[lane.category[k]].colour;
          g.fillRect(Math.floor(lane.bucket[k] * step), 0, Math.max(1, Math.ceil(step)), canvas.height);
        }
      });
      var axis = document.getElementById("axis"), ticks = [], seconds = buckets * D.bucket_us / 1e6;
      for (var t = 0; t <= 5; t++) {
        ticks.push('<span style="left:' + (t * 20) + '%">' + (seconds * t / 5).toFixed(seconds < 1 ? 3 : 2) + " s</span>");
      }
      axis.innerHTML = ticks.join("");
    }

    // The kept bucket of a lane nearest to bucket b (binary search; lanes are sorted).
    function nearest(lane, b) {
      var lo = 0, hi = lane.bucket.length - 1;
      if (hi < 0) return -1;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (lane.bucket[mid] < b) lo = mid + 1; else hi = mid; }
      if (lo > 0 && Math.abs(lane.bucket[lo - 1] - b) <= Math.abs(lane.bucket[lo] - b)) lo--;
      return lo;
    }

    function show(laneIndex, k) {
      var lane = D.lanes[laneIndex], stack = lane.stack[k], items = [];
      for (var j = D.stack_offsets[stack]; j < D.stack_offsets[stack + 1]; j++) {
        var f = D.stack_frames[j], line = D.frame_line[f];
        items.push("<li>" + TF.escape(D.texts[D.frame_name[f]]) + '<span class="where">' +
          TF.escape(D.texts[D.frame_file[f]]) + (line >= 0 ? ":" + line : "") + "</span></li>");
      }
      var at = (lane.bucket[k] * D.bucket_us / 1e6).toFixed(4);
      document.getElementById("stack-title").textContent = lane.label + " at " + at + " s: " +
        D.categories[lane.category[k]].name + (items.length ? "" : " (empty stack)");
      document.getElementById("stack").innerHTML = items.join("");
    }

    lanesBox.addEventListener("mousemove", function (event) {
      var canvas = event.target.closest("canvas");
      if (!canvas) return;
      var box = canvas.getBoundingClientRect(), laneIndex = +canvas.getAttribute("data-lane");
      var b = Math.floor((event.clientX - box.left) / box.width * buckets);
      var k = nearest(D.lanes[laneIndex], b);
      cursor.style.display = "block";
      cursor.style.left = (event.clientX - lanesBox.getBoundingClientRect().left) + "px";
      if (k >= 0) show(laneIndex, k);
    });
    window.addEventListener("resize", draw);
    draw();
    // at first, the busiest lane's first kept bucket
    var first = 0;
    D.lanes.forEach(function (lane, i) { if (lane.bucket.length > D.lanes[first].bucket.length) first = i; });
    if (D.lanes.length && D.lanes[first].bucket.length) show(first, 0);
    document.documentElement.setAttribute("data-rendered", String(D.lanes.length));
  } catch (error) {
    TF.fail(error);
  }
})();
