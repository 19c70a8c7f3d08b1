(function () {
  'use strict';
  var t0 = performance.now();
  var meta = JSON.parse(document.getElementById('lod').textContent);
  var aggs = meta.aggs, N = meta.n;
  var panel = document.getElementById('panel');
  var title = document.getElementById('panel-title');
  var summary = document.getElementById('panel-body');
  var tree = document.getElementById('lod-tree');
  var C = null;
  var shown = -1;

  function bytesOf(id) {
    var text = document.getElementById(id).textContent;
    if (Uint8Array.fromBase64) { return Uint8Array.fromBase64(text); }
    var bin = atob(text), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { out[i] = bin.charCodeAt(i); }
    return out;
  }
  var littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
  // Column id's bytes with each `size`-byte word in this machine's order (the page's are
  // little-endian).
  function words(id, size) {
    var b = bytesOf(id);
    if (!littleEndian) {
      for (var i = 0; i + size <= b.length; i += size) { b.subarray(i, i + size).reverse(); }
    }
    return b;
  }
  function u32(id) {
    var b = words(id, 4);
    return new Uint32Array(b.buffer, b.byteOffset, b.length >> 2);
  }
  // The columns, decoded on first use; predecessors are the successor lists inverted.
  function columns() {
    if (C) { return C; }
    var c = { order: u32('col-order'), local: u32('col-local'), flags: bytesOf('col-flags'),
      soff: u32('col-soff'), succ: u32('col-succ'), block: new Map() };
    var spans = words('col-span', 8);
    c.span = new Float64Array(spans.buffer, spans.byteOffset, spans.length >> 3);
    var blocks = u32('col-block'), i, a, p, k;
    for (i = 0; i + 1 < blocks.length; i += 2) { c.block.set(blocks[i], blocks[i + 1]); }
    c.agg = new Uint32Array(N); c.pos = new Uint32Array(N);
    for (a = 0; a < aggs.length; a++) {
      for (p = aggs[a].off; p < aggs[a].off + aggs[a].count; p++) { c.agg[c.order[p]] = a; c.pos[c.order[p]] = p; }
    }
    c.poff = new Uint32Array(N + 1);
    for (k = 0; k < c.succ.length; k++) { c.poff[c.succ[k] + 1]++; }
    for (i = 0; i < N; i++) { c.poff[i + 1] += c.poff[i]; }
    c.pred = new Uint32Array(c.succ.length);
    var fill = c.poff.slice(0, N);
    for (i = 0; i < N; i++) {
      for (k = c.soff[i]; k < c.soff[i + 1]; k++) { c.pred[fill[c.succ[k]]++] = i; }
    }
    C = c;
    return c;
  }

  function disp(i) {
    var ring = aggs[C.agg[i]].ring, local = C.local[i];
    return meta.ring0 ? String(local) : '(' + ring + ', ' + local + ')';
  }
  function fanin(i) { return C.poff[i + 1] - C.poff[i]; }
  function fanout(i) { return C.soff[i + 1] - C.soff[i]; }
  function taskLabel(i) {
    var a = aggs[C.agg[i]], f = C.flags[i];
    var mark = (a.kind === 'alloc' || (f & 1)) ? '\u{1f525} ' : ((f & 2) ? '\u2b50 ' : '');
    return mark + disp(i) + ' \u00b7 ' + a.name + ' \u2193' + fanin(i) + ' \u2191' + fanout(i);
  }

  // Aggregate a's neighbours on one side, most dependencies first, one to a line.
  function neighbours(a, side) {
    var list = meta.edges.filter(function (e) { return e[side] === a; });
    var total = list.reduce(function (s, e) { return s + e[2]; }, 0);
    list.sort(function (x, y) { return y[2] - x[2]; });
    var lines = list.slice(0, 12).map(function (e) { return '  ' + aggs[e[1 - side]].label + '  x' + e[2]; });
    if (list.length > 12) { lines.push('  ... ' + (list.length - 12) + ' more'); }
    return [total + (side ? ' from ' : ' to ') + list.length + ' aggregates'].concat(lines).join('\n');
  }
  function aggSummary(a) {
    var d = aggs[a];
    return [
      'ring ' + d.ring + '  kind ' + d.kind + (d.kernel_ids.length ? '  kernel_ids [' + d.kernel_ids.join(', ') + ']' : ''),
      d.count + ' tasks (' + d.spmd + ' SPMD, ' + d.early + ' early dispatch)',
      d.internal + ' dependencies inside',
      'fanin ' + neighbours(a, 1),
      'fanout ' + neighbours(a, 0),
    ].join('\n');
  }

  function select(a) {
    var old = document.querySelector('#nodes g.agg.selected');
    if (old) { old.classList.remove('selected'); }
    document.querySelectorAll('#edges path.hl').forEach(function (p) { p.classList.remove('hl'); });
    if (a < 0) { shown = -1; return; }
    document.getElementById('A' + a).classList.add('selected');
    document.querySelectorAll('#edges path[data-from="' + a + '"], #edges path[data-to="' + a + '"]')
      .forEach(function (p) { p.classList.add('hl'); });
    columns();
    shown = a;
    title.textContent = aggs[a].label;
    summary.textContent = aggSummary(a);
    tree.textContent = '';
    tree.appendChild(list(aggs[a].off, aggs[a].off + aggs[a].count));
    panel.hidden = false;
  }

  // A range [lo, hi) of positions in `order`: its child ranges, or null for a leaf. A range
  // d levels above its tasks splits into f about equal parts, f the d-th root of its leaves.
  function childRanges(lo, hi) {
    var n = hi - lo;
    if (n <= meta.leaf) { return null; }
    var d = 1, below = meta.leaf;
    while (below * meta.fan < n) { d++; below *= meta.fan; }
    var f = Math.min(meta.fan, Math.ceil(Math.pow(n / meta.leaf, 1 / d)));
    while (Math.ceil(n / f) > below) { f++; }
    var chunk = Math.ceil(n / f), out = [];
    for (var p = lo; p < hi; p += chunk) { out.push([p, Math.min(hi, p + chunk)]); }
    return out;
  }
  function button(cls, text) {
    var li = document.createElement('li'), b = document.createElement('button');
    b.className = cls; b.textContent = text; li.appendChild(b);
    return li;
  }
  function list(lo, hi) {
    var ul = document.createElement('ul'), ranges = childRanges(lo, hi), p;
    if (ranges) {
      ranges.forEach(function (r) {
        var sin = 0, sout = 0;
        for (p = r[0]; p < r[1]; p++) { sin += fanin(C.order[p]); sout += fanout(C.order[p]); }
        var li = button('range', '\u25b8 ' + disp(C.order[r[0]]) + ' \u2026 ' + disp(C.order[r[1] - 1]) +
          ' \u00b7 ' + (r[1] - r[0]) + ' tasks \u2193' + sin + ' \u2191' + sout);
        li.dataset.lo = r[0]; li.dataset.hi = r[1];
        ul.appendChild(li);
      });
    } else {
      for (p = lo; p < hi; p++) {
        var li = button('task', taskLabel(C.order[p]));
        li.dataset.node = C.order[p];
        ul.appendChild(li);
      }
    }
    return ul;
  }
  function toggleRange(li, open) {
    var b = li.firstChild, isOpen = li.children.length > 1;
    if (open === isOpen) { return; }
    if (isOpen) { li.removeChild(li.lastChild); b.textContent = '\u25b8' + b.textContent.slice(1); }
    else { li.appendChild(list(+li.dataset.lo, +li.dataset.hi)); b.textContent = '\u25be' + b.textContent.slice(1); }
  }

  function links(box, label, nodes, cls) {
    var byName = new Map();
    nodes.forEach(function (j) { var n = aggs[C.agg[j]].name; byName.set(n, (byName.get(n) || 0) + 1); });
    var parts = [];
    byName.forEach(function (v, k) { parts.push(k + ' x' + v); });
    box.appendChild(document.createTextNode('\n' + label + ' ' + nodes.length + ': ' + parts.join(', ') + '\n  '));
    nodes.slice(0, 200).forEach(function (j, n) {
      if (n) { box.appendChild(document.createTextNode(', ')); }
      var a = document.createElement('a');
      a.href = '#'; a.className = 'goto ' + cls; a.dataset.node = j; a.textContent = disp(j);
      box.appendChild(a);
    });
    if (nodes.length > 200) { box.appendChild(document.createTextNode(', ...')); }
  }
  function detail(i) {
    var a = aggs[C.agg[i]], box = document.createElement('div'), b = C.block.get(i) || 1;
    box.className = 'task-detail';
    var ring = a.ring, id = ring * 4294967296 + C.local[i];
    box.appendChild(document.createTextNode([
      'task ' + disp(i) + '  (id ' + id + ')',
      'kind ' + a.kind + (a.kernel_ids.length ? '  kernel_ids [' + a.kernel_ids.join(', ') + ']' : ''),
      'kernel ' + a.name + (b > 1 ? '  SPMD block num ' + b : '') + ((C.flags[i] & 1) ? '  early dispatch' : ''),
    ].join('\n')));
    var s0 = C.span[2 * i], s1 = C.span[2 * i + 1];
    if (!isNaN(s0)) {
      box.appendChild(document.createTextNode('\nmeasured ' + s0.toFixed(3) + ' .. ' + s1.toFixed(3) + ' us (' + (s1 - s0).toFixed(3) + ' us)'));
    }
    links(box, 'fanin', Array.from(C.pred.subarray(C.poff[i], C.poff[i + 1])), 'pred');
    links(box, 'fanout', Array.from(C.succ.subarray(C.soff[i], C.soff[i + 1])), 'succ');
    return box;
  }
  function toggleTask(li, open) {
    var isOpen = li.children.length > 1;
    if (open === isOpen) { return; }
    if (isOpen) { li.removeChild(li.lastChild); } else { li.appendChild(detail(+li.dataset.node)); }
  }

  // Opens task i's aggregate, the ranges down to it and its details.
  function navigate(i) {
    columns();
    if (shown !== C.agg[i]) { select(C.agg[i]); }
    var p = C.pos[i], ul = tree.firstChild;
    for (;;) {
      var li = null;
      for (var k = 0; k < ul.children.length && !li; k++) {
        var c = ul.children[k], d = c.dataset;
        if (d.node !== undefined ? +d.node === i : (+d.lo <= p && p < +d.hi)) { li = c; }
      }
      if (!li) { return null; }
      if (li.dataset.node === undefined) { toggleRange(li, true); ul = li.lastChild; continue; }
      var cur = tree.querySelector('li.current');
      if (cur) { cur.classList.remove('current'); }
      li.classList.add('current');
      toggleTask(li, true);
      if (li.scrollIntoView) { li.scrollIntoView({ block: 'nearest' }); }
      return li;
    }
  }

  tree.addEventListener('click', function (e) {
    var t = e.target.closest ? e.target.closest('button, a.goto') : null;
    if (!t) { return; }
    e.preventDefault();
    if (t.tagName === 'A') { navigate(+t.dataset.node); return; }
    var li = t.parentNode;
    if (li.dataset.node !== undefined) { toggleTask(li); } else { toggleRange(li); }
  });
  var svg = document.getElementById('graph'), down = null;
  svg.addEventListener('pointerdown', function (e) { down = [e.clientX, e.clientY]; });
  document.getElementById('nodes').addEventListener('click', function (e) {
    var moved = down && Math.abs(e.clientX - down[0]) + Math.abs(e.clientY - down[1]) > 2;
    down = null;
    var g = e.target.closest ? e.target.closest('g.agg') : null;
    if (g && !moved) { select(+g.dataset.agg); }
  });
  document.getElementById('close').addEventListener('click', function () { select(-1); });
  document.addEventListener('keydown', function (e) { if (e.key === 'Escape') { select(-1); } });
  var tReady = performance.now();

  if (/[?&]selftest\b/.test(location.search) && aggs.length) {
    var res = document.getElementById('selftest-result');
    var out = res.textContent ? JSON.parse(res.textContent) : {};
    var L = out.lod = { scriptStartMs: t0, readyMs: tReady, n: N,
      aggregates: document.querySelectorAll('#nodes g.agg').length,
      total: aggs.reduce(function (s, a) { return s + a.count; }, 0) };
    var big = 0;
    aggs.forEach(function (a, k) { if (a.count > aggs[big].count) { big = k; } });
    var t1 = performance.now();
    document.getElementById('A' + big).dispatchEvent(new MouseEvent('click', { bubbles: true }));
    L.firstExpandMs = performance.now() - t1;
    L.panel = !panel.hidden; L.title = title.textContent; L.count = aggs[big].count;
    L.hl = document.querySelectorAll('#edges path.hl').length;
    var ul = tree.firstChild, depth = 0, b;
    L.topItems = ul.children.length;
    L.topSum = Array.from(ul.children).reduce(function (s, li) {
      return s + (li.dataset.node !== undefined ? 1 : +li.dataset.hi - +li.dataset.lo);
    }, 0);
    while ((b = ul.querySelector(':scope > li > button.range'))) { b.click(); depth++; ul = b.parentNode.lastChild; }
    L.depth = depth; L.leafTasks = ul.children.length;
    b = ul.querySelector('button.task');
    b.click();
    var box = b.parentNode.querySelector('.task-detail');
    L.task = b.textContent; L.detail = box.textContent;
    L.preds = Array.from(box.querySelectorAll('a.pred')).map(function (a) { return a.textContent; });
    L.succs = Array.from(box.querySelectorAll('a.succ')).map(function (a) { return a.textContent; });
    var link = box.querySelector('a.succ') || box.querySelector('a.pred');
    if (link) {
      L.followed = link.textContent;
      var t2 = performance.now();
      link.click();
      L.followMs = performance.now() - t2;
      var cur = tree.querySelector('li.current > button.task');
      L.landed = cur ? cur.textContent : null;
      L.landedTitle = title.textContent;
    }
    document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    L.closed = panel.hidden && !document.querySelector('#nodes g.agg.selected');
    res.textContent = JSON.stringify(out);
    res.hidden = false;
  }
})();
