(function () {
  'use strict';
  var svg = document.getElementById('graph');
  var vp = document.getElementById('viewport');
  var W = +svg.getAttribute('data-w') || 1, H = +svg.getAttribute('data-h') || 1;
  var stats = JSON.parse(document.getElementById('stats').textContent);
  var view = { s: 1, x: 0, y: 0 };
  function apply() {
    vp.setAttribute('transform', 'translate(' + view.x + ',' + view.y + ') scale(' + view.s + ')');
  }
  function fit() {
    var r = svg.getBoundingClientRect(), m = 12;
    var s = Math.min((r.width - 2 * m) / W, (r.height - 2 * m) / H);
    if (!isFinite(s) || s <= 0) { s = 1; }
    view.s = s; view.x = (r.width - W * s) / 2; view.y = (r.height - H * s) / 2;
    apply();
  }
  function reset() { view.s = 1; view.x = 0; view.y = 0; apply(); }
  function zoomAt(cx, cy, factor) {
    var s = Math.min(40, Math.max(0.005, view.s * factor));
    factor = s / view.s;
    view.x = cx - (cx - view.x) * factor; view.y = cy - (cy - view.y) * factor; view.s = s;
    apply();
  }
  var drag = null;
  svg.addEventListener('pointerdown', function (e) {
    if (e.button !== 0) { return; }
    drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moved: false };
    svg.classList.add('dragging');
  });
  window.addEventListener('pointermove', function (e) {
    if (!drag) { return; }
    var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 2) { drag.moved = true; }
    view.x = drag.vx + dx; view.y = drag.vy + dy; apply();
  });
  window.addEventListener('pointerup', function () {
    if (drag) { svg.classList.remove('dragging'); lastDragMoved = drag.moved; }
    drag = null;
  });
  var lastDragMoved = false;
  svg.addEventListener('wheel', function (e) {
    e.preventDefault();
    var r = svg.getBoundingClientRect();
    zoomAt(e.clientX - r.left, e.clientY - r.top, Math.exp(-e.deltaY * 0.0015));
  }, { passive: false });
  document.addEventListener('keydown', function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (e.key === 'f' || e.key === 'F') { fit(); }
    else if (e.key === 'r' || e.key === 'R') { reset(); }
    else if (e.key === 'Escape') { hidePanel(); }
  });
  var panel = document.getElementById('panel');
  var selected = null;
  function hidePanel() {
    panel.hidden = true;
    if (selected) { selected.classList.remove('selected'); selected = null; }
  }
  document.getElementById('close').addEventListener('click', hidePanel);
  function show(node) {
    var d = stats[node.id];
    if (!d) { return; }
    if (selected) { selected.classList.remove('selected'); }
    selected = node; node.classList.add('selected');
    document.getElementById('panel-title').textContent = d.label;
    var lines = [
      'task ' + d.task + '  (id ' + d.task_id + ')',
      'kind ' + d.kind + (d.kernel_ids.length ? '  kernel_ids [' + d.kernel_ids.join(', ') + ']' : ''),
      'kernel ' + d.name_hint + (d.block_num > 1 ? '  SPMD block num ' + d.block_num : ''),
    ];
    if (d.start_us !== undefined) {
      lines.push('measured ' + d.start_us.toFixed(3) + ' .. ' + d.end_us.toFixed(3) + ' us (' + (d.end_us - d.start_us).toFixed(3) + ' us) on cores ' + d.cores.join(', '));
    }
    lines.push('', 'fanin ' + d.fanin + ': ' + d.pred_by_hint.map(function (p) { return p[0] + ' x' + p[1]; }).join(', '));
    lines.push('  ' + d.preds.join(', ') + (d.preds.length < d.fanin ? ', ...' : ''));
    lines.push('fanout ' + d.fanout + ': ' + d.succ_by_hint.map(function (p) { return p[0] + ' x' + p[1]; }).join(', '));
    lines.push('  ' + d.succs.join(', ') + (d.succs.length < d.fanout ? ', ...' : ''));
    document.getElementById('panel-body').textContent = lines.join('\n');
    panel.hidden = false;
  }
  document.getElementById('nodes').addEventListener('click', function (e) {
    if (lastDragMoved) { lastDragMoved = false; return; }
    var n = e.target.closest ? e.target.closest('g.node') : null;
    if (n) { show(n); }
  });
  fit();

  if (/[?&]selftest\b/.test(location.search)) {
    var out = {};
    var snap = function () { return { s: view.s, x: view.x, y: view.y }; };
    var key = function (k) { document.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true })); };
    out.nodes = document.querySelectorAll('#nodes g.node').length;
    out.edges = document.querySelectorAll('#edges path.edge').length;
    out.scripts = document.scripts.length;
    out.width = W; out.height = H;
    key('r'); out.afterR = snap();
    key('f'); out.afterF = snap();
    var r = svg.getBoundingClientRect(), b = vp.getBoundingClientRect();
    out.fits = b.left >= r.left - 1 && b.top >= r.top - 1 && b.right <= r.right + 1 && b.bottom <= r.bottom + 1;
    var before = snap();
    svg.dispatchEvent(new PointerEvent('pointerdown', { clientX: 100, clientY: 100, button: 0, bubbles: true }));
    window.dispatchEvent(new PointerEvent('pointermove', { clientX: 140, clientY: 125, bubbles: true }));
    window.dispatchEvent(new PointerEvent('pointerup', { clientX: 140, clientY: 125, bubbles: true }));
    out.drag = { dx: view.x - before.x, dy: view.y - before.y };
    lastDragMoved = false;
    var s0 = view.s;
    svg.dispatchEvent(new WheelEvent('wheel', { deltaY: -200, clientX: r.left + 50, clientY: r.top + 50, bubbles: true, cancelable: true }));
    out.zoomIn = view.s > s0;
    key('r'); out.reset = snap();
    var first = document.querySelector('#nodes g.node');
    if (first) {
      first.dispatchEvent(new MouseEvent('click', { bubbles: true }));
      out.panel = !panel.hidden;
      out.panelTitle = document.getElementById('panel-title').textContent;
    }
    out.firstText = first ? first.querySelector('text').textContent : null;
    var res = document.getElementById('selftest-result');
    res.textContent = JSON.stringify(out);
    res.hidden = false;
  }
})();
