/**
 * The HTML report's charts made explorable: hover values, drag to zoom, a
 * click on a legend entry to hide its series. uPlot (MIT, 51 KB minified,
 * made for time series, no dependencies) draws them on canvas from the
 * charts' own data, which the page carries as JSON in a non-executable
 * `<script type="application/json">` block. uPlot and the few lines that
 * start it are the page's one executable script, allowed by its sha256 in
 * the Content-Security-Policy, so the page still fetches nothing and runs
 * nothing else. With scripts off, the static SVG charts stay in place.
 *
 * The asset is read once, when this module loads: a renderer stays a pure
 * function of its result.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { ChartSpec, Series } from './svg-chart.js'

const require = createRequire(import.meta.url)
const asset = (file: string): string => readFileSync(require.resolve(`uplot/dist/${file}`), 'utf8')

// The minified build's banner names only its URL: the MIT notice travels with the copy.
const NOTICE = `/*! uPlot: ${/^Copyright.*$/m.exec(readFileSync(require.resolve('uplot/LICENSE'), 'utf8'))?.[0] ?? 'Leon Sorokin'}, MIT License */`
const UPLOT_JS = scriptSafe(`${NOTICE}\n${asset('uPlot.iife.min.js')}`)
const UPLOT_CSS = asset('uPlot.min.css')

/** The id of the JSON block the script reads. */
export const LIVE_DATA_ID = 'hedgebench-charts'

/**
 * Text that ends the script element early (`</script`) or switches the
 * parser into its escaped state (`<!--`) cannot be escaped inside code:
 * an asset holding one is refused rather than shipped broken.
 */
function scriptSafe(code: string): string {
  if (/<\/script|<!--/i.test(code)) throw new Error('uPlot\'s build holds "</script" or "<!--": it cannot be inlined into the HTML report')
  return code
}

/**
 * The charts' data for the JSON block. `<` is written as \u003c so that no
 * label can close the block, and U+2028/2029 escaped for any reader that
 * takes the block for JavaScript.
 */
export function liveChartData(specs: ChartSpec[]): string {
  return JSON.stringify(specs.map(liveSpec)).replace(/[<>&\u2028\u2029]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** The one executable script: uPlot, then the code that builds every chart from the JSON block. */
export const LIVE_SCRIPT = `${UPLOT_JS}\n${bootstrap()}`

/** The CSP source that allows exactly this script: its sha256, over the exact text between the tags. */
export function scriptSource(script: string): string {
  return `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`
}

export const LIVE_CSS = `${UPLOT_CSS}
figure.live > svg { display: none; }
.live-chart { max-width: 100%; } .live-title { font-weight: 600; font-size: 14px; margin: 0 0 4px 8px; }
.live-chart .u-legend { font-size: 12px; text-align: left; margin: 0 0 0 8px; font-variant-numeric: tabular-nums; }
.live-chart .u-legend th, .live-chart .u-legend td { border: 0; background: none; padding: 1px 2px; text-align: left; white-space: nowrap; }
.live-chart .u-inline tr { margin-right: 14px; }
.live-chart .u-legend .u-marker { width: 2.2em; height: 0; }
.live-hint, .live-marks { color: #555; font-size: 12px; margin: 2px 0 0 8px; }
`

interface LiveSeries {
  label: string
  color: string
  dash?: number[]
  step?: true
  flat?: true
  x: number[]
  y: Array<number | null>
}

/** A chart's data as the script reads it: every series that is drawn as a line, with its points as two columns. */
function liveSpec(spec: ChartSpec): object {
  return {
    title: spec.title,
    xLabel: spec.xLabel,
    x: spec.x ?? 'number',
    ...(spec.x === 'percentile' && spec.xTicks ? { xTicks: spec.xTicks.map((t) => [round(t.value), t.label]) } : {}),
    ...(spec.xMarks && spec.xMarks.length > 0 ? { marks: spec.xMarks.map((m) => [round(m.x), m.color, m.label]) } : {}),
    panels: spec.panels.map((p) => ({
      label: p.yLabel,
      unit: p.unit ?? 'number',
      log: p.yLog === true,
      series: p.series.filter((s) => !s.noLine && s.points.length > 0).map(liveSeries),
    })),
  }
}

function liveSeries(s: Series): LiveSeries {
  const dash = s.dash ?? (s.dashed ? '6 4' : '')
  return {
    label: s.label ?? s.id,
    color: s.color,
    ...(dash ? { dash: dash.split(/\s+/).map(Number) } : {}),
    ...(s.step ? { step: true as const } : {}),
    ...(s.flat ? { flat: true as const } : {}),
    x: s.points.map((p) => round(p[0])),
    y: s.points.map((p) => (p[1] === null || !Number.isFinite(p[1]) ? null : round(p[1]))),
  }
}

/** Six significant digits keep the JSON small and every value the charts show. */
function round(v: number): number {
  return Number(v.toPrecision(6))
}

/**
 * The browser side, as plain ES2017 text (it never runs in Node). One chart
 * is one uPlot per panel, stacked, sharing the cursor and the x zoom. A
 * chart that fails to build is removed and its SVG shown again.
 */
function bootstrap(): string {
  return `(function () {
  'use strict';
  var block = document.getElementById(${JSON.stringify(LIVE_DATA_ID)});
  if (!block || typeof uPlot !== 'function') return;
  var specs = JSON.parse(block.textContent);
  var all = [];
  function num(v) { return String(Number(v.toPrecision(3))); }
  function ms(v) { return v == null ? '-' : v >= 1000 ? num(v / 1000) + ' s' : num(v) + ' ms'; }
  function pctAt(x) { return 'p' + Number((100 * (1 - Math.pow(10, -x))).toPrecision(6)); }
  var Y = {
    ms: ms,
    rate: function (v) { return v == null ? '-' : Math.round(v) + '/s'; },
    pct: function (v) { return v == null ? '-' : v.toFixed(2) + ' %'; },
    number: function (v) { return v == null ? '-' : num(v); }
  };
  var X = {
    seconds: function (v) { return v == null ? '-' : num(v) + ' s'; },
    percentile: function (v) { return v == null ? '-' : pctAt(v); },
    'log-ms': function (v) { return v == null ? '-' : ms(Math.pow(10, v)); },
    number: function (v) { return v == null ? '-' : num(v); }
  };
  /* 1-2-5 steps inside [lo, hi], or only the decades when they would crowd the axis. */
  function steps(lo, hi) {
    var out = [];
    if (!(lo > 0) || !(hi > lo)) return [lo, hi];
    for (var d = Math.floor(Math.log10(lo)); d <= Math.ceil(Math.log10(hi)); d++) {
      [1, 2, 5].forEach(function (m) { var v = m * Math.pow(10, d); if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v); });
    }
    if (out.length > 9) out = out.filter(function (v) { return Math.abs(Math.log10(v) % 1) < 1e-9; });
    return out.length >= 2 ? out : [lo, hi];
  }
  function xAxis(spec, last) {
    var a = { stroke: '#444', grid: { stroke: '#e5e5e5' }, ticks: { stroke: '#ccc' }, values: function (u, splits) { return splits.map(X[spec.x]); } };
    if (last) { a.label = spec.xLabel; a.labelSize = 24; a.size = 40; }
    if (spec.x === 'percentile') {
      a.splits = function (u, i, min, max) {
        var t = spec.xTicks.map(function (t) { return t[0]; }).filter(function (v) { return v >= min - 1e-9 && v <= max + 1e-9; });
        return t.length >= 2 ? t : [0, 1, 2, 3].map(function (k) { return min + (k * (max - min)) / 3; });
      };
    }
    if (spec.x === 'log-ms') {
      a.splits = function (u, i, min, max) { return steps(Math.pow(10, min), Math.pow(10, max)).map(Math.log10); };
    }
    return a;
  }
  function yAxis(panel) {
    var a = { label: panel.label, labelSize: 24, size: 64, stroke: '#444', grid: { stroke: '#e5e5e5' }, ticks: { stroke: '#ccc' },
      values: function (u, splits) { return splits.map(panel.unit === 'ms' ? ms : panel.unit === 'pct' ? function (v) { return num(v) + ' %'; } : num); } };
    if (panel.log) a.splits = function (u, i, min, max) { return steps(min, max); };
    return a;
  }
  function data(panel) {
    var joined = uPlot.join(panel.series.map(function (s) { return [s.x, s.y]; }));
    panel.series.forEach(function (s, i) {
      if (s.flat) joined[i + 1] = joined[0].map(function () { return s.y[0]; });
    });
    return joined;
  }
  function build(fig, spec, index) {
    var box = document.createElement('div');
    box.className = 'live-chart';
    var title = document.createElement('div');
    title.className = 'live-title';
    title.textContent = spec.title;
    box.appendChild(title);
    fig.insertBefore(box, fig.firstChild);
    var width = box.clientWidth || 860;
    var height = spec.panels.length > 1 ? 210 : 260;
    var plots = [];
    var syncing = false;
    spec.panels.forEach(function (panel, p) {
      var last = p === spec.panels.length - 1;
      var el = document.createElement('div');
      box.appendChild(el);
      var series = [{ label: spec.x === 'percentile' ? 'percentile' : spec.x === 'log-ms' ? 'bin from' : spec.x === 'seconds' ? 'time' : 'x', value: function (u, v) { return X[spec.x](v); } }];
      panel.series.forEach(function (s) {
        series.push({ label: s.label, stroke: s.color, width: 1.6, dash: s.dash, spanGaps: false,
          paths: s.step ? uPlot.paths.stepped({ align: 1 }) : undefined,
          points: s.step ? { show: false } : {},
          value: function (u, v) { return Y[panel.unit](v); } });
      });
      var opts = {
        width: width, height: height + (last ? 16 : 0),
        scales: { x: { time: false }, y: panel.log ? { distr: 3, log: 10 } : {} },
        axes: [xAxis(spec, last), yAxis(panel)],
        series: series,
        cursor: { sync: { key: 'hedgebench-' + index }, drag: { x: true, y: false } },
        legend: { live: true, markers: { width: 1.5, dash: function (u, i) { var d = u.series[i].dash; return d && d.length ? (d[0] <= 3 ? 'dotted' : 'dashed') : 'solid'; } } },
        hooks: {
          setScale: [function (u, key) {
            if (key !== 'x' || syncing) return;
            syncing = true;
            plots.forEach(function (o) { if (o !== u) o.setScale('x', { min: u.scales.x.min, max: u.scales.x.max }); });
            syncing = false;
          }],
          draw: [function (u) { (spec.marks || []).forEach(function (m) { mark(u, m); }); }]
        }
      };
      plots.push(new uPlot(opts, data(panel), el));
    });
    if (spec.marks) {
      var list = document.createElement('div');
      list.className = 'live-marks';
      list.textContent = 'dotted lines: ' + spec.marks.map(function (m) { return m[2]; }).join('; ');
      box.appendChild(list);
    }
    var hint = document.createElement('div');
    hint.className = 'live-hint';
    hint.textContent = 'Hover for values; drag across a chart to zoom, double-click to zoom out; click a legend entry to hide or show it.';
    box.appendChild(hint);
    box.plots = plots;
    all.push(box);
  }
  function mark(u, m) {
    var x = u.valToPos(m[0], 'x', true);
    if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
    var ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = m[1];
    ctx.lineWidth = devicePixelRatio;
    ctx.setLineDash([2 * devicePixelRatio, 3 * devicePixelRatio]);
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.restore();
  }
  document.querySelectorAll('figure[data-live]').forEach(function (fig) {
    var index = Number(fig.getAttribute('data-live'));
    var spec = specs[index];
    if (!spec) return;
    fig.classList.add('live');
    try {
      build(fig, spec, index);
    } catch (err) {
      var box = fig.querySelector('.live-chart');
      if (box) box.remove();
      fig.classList.remove('live');
      console.error('hedgebench: a chart could not be drawn, the static one is shown: ' + err);
    }
  });
  var pending = 0;
  window.addEventListener('resize', function () {
    clearTimeout(pending);
    pending = setTimeout(function () {
      all.forEach(function (box) {
        var width = box.clientWidth;
        box.plots.forEach(function (u) { u.setSize({ width: width, height: u.height }); });
      });
    }, 150);
  });
})();`
}
