// Who loads recurrence_forward_chunks' stages, where its sums over the lanes go through workgroup
// memory (two barriers a sum, in uniform control flow): every invocation loads its share and
// solves, so no invocation skips a barrier and none is spent only on loads.
const LOAD_FIRST: u32 = 0u;

// Whether invocation tid solves the chunks: every one (a constant, so that the chunks' barriers
// stay in uniform control flow).
fn solves(tid: u32) -> bool {
    return true;
}
