// A generic executor of a layer plan: which shaders, which buffers, which dispatches in which
// order, and which buffers to compare with which expected values, all as plain data (web/README.md
// gives the format). It knows nothing of the layer: the plan says everything, so one small file runs
// any case that gdn-wgsl's pass description is written out for.
//
// For a plan it creates every buffer (its data, else NaN when poisoned, else zero), runs the forward
// dispatches in one compute pass, reads back the checks marked "forward" and judges them with the
// metric of OPERATOR.md (metric.js), then the same for the backward. Every kernel's entry point is
// `main`; dispatch i binds bindings[j] to slot j of group 0, through a bind group layout built from
// the binding types the plan gives (no 'auto' layout, so that what the plan says is what runs).

import { passes, relativeError, worstElement } from './metric.js';

/** The phases a plan may have, in the order they run. */
export const PHASES = ['forward', 'backward'];

const BINDING_TYPES = new Set(['read-only-storage', 'storage', 'uniform']);

async function fetchChecked(url, what) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`fetching ${what} ${url}: HTTP ${response.status}`);
  return response;
}

/** Fetches and parses the plan at `url` (relative paths in it are relative to it). */
export async function loadPlan(url) {
  const absolute = new URL(url, document.baseURI).href;
  const plan = await (await fetchChecked(absolute, 'the plan')).json();
  return { plan, base: absolute };
}

/** Throws a readable error for the first thing in `plan` the executor cannot run. */
export function validatePlan(plan) {
  const fail = (message) => {
    throw new Error(`plan ${JSON.stringify(plan.name ?? '?')}: ${message}`);
  };
  if (typeof plan.name !== 'string') fail('no "name"');
  if (!plan.shaders || typeof plan.shaders !== 'object') fail('no "shaders" object');
  if (!Array.isArray(plan.buffers)) fail('no "buffers" list');
  const buffers = new Map();
  for (const b of plan.buffers) {
    if (typeof b.name !== 'string') fail(`a buffer without a name: ${JSON.stringify(b)}`);
    if (buffers.has(b.name)) fail(`buffer ${b.name} declared twice`);
    if (!Number.isInteger(b.bytes) || b.bytes <= 0) fail(`buffer ${b.name}: "bytes" must be a positive integer`);
    if (b.usage !== 'storage' && b.usage !== 'uniform') fail(`buffer ${b.name}: usage ${b.usage} (storage or uniform)`);
    buffers.set(b.name, b);
  }
  const passes = plan.passes ?? {};
  for (const phase of Object.keys(passes)) {
    if (!PHASES.includes(phase)) fail(`unknown phase "${phase}" (${PHASES.join(', ')})`);
    passes[phase].forEach((dispatch, i) => {
      const where = `${phase} dispatch ${i} (${dispatch.kernel})`;
      if (!(dispatch.kernel in plan.shaders)) fail(`${where}: kernel not in "shaders"`);
      const grid = dispatch.grid;
      if (!Array.isArray(grid) || grid.length < 1 || grid.length > 3 || !grid.every((n) => Number.isInteger(n) && n >= 0)) {
        fail(`${where}: grid ${JSON.stringify(grid)} is not 1 to 3 whole numbers`);
      }
      if (!Array.isArray(dispatch.bindings)) fail(`${where}: no "bindings" list`);
      dispatch.bindings.forEach((binding, slot) => {
        const buffer = buffers.get(binding.buffer);
        if (!buffer) fail(`${where}: slot ${slot} binds unknown buffer ${binding.buffer}`);
        if (!BINDING_TYPES.has(binding.type)) fail(`${where}: slot ${slot} has type ${binding.type}`);
        if ((binding.type === 'uniform') !== (buffer.usage === 'uniform')) {
          fail(`${where}: slot ${slot} binds ${buffer.usage} buffer ${buffer.name} as ${binding.type}`);
        }
      });
    });
  }
  for (const check of plan.checks ?? []) {
    const buffer = buffers.get(check.buffer);
    if (!buffer) fail(`a check of unknown buffer ${check.buffer}`);
    if (buffer.usage !== 'storage') fail(`check of ${check.buffer}: only storage buffers are read back`);
    if (!PHASES.includes(check.after)) fail(`check of ${check.buffer}: "after" is ${check.after}`);
    if (typeof check.expected !== 'string') fail(`check of ${check.buffer}: no "expected" file`);
    if (typeof check.bar !== 'number' || !(check.bar >= 0)) fail(`check of ${check.buffer}: "bar" must be a number ≥ 0`);
  }
}

