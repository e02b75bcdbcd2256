// The workgroups of the chunked family's passes over chunks (chunk_state, chunk_state_backward): one
// per (sequence, value head, block of CB state columns), the block's first column in col0.

var<private> col0: u32;

struct ColumnJob {
    // Sequence, value head, columns in the block, the sequence's first chunk slot and its chunks.
    n: u32,
    h: u32,
    width: u32,
    first: u32,
    chunks: u32,
}

// Workgroups of the pass.
fn column_jobs() -> u32 {
    return layer.seqs * layer.nv * ((DV + CB - 1u) / CB);
}

// Job `job` (< column_jobs()); sets col0. The job is computed from `c0`, not read back from col0: WGSL's
// uniformity analysis takes every read of a private variable as non-uniform, and the passes loop over
// the job's chunks and columns around barriers (Tint refuses them otherwise; naga does not check).
fn column_job(job: u32) -> ColumnJob {
    let blocks = (DV + CB - 1u) / CB;
    let c0 = (job % blocks) * CB;
    col0 = c0;
    let n = job / (blocks * layer.nv);
    let first = ckpt_first(n);
    return ColumnJob(n, (job / blocks) % layer.nv, min(CB, DV - c0), first, ckpt_first(n + 1u) - first);
}
