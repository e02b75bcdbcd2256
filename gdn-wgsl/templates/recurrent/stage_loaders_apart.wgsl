// Who loads recurrence_forward_chunks' stages, where its sums over the lanes are subgroup shuffles
// (no barrier inside a chunk): warps of their own, LOAD_FIRST = SOLVERS onwards, beside the column
// groups. With few heads each scheduler runs one solving warp, and every instruction of its stream
// shows in the time; a stage's loads (their address arithmetic, and their latency wherever the
// compiler moves them next to their stores) leave that stream, and the loading warps wait on
// global memory while the solvers work.
const LOAD_FIRST: u32 = SOLVERS;

// Whether invocation tid solves the chunks (the loading warps skip them).
fn solves(tid: u32) -> bool {
    return tid < SOLVERS;
}
