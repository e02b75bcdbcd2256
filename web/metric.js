// The error metric of OPERATOR.md ("What matches means"), exactly as gdn-ref computes it
// (gdn_ref::compare::relative_error_f32): the relative RMS error ‖got − want‖₂ / ‖want‖₂ in f64,
// with the denominator raised to √(f32's smallest normal)·√n so that a tensor too small for f32 to
// carry is compared absolutely at that scale; +∞ when `got` holds a NaN or an infinity, or when the
// lengths differ; 0 when both are exactly equal. A check passes when its error is ≤ its bar, so a
// NaN error (a non-finite reference) never passes either.

/** √(f32::MIN_POSITIVE): gdn-ref's floor of an f32 tensor's RMS. */
export const F32_RMS_FLOOR = Math.sqrt(1.1754943508222875e-38);

/** Rust's f64::max: the other operand when one is NaN. */
function rustMax(a, b) {
  if (Number.isNaN(a)) return b;
  if (Number.isNaN(b)) return a;
  return Math.max(a, b);
}

/** Relative RMS error of `got` against `want` (array-likes of numbers), floored like gdn-ref. */
export function relativeError(got, want, rmsFloor = F32_RMS_FLOOR) {
  if (got.length !== want.length) return Infinity;
  for (let i = 0; i < got.length; i++) {
    if (!Number.isFinite(got[i])) return Infinity;
  }
  let diff = 0;
  let norm = 0;
  for (let i = 0; i < got.length; i++) {
    const d = got[i] - want[i];
    diff += d * d;
    norm += want[i] * want[i];
  }
  diff = Math.sqrt(diff);
  const denom = rustMax(Math.sqrt(norm), rmsFloor * Math.sqrt(want.length));
  if (diff === 0) return 0;
  if (denom === 0) return Infinity;
  return diff / denom;
}

/** Whether an error passes its bar (never for NaN or ∞). */
export function passes(error, bar) {
  return Number.isFinite(error) && error <= bar;
}

/** Where `got` first goes wrong, for a failing check's message: a non-finite element, else the
 * element farthest from `want`. */
export function worstElement(got, want) {
  let worst = -1;
  let worstDiff = -1;
  for (let i = 0; i < Math.min(got.length, want.length); i++) {
    if (!Number.isFinite(got[i])) return `element ${i} is ${got[i]} (want ${want[i]})`;
    const d = Math.abs(got[i] - want[i]);
    if (d > worstDiff) {
      worstDiff = d;
      worst = i;
    }
  }
  return worst < 0 ? 'no elements' : `worst element ${worst}: got ${got[worst]}, want ${want[worst]}`;
}

/** The metric's own cases, each { name, ok, detail }: what the page checks before trusting it. */
export function metricSelfTest() {
  const f = (xs) => Float32Array.from(xs);
  const cases = [
    ['equal tensors: 0', relativeError(f([1, -2, 3]), f([1, -2, 3])) === 0],
    ['both zero: 0', relativeError(f([0, 0]), f([0, 0])) === 0],
    ['3-4-5: ‖(0,0.3,0.4)‖ / ‖(0,3,4)‖ = 0.1', Math.abs(relativeError([0, 3.3, 4.4], [0, 3, 4]) - 0.1) < 1e-12],
    ['NaN in got: ∞', relativeError(f([1, NaN]), f([1, 2])) === Infinity],
    ['∞ in got: ∞', relativeError(f([Infinity, 1]), f([1, 1])) === Infinity],
    ['lengths differ: ∞', relativeError(f([1]), f([1, 2])) === Infinity],
    ['nonzero against zero: ∞ (floor aside)', relativeError([1], [0]) > 1e18],
    ['below the f32 floor: absolute at 1.1e-19', Math.abs(relativeError([2e-20], [1e-20]) - 1e-20 / F32_RMS_FLOOR) < 1e-12],
    ['NaN error fails its bar', !passes(NaN, 1)],
    ['∞ error fails its bar', !passes(Infinity, 1)],
    ['error equal to its bar passes', passes(1e-4, 1e-4)],
  ];
  return cases.map(([name, ok]) => ({ name, ok }));
}
