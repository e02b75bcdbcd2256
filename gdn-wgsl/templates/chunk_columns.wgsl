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

// Job `job` (< column_jobs()); sets col0.
fn column_job(job: u32) -> ColumnJob {
    let blocks = (DV + CB - 1u) / CB;
    col0 = (job % blocks) * CB;
    let n = job / (blocks * layer.nv);
    let first = ckpt_first(n);
    return ColumnJob(n, (job / blocks) % layer.nv, min(CB, DV - col0), first, ckpt_first(n + 1u) - first);
}
