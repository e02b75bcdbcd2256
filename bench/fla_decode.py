# The decode anchor on the GPU: fla's fused recurrent gated delta rule (the kernel vLLM's decode is
# derived from) at one new token for each of B sequences, f32 states, as fused as it goes: q/k L2
# norms, the decay gate and the write gate's sigmoid in the kernel. It has no conv and no gated
# RMSNorm (ours does both in the same dispatch).
# usage: fla_decode.py B [H HV]   (K = V = 128; default H 16, HV 32: qwen3-next)
# Prints two GPU times, both from CUDA graphs (no Python launch overhead):
#   graph_us: one step captured in a graph, replayed, the median of 200 replays;
#   stream_us: 100 steps captured back to back in one graph (each from the previous one's state),
#   the median replay divided by 100 (our "stream of steps").
import sys, torch, torch.nn.functional as F
torch.manual_seed(0)
dev = 'cuda'
B = int(sys.argv[1])
H, HV = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (16, 32)
K = V = 128
dt = torch.bfloat16
from fla.ops.gated_delta_rule import fused_recurrent_gated_delta_rule
q = torch.randn(B, 1, H, K, device=dev, dtype=dt)
k = torch.randn(B, 1, H, K, device=dev, dtype=dt)
v = torch.randn(B, 1, HV, V, device=dev, dtype=dt)
a = torch.randn(B, 1, HV, device=dev, dtype=dt)
b = torch.randn(B, 1, HV, device=dev, dtype=dt)
A_log = torch.empty(HV, device=dev).uniform_(-0.5, 1.5)
dt_bias = torch.randn(HV, device=dev) * 0.5
h0 = torch.randn(B, HV, K, V, device=dev, dtype=torch.float32) * 0.1
def step(state):
    return fused_recurrent_gated_delta_rule(q, k, v, a, beta=b, initial_state=state, output_final_state=True,
        use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, A_log=A_log, dt_bias=dt_bias,
        use_beta_sigmoid_in_kernel=True)[1]
def timed(fn, replays):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s); torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    for _ in range(10):
        graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(); graph.replay(); e1.record(); torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) * 1e3)
    times.sort()
    return times[len(times) // 2]
def hundred():
    state = h0
    for _ in range(100):
        state = step(state)
one = timed(lambda: step(h0), 200)
stream = timed(hundred, 30) / 100
print(f"FLA_DECODE B={B} H={H} HV={HV} states={B * HV} graph_us={one:.2f} stream_us={stream:.2f}", flush=True)
