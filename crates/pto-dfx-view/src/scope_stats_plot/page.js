(function () {
  'use strict';
  if (!/[?&]selftest\b/.test(location.search)) { return; }
  var out = {
    charts: document.querySelectorAll('figure.chart svg').length,
    series: document.querySelectorAll('polyline.series').length,
    panels: document.querySelectorAll('#panels .rpanel').length,
    panelCharts: document.querySelectorAll('figure.rchart svg').length,
    panelLines: document.querySelectorAll('figure.rchart polyline.line').length,
    peaks: document.querySelectorAll('#peaks tbody tr').length,
    top: document.querySelectorAll('#top tbody tr').length,
    scripts: document.scripts.length,
    sites: Array.prototype.map.call(document.querySelectorAll('#top tbody code'), function (c) { return c.textContent; })
  };
  var res = document.getElementById('selftest-result');
  res.textContent = JSON.stringify(out);
  res.hidden = false;
})();
