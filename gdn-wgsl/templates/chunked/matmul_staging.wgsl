// The f32 matmul's staging (matmul.wgsl): which element of an operand tile each invocation reads, the
// reads themselves (guarded at the product's edges), and the hand-over to mm_put, which writes
// workgroup memory in the matmul's layout.
// Each invocation stages four elements of A and four of B per depth tile; no vector is indexed at run
// time, so that everything stays in registers.

// Stages the four elements of A and of B this invocation read for the depth tile at k0.
fn mm_stage(op: u32, k0: u32, tid: u32, a: vec4<f32>, b: vec4<f32>) {
    let a_by_rows = a_column_major(op, k0);
    let b_by_depth = b_column_major(op, k0);
    mm_put(mm_a_at(tid, a_by_rows), a.x, mm_b_at(tid, b_by_depth), b.x);
    mm_put(mm_a_at(tid + MM_THREADS, a_by_rows), a.y, mm_b_at(tid + MM_THREADS, b_by_depth), b.y);
    mm_put(mm_a_at(tid + 2u * MM_THREADS, a_by_rows), a.z, mm_b_at(tid + 2u * MM_THREADS, b_by_depth), b.z);
    mm_put(mm_a_at(tid + 3u * MM_THREADS, a_by_rows), a.w, mm_b_at(tid + 3u * MM_THREADS, b_by_depth), b.w);
}

// Element `e` (0 … MM_TILE·MM_DEPTH − 1) of the staged A tile at (r0, k0): its row and depth, rows
// adjacent when the operand is column-major.
fn mm_a_at(e: u32, by_rows: bool) -> vec2<u32> {
    if (by_rows) {
        return vec2<u32>(e % MM_TILE, e / MM_TILE);
    }
    return vec2<u32>(e / MM_DEPTH, e % MM_DEPTH);
}

// Element `e` of the staged B tile: its column and depth, depths adjacent when column-major.
fn mm_b_at(e: u32, by_depth: bool) -> vec2<u32> {
    if (by_depth) {
        return vec2<u32>(e / MM_DEPTH, e % MM_DEPTH);
    }
    return vec2<u32>(e % MM_TILE, e / MM_TILE);
}

// The four A elements this invocation stages at (r0, k0) (zero outside the product).
fn mm_fetch_a(op: u32, r0: u32, k0: u32, m: u32, depth: u32, tid: u32) -> vec4<f32> {
    let by_rows = a_column_major(op, k0);
    return vec4<f32>(
        mm_fetch_a1(op, r0, k0, m, depth, mm_a_at(tid, by_rows)),
        mm_fetch_a1(op, r0, k0, m, depth, mm_a_at(tid + MM_THREADS, by_rows)),
        mm_fetch_a1(op, r0, k0, m, depth, mm_a_at(tid + 2u * MM_THREADS, by_rows)),
        mm_fetch_a1(op, r0, k0, m, depth, mm_a_at(tid + 3u * MM_THREADS, by_rows)),
    );
}

fn mm_fetch_a1(op: u32, r0: u32, k0: u32, m: u32, depth: u32, at: vec2<u32>) -> f32 {
    if (r0 + at.x < m && k0 + at.y < depth) {
        return load_a(op, r0 + at.x, k0 + at.y);
    }
    return 0.0;
}

// The four B elements this invocation stages at (k0, c0).
fn mm_fetch_b(op: u32, c0: u32, k0: u32, n: u32, depth: u32, tid: u32) -> vec4<f32> {
    let by_depth = b_column_major(op, k0);
    return vec4<f32>(
        mm_fetch_b1(op, c0, k0, n, depth, mm_b_at(tid, by_depth)),
        mm_fetch_b1(op, c0, k0, n, depth, mm_b_at(tid + MM_THREADS, by_depth)),
        mm_fetch_b1(op, c0, k0, n, depth, mm_b_at(tid + 2u * MM_THREADS, by_depth)),
        mm_fetch_b1(op, c0, k0, n, depth, mm_b_at(tid + 3u * MM_THREADS, by_depth)),
    );
}

fn mm_fetch_b1(op: u32, c0: u32, k0: u32, n: u32, depth: u32, at: vec2<u32>) -> f32 {
    if (c0 + at.x < n && k0 + at.y < depth) {
        return load_b(op, k0 + at.y, c0 + at.x);
    }
    return 0.0;
}
