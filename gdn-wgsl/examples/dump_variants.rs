//! Writes every generated kernel variant into a directory, for comparing two revisions of the
//! generator byte for byte (`diff -r`): one file per (kernel, head dims) as `GDN_KERNEL_DIR` names
//! them (`{kernel}-{dk}x{dv}-{precision}.wgsl`), for every supported pair, and `manifest.txt` with
//! each variant's interface and needs, one line a variant.
//!
//! `cargo run -p gdn-wgsl --example dump_variants -- /tmp/wgsl-before`

use gdn_wgsl::{HeadDims, Kernel, kernel_source};
use std::fmt::Write;

fn main() {
    let dir = std::env::args().nth(1).expect("usage: dump_variants <directory>");
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir).expect("the directory can be created");
    let mut manifest = String::new();
    let mut variants = 0;
    for kernel in Kernel::ALL {
        for dims in HeadDims::all().filter(|&dims| kernel.generated_for(dims)) {
            let source = kernel_source(kernel, dims).expect("generated for these dims");
            let name = format!("{}-{}x{}-{}.wgsl", kernel.name(), dims.dk, dims.dv, source.precision.name());
            std::fs::write(dir.join(&name), &source.wgsl).expect("the directory is writable");
            let bindings: Vec<String> = source.bindings.iter().map(|b| format!("{}:{:?}", b.name, b.kind)).collect();
            writeln!(
                manifest,
                "{name} {kernel:?} threads={} bytes={} storage={} dims={} wide_subgroups={} bindings={}",
                source.workgroup_size,
                source.workgroup_bytes,
                kernel.storage_buffers(),
                kernel.depends_on_dims(),
                kernel.needs_wide_subgroups(),
                bindings.join(",")
            )
            .expect("writing to a String");
            variants += 1;
        }
    }
    std::fs::write(dir.join("manifest.txt"), manifest).expect("the directory is writable");
    println!("{variants} variants written to {}", dir.display());
}
