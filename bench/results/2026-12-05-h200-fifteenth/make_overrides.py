#!/usr/bin/env python3
"""Writes f2.sh's timing-only kernel overrides (GDN_KERNEL_DIR) for dk = dv = 128 from the kernels
gdn-wgsl generates at HEAD (run from the repository root):
- .dev/bis/sgsum: the norm kernels' and the fused conv kernels' row sums by 32-lane subgroup
  shuffles and one exchange through workgroup memory (two barriers, not seven); needs subgroups of
  32 (the H200), wrong elsewhere;
- .dev/bis/kwin: the fused forward's k conv outputs at t and the three tokens before from one
  window of seven raw values (kk <= 4) instead of four convs of four taps each;
- .dev/bis/both: the two together."""
import os
import subprocess

ROW_SUM4_BY_SUBGROUPS = '''fn row_sum4(tid: u32, value: vec4<f32>) -> vec4<f32> {
    var total = value;
    for (var offset = 16u; offset > 0u; offset = offset / 2u) {
        total = total + subgroupShuffleXor(total, offset);
    }
    if (tid % 32u == 0u) {
        row_sum_scratch[tid / 32u] = total;
    }
    workgroupBarrier();
    var sum = row_sum_scratch[0];
    for (var w = 1u; w < VEC / 32u; w = w + 1u) {
        sum = sum + row_sum_scratch[w];
    }
    workgroupBarrier();
    return sum;
}

'''

KEY_WINDOW = '''
// k's conv outputs at t and the three tokens before from one window of seven raw values (kk <= 4);
// outputs reaching before the sequence are finite and unused.
fn key_window(t: u32, c: u32, span: TokenSpan) -> vec4<f32> {
    let km1 = i32(layer.kk) - 1;
    let ti = i32(t);
    let start = i32(span.start);
    var x: array<f32, 7>;
    for (var i = 0; i < 7; i = i + 1) {
        x[i] = qkv[u32(max(ti - 6 + i, 0)) * layer.channels + c];
    }
    var st = vec3<f32>(0.0);
    if (layer.has_conv_state != 0u) {
        let last = arrayLength(&conv_state) - 1u;
        let base = span.n * u32(km1);
        let s = min((vec3<u32>(base) + vec3<u32>(0u, 1u, 2u)) * layer.channels + vec3<u32>(c), vec3<u32>(last));
        st = vec3<f32>(conv_state[s.x], conv_state[s.y], conv_state[s.z]);
    }
    var w = vec4<f32>(0.0);
    for (var b = 0; b < 4; b = b + 1) {
        if (b <= km1) {
            w[b] = conv[c * layer.kk + u32(km1 - b)];
        }
    }
    var out = vec4<f32>(0.0);
    for (var m = 0; m < 4; m = m + 1) {
        var acc = 0.0;
        for (var b = 3; b >= 0; b = b - 1) {
            if (b <= km1) {
                let u = ti - m - b;
                let slot = ti - m - start + km1 - b;
                var v = 0.0;
                if (u >= start) {
                    v = x[6 - m - b];
                } else if (slot >= 0 && slot < km1) {
                    v = select(select(st.z, st.y, slot == 1), st.x, slot == 0);
                }
                acc = acc + w[b] * v;
            }
        }
        out[m] = silu(acc);
    }
    return out;
}
'''

PER_TOKEN_KEYS = '''        q[j] = qk_input(t, q_c + m, span);
        k[j] = qk_input(t, k_c + m, span);
        sq = sq + live * vec2<f32>(q[j] * q[j], k[j] * k[j]);
        if (KEY_PRODUCTS == 1u) {
            let k1 = qk_input(earlier(t, 1u, span), k_c + m, span);
            let k2 = qk_input(earlier(t, 2u, span), k_c + m, span);
            let k3 = qk_input(earlier(t, 3u, span), k_c + m, span);'''

WINDOWED_KEYS = '''        q[j] = qk_input(t, q_c + m, span);
        let kw = key_window(t, k_c + m, span);
        k[j] = kw.x;
        sq = sq + live * vec2<f32>(q[j] * q[j], k[j] * k[j]);
        if (KEY_PRODUCTS == 1u) {
            let k1 = kw.y;
            let k2 = kw.z;
            let k3 = kw.w;'''


def kernel(name):
    out = subprocess.run(['cargo', 'run', '-q', '-p', 'xtask', '--', 'wgsl', '--dk', '128', '--dv', '128',
                          '--kernel', name], capture_output=True, text=True, check=True).stdout
    return out.split('\n', 1)[1]


def by_subgroups(src):
    a, b = src.index('fn row_sum4('), src.index('fn row_sum2(')
    return src[:a] + ROW_SUM4_BY_SUBGROUPS + src[b:]


def windowed(src):
    assert PER_TOKEN_KEYS in src, 'the fused forward changed: update make_overrides.py'
    return src.replace(PER_TOKEN_KEYS, WINDOWED_KEYS) + KEY_WINDOW


def write(folder, name, src):
    os.makedirs(folder, exist_ok=True)
    with open(f'{folder}/{name}-128x128-f32.wgsl', 'w') as f:
        f.write(src)


FUSED = 'conv_qk_norm_gates_products_forward'
for name in ['norm_forward', 'norm_backward', FUSED, 'qk_norm_conv_backward']:
    src = kernel(name)
    write('.dev/bis/sgsum', name, by_subgroups(src))
    write('.dev/bis/both', name, by_subgroups(windowed(src) if name == FUSED else src))
write('.dev/bis/kwin', FUSED, windowed(kernel(FUSED)))
