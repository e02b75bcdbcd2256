// The browser check's page: asks navigator.gpu for an adapter and a device with all of the
// adapter's limits (and 'subgroups', 'shader-f16' where offered), checks the error metric, compiles
// every kernel variant (compile.js), runs the plans (executor.js: the self-test, then any layer
// cases), shows the results as tables and POSTs them as JSON to /results/report, where
// `cargo xtask web` waits for them. What to run comes from gen/config.json (written by the xtask);
// without it the page runs the self-test alone, so any static server can serve web/ by hand.

import { compileKernels } from './compile.js';
import { loadPlan, runPlan } from './executor.js';
import { metricSelfTest } from './metric.js';

const LIMITS_SHOWN = [
  'maxStorageBuffersPerShaderStage',
  'maxComputeWorkgroupStorageSize',
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupsPerDimension',
  'maxUniformBuffersPerShaderStage',
];

const report = {
  started: new Date().toISOString(),
  userAgent: navigator.userAgent,
  adapter: null,
  device: null,
  deviceLost: null,
  uncapturedErrors: [],
  selfTest: [],
  kernels: null,
  plans: [],
  fatal: null,
  ms: 0,
};

const status = (text) => {
  document.getElementById('status').textContent = text;
  console.log(`progress: ${text} (at ${(performance.now() / 1000).toFixed(1)} s)`);
};

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function table(headers, rows) {
  return el('table', {}, el('tr', {}, ...headers.map((h) => el('th', {}, h))), ...rows);
}

const verdictCell = (ok, text = ok ? 'pass' : 'FAIL') => el('td', { class: ok ? 'pass' : 'fail' }, text);
const fmtError = (e) => (typeof e === 'number' ? (e === 0 ? '0' : e.toExponential(2)) : String(e));

function limitsOf(limits) {
  const out = {};
  for (const key in limits) out[key] = limits[key];
  return out;
}

async function getDevice() {
  if (!navigator.gpu) throw new Error('navigator.gpu is absent: this browser offers no WebGPU here');
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error('navigator.gpu.requestAdapter() returned null: no WebGPU adapter');
  const info = adapter.info ?? {};
  report.adapter = {
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    isFallbackAdapter: info.isFallbackAdapter ?? adapter.isFallbackAdapter ?? null,
    subgroupMinSize: info.subgroupMinSize ?? null,
    subgroupMaxSize: info.subgroupMaxSize ?? null,
    features: [...adapter.features].sort(),
    limits: limitsOf(adapter.limits),
  };
  const requiredFeatures = ['subgroups', 'shader-f16'].filter((f) => adapter.features.has(f));
  const device = await adapter.requestDevice({ requiredFeatures, requiredLimits: limitsOf(adapter.limits) });
  report.device = { features: [...device.features].sort(), limits: limitsOf(device.limits) };
  device.lost.then((info) => {
    report.deviceLost = `${info.reason}: ${info.message}`;
  });
  device.addEventListener('uncapturederror', (event) => {
    if (report.uncapturedErrors.length < 20) report.uncapturedErrors.push(event.error.message);
  });
  return device;
}

/** The executor on the self-test's own plan, and again with a forward grid too small, whose
 * unwritten (poisoned) elements must fail: the executor's and the metric's self-test. */
async function selfTestPlans(device, url) {
  const { plan, base } = await loadPlan(url);
  const good = await runPlan(device, plan, base, status);
  const short = structuredClone(plan);
  short.name = `${plan.name}, forward grid cut to one workgroup`;
  short.passes.forward[0].grid = [1, 1];
  const bad = await runPlan(device, short, base, status);
  const caught = !bad.error && bad.checks.length > 0 && bad.checks.every((c) => !c.pass && c.error === Infinity);
  report.selfTest.push({
    name: 'executor: elements no kernel writes stay NaN and fail every check',
    ok: caught,
    detail: bad.error ?? bad.checks.map((c) => `${c.buffer} ${fmtError(c.error)} ${c.detail}`).join('; '),
  });
  return good;
}

