// How the conv kernels walk the batch: each invocation one channel over a run of CONV_RUN consecutive
// tokens, ELEMENTS consecutive channels per workgroup (so that every token's loads coalesce), with the
// values of CONV_WINDOW neighbouring tokens kept in registers (conv_window.wgsl for the raw ones):
// each is read once, not kk times; taps past the window, for kk > CONV_WINDOW, are read as needed.

struct ConvRun {
    // Channel, and the tokens [first, end) of the run.
    c: u32,
    first: u32,
    end: u32,
}

// Tokens per run: CONV_RUN where the taps fit the window and the batch has runs enough to fill the
// GPU (CONV_RUNS_TO_FILL workgroups of them), else 1: a run's tokens wait on their loads one after
// another, so a short batch in long runs waits sixteen load latencies where one would do; and each
// token of many taps reads them anyway, while one invocation walking many tokens of thousands of
// taps each would pass the 65 535 loop iterations after which lavapipe ends an invocation's loops
// (README). The host sizes the grid by the same rule (gdn-wgsl's plan/shared.rs).
fn conv_run_length() -> u32 {
    let groups = (layer.channels + ELEMENTS - 1u) / ELEMENTS;
    let long_runs = groups * ((layer.tokens + CONV_RUN - 1u) / CONV_RUN);
    return select(1u, CONV_RUN, layer.kk <= CONV_WINDOW && long_runs >= CONV_RUNS_TO_FILL);
}

// The run of workgroup `job` (channel groups fastest) for invocation `lid`.
fn conv_run(job: u32, lid: u32) -> ConvRun {
    let groups = (layer.channels + ELEMENTS - 1u) / ELEMENTS;
    let first = (job / groups) * conv_run_length();
    return ConvRun((job % groups) * ELEMENTS + lid, first, min(first + conv_run_length(), layer.tokens));
}

// Whether the run exists (the grid's overhang and a partial channel group have none).
fn conv_run_valid(run: ConvRun) -> bool {
    return run.c < layer.channels && run.first < layer.tokens;
}

// Workgroups of the conv's runs: channel groups by runs of tokens (the grid the host gives a conv
// kernel, and the first jobs of conv_backward_input_sums' dispatch).
fn conv_run_jobs() -> u32 {
    let groups = (layer.channels + ELEMENTS - 1u) / ELEMENTS;
    let run = conv_run_length();
    return groups * ((layer.tokens + run - 1u) / run);
}
