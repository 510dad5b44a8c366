"use strict";
// Shared helpers of the pages (no dependencies).
var TF = {
  data: function () { return JSON.parse(document.getElementById("profile-data").textContent); },
  escape: function (text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  },
  count: function (n) { return Math.round(n).toLocaleString("en-US"); },
  percent: function (part, whole) { return whole > 0 ? (100 * part / whole).toFixed(2) + "%" : "0%"; },
  hash: function (text) {
    var h = 2166136261;
    for (var i = 0; i < text.length; i++) { h ^= text.charCodeAt(i); h = Math.imul(h, 16777619); }
    return h >>> 0;
  },
  // A warm colour per name, as flame graphs colour frames.
  warm: function (name) {
    var h = TF.hash(name);
    return "hsl(" + (h % 50 + 5) + "," + (70 + (h >> 8) % 25) + "%," + (58 + (h >> 16) % 14) + "%)";
  },
  // Record an error caught by the page itself, as the window's error handler does.
  fail: function (error) {
    var root = document.documentElement;
    root.setAttribute("data-errors", root.getAttribute("data-errors") + String(error && error.stack || error) + "\n");
  },
  tooltip: function (element, html, event) {
    if (html === null) { element.style.display = "none"; return; }
    element.innerHTML = html;
    element.style.display = "block";
    var x = event.clientX + 14, y = event.clientY + 14;
    var w = element.offsetWidth, h = element.offsetHeight;
    if (x + w > window.innerWidth) x = Math.max(0, event.clientX - w - 14);
    if (y + h > window.innerHeight) y = Math.max(0, event.clientY - h - 14);
    element.style.left = x + "px";
    element.style.top = y + "px";
  },
  hashParams: function () {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var at = part.indexOf("=");
      if (at > 0) out[decodeURIComponent(part.slice(0, at))] = decodeURIComponent(part.slice(at + 1));
    });
    return out;
  }
};
