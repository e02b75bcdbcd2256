// The Tint compile check: every kernel variant that `cargo xtask web` wrote (gen/kernels/, with its
// manifest) is compiled by the browser's own WGSL compiler — createShaderModule and
// getCompilationInfo (Tint's front end), then createComputePipelineAsync with an explicit bind group
// layout built from the kernel's bindings (Tint's back end and the driver's compiler) — and weighed
// against the device's limits: storage buffers per shader stage, workgroup memory, invocations per
// workgroup. Tint is stricter than naga in places (uniformity, reserved words, ...); this finds where.

/** How many variants compile at once: the browser compiles pipelines on its own threads. */
const CONCURRENCY = 4;

/**
 * Compiles every variant of the manifest at `manifestUrl` on `device`. Returns { skipped, kernels }
 * where each kernel is { kernel, dims, path, storageBuffers, workgroupBytes, workgroupSize,
 * fits: { storage, workgroupMemory, invocations }, module: 'ok' | 'error', messages,
 * pipeline: 'ok' | 'error' | 'not tried', pipelineError, verdict, ranIn, ms }; the verdict is 'compiled',
 * 'tint error' (the module or, within the limits, the pipeline failed) or 'over limits' (it
 * compiles but exceeds a limit, so no pipeline can be made). A variant the manifest says a layer case
 * ran (`ranIn`) is not compiled again: that case compiled it into a pipeline and checked its results.
 */
export async function compileKernels(device, manifestUrl, onProgress = () => {}) {
  const response = await fetch(manifestUrl);
  if (!response.ok) throw new Error(`fetching the kernel manifest ${manifestUrl}: HTTP ${response.status}`);
  const manifest = await response.json();
  const limits = device.limits;
  const results = new Array(manifest.kernels.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < manifest.kernels.length) {
      const i = next++;
      results[i] = await compileOne(device, limits, manifest.kernels[i], new URL(manifest.kernels[i].path, manifestUrl).href);
      done++;
      onProgress(`kernels: ${done} of ${manifest.kernels.length} (${results[i].kernel}: ${results[i].verdict})`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { skipped: manifest.skipped, kernels: results };
}

async function compileOne(device, limits, entry, url) {
  const started = performance.now();
  const result = {
    kernel: entry.kernel,
    dims: entry.dims,
    path: entry.path,
    storageBuffers: entry.storageBuffers,
    workgroupBytes: entry.workgroupBytes,
    workgroupSize: entry.workgroupSize,
    fits: {
      storage: entry.storageBuffers <= limits.maxStorageBuffersPerShaderStage,
      workgroupMemory: entry.workgroupBytes <= limits.maxComputeWorkgroupStorageSize,
      invocations: entry.workgroupSize <= limits.maxComputeInvocationsPerWorkgroup,
    },
    module: 'error',
    messages: [],
    pipeline: 'not tried',
    pipelineError: null,
    verdict: 'tint error',
    ms: 0,
  };
  if (entry.ranIn) {
    // The same WGSL was compiled into a pipeline and run by that layer case, which checked its results.
    Object.assign(result, { module: 'ok', pipeline: 'ok', verdict: 'compiled', ranIn: entry.ranIn });
    result.ms = performance.now() - started;
    return result;
  }
  const code = await (await fetch(url)).text();
  const lines = code.split('\n');
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code, label: entry.path });
  const info = await module.getCompilationInfo();
  const scopeError = await device.popErrorScope();
  result.messages = info.messages.map((m) => ({
    type: m.type,
    line: m.lineNum,
    column: m.linePos,
    text: m.message,
    source: m.lineNum > 0 ? (lines[m.lineNum - 1] ?? '').trim() : '',
  }));
  const moduleOk = !info.messages.some((m) => m.type === 'error') && !scopeError;
  if (scopeError && !result.messages.length) result.messages.push({ type: 'error', text: scopeError.message });
  result.module = moduleOk ? 'ok' : 'error';
  if (moduleOk) {
    // Tried even over a limit, so that the browser's own message says which limit stops it.
    const entries = entry.bindings.map((b, binding) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: b.type } }));
    device.pushErrorScope('validation');
    const layout = device.createPipelineLayout({ bindGroupLayouts: [device.createBindGroupLayout({ entries, label: entry.path })] });
    const layoutError = await device.popErrorScope();
    try {
      await device.createComputePipelineAsync({ label: entry.path, layout, compute: { module, entryPoint: 'main' } });
      result.pipeline = layoutError ? 'error' : 'ok';
      result.pipelineError = layoutError ? layoutError.message : null;
    } catch (e) {
      result.pipeline = 'error';
      result.pipelineError = (layoutError ? `${layoutError.message}; ` : '') + String(e && e.message ? e.message : e);
    }
    const fits = result.fits.storage && result.fits.workgroupMemory && result.fits.invocations;
    if (result.pipeline === 'ok') result.verdict = 'compiled';
    else result.verdict = fits ? 'tint error' : 'over limits';
  }
  result.ms = performance.now() - started;
  return result;
}
