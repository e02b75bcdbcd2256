# Times fla at several shapes in one process: `python3 bench/fla_times.py "fwd 8 1024 16 32 bfloat16" ...`.
# Each argument is one `fla_bench.py` command line (../shared/device/fla_bench.py, carried as
# .dev/fla_bench.py), run in turn with torch, fla and Triton's compiled kernels already loaded, so
# that a shape costs its autotuning and timing alone (about 13 s each as separate processes, most of
# it imports). A shape that fails prints its error and the next one runs.
import runpy, sys, traceback
import torch

script = '.dev/fla_bench.py'
for line in sys.argv[1:]:
    sys.argv = [script, *line.split()]
    try:
        runpy.run_path(script, run_name='__main__')
    except BaseException as err:  # SystemExit too: one shape's failure must not end the others
        print(f"FLA-FAILED {line}: {type(err).__name__}: {err}", flush=True)
        traceback.print_exc()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
