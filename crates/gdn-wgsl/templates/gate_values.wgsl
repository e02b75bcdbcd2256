// gates packs g then β, each [tokens, nv]; gate_grad_parts packs the dg partials then the dβ ones.

fn gate_decay(e: u32) -> f32 {
    return gates[e];
}

fn gate_beta(e: u32) -> f32 {
    return gates[layer.tokens * layer.nv + e];
}
