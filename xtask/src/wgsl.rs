//! `cargo xtask wgsl --dk 64 --dv 32 [--kernel recurrence_backward]`: prints generated WGSL.

use gdn_wgsl::{HeadDims, Kernel, kernel_source};

/// Which variant to print.
#[derive(clap::Args)]
pub struct WgslArgs {
    /// Key head dim.
    #[arg(long)]
    dk: usize,
    /// Value head dim.
    #[arg(long)]
    dv: usize,
    /// One kernel by name (e.g. recurrence_backward, tensor_core_state); all generated for the dims
    /// when absent.
    #[arg(long)]
    kernel: Option<String>,
}

/// Prints the variant(s), each preceded by its interface.
pub fn run(args: &WgslArgs) -> Result<(), String> {
    let dims = HeadDims::new(args.dk, args.dv).map_err(|e| e.to_string())?;
    let kernels: Vec<Kernel> = match &args.kernel {
        None => Kernel::ALL.into_iter().filter(|k| k.generated_for(dims)).collect(),
        Some(name) => vec![Kernel::ALL.into_iter().find(|k| k.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Kernel::ALL.iter().map(|k| k.name()).collect();
            format!("unknown kernel {name:?}; kernels: {}", names.join(", "))
        })?],
    };
    for kernel in kernels {
        let source = kernel_source(kernel, dims).map_err(|e| e.to_string())?;
        let bindings: Vec<String> = source.bindings.iter().map(|b| format!("{} ({:?})", b.name, b.kind)).collect();
        println!(
            "// ===== {} for {dims}: workgroup {} threads, {} B workgroup memory; bindings: {}\n{}",
            kernel.name(),
            source.workgroup_size,
            source.workgroup_bytes,
            bindings.join(", "),
            source.wgsl
        );
    }
    Ok(())
}