/** Runs an error scope around `body`; throws the first validation, out-of-memory or internal
 * error it caught, with `what` in front. */
async function scoped(device, what, body) {
  const filters = ['validation', 'out-of-memory', 'internal'];
  for (const f of filters) device.pushErrorScope(f);
  let value;
  let thrown = null;
  try {
    value = await body();
  } catch (e) {
    thrown = e;
  }
  const errors = [];
  for (let i = 0; i < filters.length; i++) errors.push(await device.popErrorScope());
  if (thrown) throw new Error(`${what}: ${thrown && thrown.message ? thrown.message : thrown}`);
  const error = errors.find((e) => e);
  if (error) throw new Error(`${what}: ${error.constructor.name}: ${error.message}`);
  return value;
}

/** Copies the storage buffers `names` to mappable ones and returns their contents as f32. */
async function readBack(device, buffers, names) {
  const encoder = device.createCommandEncoder();
  const staging = names.map((name) => {
    const source = buffers.get(name);
    const copy = device.createBuffer({ size: source.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    encoder.copyBufferToBuffer(source, 0, copy, 0, source.size);
    return copy;
  });
  device.queue.submit([encoder.finish()]);
  const out = new Map();
  await Promise.all(staging.map((s) => s.mapAsync(GPUMapMode.READ)));
  names.forEach((name, i) => {
    out.set(name, new Float32Array(staging[i].getMappedRange().slice(0)));
    staging[i].destroy();
  });
  return out;
}

/**
 * Runs `plan` (an object, its relative paths resolved against `base`) on `device`. Returns
 * { name, ok, error, checks: [{ buffer, after, error, bar, pass, detail }], ms: { phase: ms } }:
 * `error` is the reason the plan could not run (then `ok` is false), each check its metric.
 */
export async function runPlan(device, plan, base, onProgress = () => {}) {
  const result = { name: plan.name ?? '?', ok: false, error: null, checks: [], ms: {} };
  const created = [];
  try {
    validatePlan(plan);
    const url = (path) => new URL(path, base).href;
    const checks = plan.checks ?? [];
    // Everything fetched first, in parallel.
    const [shaderCode, bufferData, expected] = await Promise.all([
      Promise.all(Object.entries(plan.shaders).map(async ([k, p]) => [k, await (await fetchChecked(url(p), `shader ${k}`)).text()])),
      Promise.all(plan.buffers.map(async (b) => (b.data ? (await fetchChecked(url(b.data), `data of ${b.name}`)).arrayBuffer() : null))),
      Promise.all(checks.map(async (c) => new Float32Array(await (await fetchChecked(url(c.expected), `expected ${c.buffer}`)).arrayBuffer()))),
    ]);

    onProgress(`${result.name}: compiling ${shaderCode.length} shaders`);
    const modules = new Map();
    for (const [kernel, code] of shaderCode) {
      const module = await scoped(device, `shader ${kernel}`, async () => device.createShaderModule({ code, label: kernel }));
      const info = await module.getCompilationInfo();
      const errors = info.messages.filter((m) => m.type === 'error');
      if (errors.length) {
        throw new Error(`shader ${kernel} does not compile: ${errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('; ')}`);
      }
      modules.set(kernel, module);
    }

    const buffers = new Map();
    plan.buffers.forEach((b, i) => {
      const size = Math.ceil(b.bytes / 4) * 4;
      const usage =
        b.usage === 'uniform'
          ? GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST
          : GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
      const buffer = device.createBuffer({ size, usage, label: b.name });
      created.push(buffer);
      const contents = new Uint8Array(size);
      if (b.poison && b.usage === 'storage') new Float32Array(contents.buffer).fill(NaN);
      const data = bufferData[i];
      if (data) {
        if (data.byteLength > b.bytes) throw new Error(`data of ${b.name} has ${data.byteLength} bytes, the buffer ${b.bytes}`);
        contents.set(new Uint8Array(data));
      }
      device.queue.writeBuffer(buffer, 0, contents);
      buffers.set(b.name, buffer);
    });

    // One pipeline per kernel and layout, built from the binding types the plan gives.
    const pipelines = new Map();
    const pipelineFor = async (dispatch) => {
      const types = dispatch.bindings.map((b) => b.type);
      const key = `${dispatch.kernel}|${types.join(',')}`;
      if (!pipelines.has(key)) {
        const entries = types.map((type, binding) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type } }));
        const pipeline = await scoped(device, `pipeline ${dispatch.kernel}`, async () => {
          const layout = device.createPipelineLayout({ bindGroupLayouts: [device.createBindGroupLayout({ entries })] });
          return device.createComputePipelineAsync({
            label: dispatch.kernel,
            layout,
            compute: { module: modules.get(dispatch.kernel), entryPoint: 'main' },
          });
        });
        pipelines.set(key, pipeline);
      }
      return pipelines.get(key);
    };

    for (const phase of PHASES) {
      const dispatches = (plan.passes ?? {})[phase] ?? [];
      const phaseChecks = checks.map((c, i) => [c, expected[i]]).filter(([c]) => c.after === phase);
      if (!dispatches.length && !phaseChecks.length) continue;
      onProgress(`${result.name}: ${phase}, ${dispatches.length} dispatches`);
      const started = performance.now();
      const prepared = [];
      for (const dispatch of dispatches) {
        const pipeline = await pipelineFor(dispatch);
        const bindGroup = await scoped(device, `${phase}: bind group of ${dispatch.kernel}`, async () =>
          device.createBindGroup({
            layout: pipeline.getBindGroupLayout(0),
            entries: dispatch.bindings.map((b, binding) => ({ binding, resource: { buffer: buffers.get(b.buffer) } })),
          }),
        );
        prepared.push([dispatch, pipeline, bindGroup]);
      }
      await scoped(device, `${phase} dispatches`, async () => {
        const encoder = device.createCommandEncoder({ label: phase });
        const pass = encoder.beginComputePass({ label: phase });
        for (const [dispatch, pipeline, bindGroup] of prepared) {
          pass.setPipeline(pipeline);
          pass.setBindGroup(0, bindGroup);
          const [x, y = 1, z = 1] = dispatch.grid;
          pass.dispatchWorkgroups(x, y, z);
        }
        pass.end();
        device.queue.submit([encoder.finish()]);
        await device.queue.onSubmittedWorkDone();
      });
      result.ms[phase] = performance.now() - started;
      const got = await scoped(device, `${phase} read-back`, () => readBack(device, buffers, phaseChecks.map(([c]) => c.buffer)));
      for (const [check, want] of phaseChecks) {
        const values = got.get(check.buffer);
        const error = relativeError(values, want);
        const pass = passes(error, check.bar);
        let detail = '';
        if (values.length !== want.length) detail = `${values.length} elements, expected ${want.length}`;
        else if (!pass) detail = worstElement(values, want);
        result.checks.push({ buffer: check.buffer, after: phase, error, bar: check.bar, pass, detail });
      }
    }
    result.ok = result.checks.every((c) => c.pass);
  } catch (e) {
    result.error = String(e && e.message ? e.message : e);
  } finally {
    for (const b of created) b.destroy();
  }
  return result;
}