function render() {
  const root = document.getElementById('results');
  root.replaceChildren();
  const a = report.adapter;
  if (a) {
    const lim = a.limits;
    root.append(
      el('h2', {}, 'Adapter'),
      el(
        'p',
        {},
        `${a.vendor || '?'} / ${a.architecture || '?'} ${a.device || ''} ${a.description || ''}`,
        a.isFallbackAdapter ? ' (fallback adapter)' : '',
      ),
      table(
        ['limit', 'value'],
        LIMITS_SHOWN.map((k) => el('tr', {}, el('td', {}, k), el('td', {}, lim[k] ?? '—'))),
      ),
      el('p', {}, `subgroups: ${a.features.includes('subgroups') ? `yes (${a.subgroupMinSize ?? '?'}–${a.subgroupMaxSize ?? '?'})` : 'no'}; shader-f16: ${a.features.includes('shader-f16') ? 'yes' : 'no'}`),
    );
  }
  if (report.fatal) root.append(el('h2', { class: 'fail' }, 'Stopped'), el('pre', { class: 'fail' }, report.fatal));
  if (report.plans.length) {
    const rows = [];
    for (const p of report.plans) {
      if (p.error) rows.push(el('tr', {}, el('td', {}, p.name), el('td', { colspan: 3 }, p.error), verdictCell(false)));
      for (const c of p.checks) {
        rows.push(
          el('tr', {}, el('td', {}, p.name), el('td', {}, `${c.buffer} (${c.after})`), el('td', {}, fmtError(c.error)), el('td', {}, fmtError(c.bar)), verdictCell(c.pass)),
        );
      }
    }
    root.append(el('h2', {}, 'Plans'), table(['case', 'tensor', 'error', 'bar', 'verdict'], rows));
  }
  if (report.selfTest.length) {
    root.append(
      el('h2', {}, 'Self-test'),
      table(['what', 'verdict'], report.selfTest.map((t) => el('tr', {}, el('td', {}, t.name), verdictCell(t.ok)))),
    );
  }
  if (report.kernels) {
    const lim = report.device?.limits ?? {};
    const rows = report.kernels.kernels.map((k) => {
      const error = k.messages.find((m) => m.type === 'error');
      const note = k.ranIn
        ? `ran in layer case ${k.ranIn}`
        : k.verdict === 'compiled'
          ? ''
          : error ? `${error.line}:${error.column} ${error.text}` : k.pipelineError ?? '';
      return el(
        'tr',
        {},
        el('td', {}, k.kernel),
        el('td', {}, k.dims ? `${k.dims[0]}×${k.dims[1]}` : 'any'),
        el('td', { class: k.fits.storage ? '' : 'fail' }, `${k.storageBuffers} / ${lim.maxStorageBuffersPerShaderStage}`),
        el('td', { class: k.fits.workgroupMemory ? '' : 'fail' }, `${k.workgroupBytes} / ${lim.maxComputeWorkgroupStorageSize}`),
        verdictCell(k.verdict === 'compiled', k.verdict),
        el('td', { class: 'note' }, note.length > 160 ? `${note.slice(0, 160)}…` : note),
      );
    });
    const byReason = new Map();
    for (const s of report.kernels.skipped) byReason.set(s.reason, [...(byReason.get(s.reason) ?? []), s.kernel]);
    root.append(
      el('h2', {}, 'Kernels (f32) in Tint'),
      table(['kernel', 'dk×dv', 'storage buffers', 'workgroup bytes', 'verdict', 'first error'], rows),
      ...[...byReason].map(([reason, names]) => el('p', {}, `Not compiled: ${names.join(', ')} (${reason}).`)),
    );
  }
}

/** JSON with ∞ and NaN kept as strings ("Infinity", "NaN"), which JSON itself cannot carry. */
function toJson(value) {
  return JSON.stringify(value, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v));
}

async function post() {
  try {
    await fetch('results/report', { method: 'POST', headers: { 'content-type': 'application/json' }, body: toJson(report) });
  } catch (e) {
    console.error(`posting the results failed: ${e}`);
  }
}

async function main() {
  const started = performance.now();
  let config = { plans: ['selftest/plan.json'], selfTest: 'selftest/plan.json', kernels: null };
  const response = await fetch('gen/config.json');
  if (response.ok) config = await response.json();
  status('requesting an adapter');
  const device = await getDevice();
  report.selfTest.push(...metricSelfTest().map((t) => ({ name: `metric: ${t.name}`, ok: t.ok })));
  for (const url of config.plans) {
    status(`plan ${url}`);
    if (url === config.selfTest) {
      report.plans.push(await selfTestPlans(device, url));
    } else {
      const { plan, base } = await loadPlan(url);
      report.plans.push(await runPlan(device, plan, base, status));
    }
    render();
  }
  if (config.kernels) {
    status('compiling kernels');
    report.kernels = await compileKernels(device, new URL(config.kernels, document.baseURI).href, status);
  }
  report.ms = performance.now() - started;
}

const finish = async () => {
  render();
  status(report.fatal ? 'stopped' : `done in ${(report.ms / 1000).toFixed(1)} s`);
  document.body.dataset.done = 'true';
  await post();
};

window.addEventListener('unhandledrejection', (event) => console.error(`unhandled rejection: ${event.reason}`));
main()
  .catch((e) => {
    report.fatal = String(e && e.stack ? e.stack : e);
  })
  .then(finish);
