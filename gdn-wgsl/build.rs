//! Generates every kernel variant of the supported grid and validates it with naga: parse,
//! validate, write SPIR-V. A template that breaks any variant fails the build with naga's
//! diagnostic, which points into the generated source (also written to OUT_DIR for reading).

// The modules are shared with the library, which uses more of them than the build does.
#![allow(dead_code)]

#[path = "src/assemble.rs"]
mod assemble;
#[path = "src/dims.rs"]
mod dims;
#[path = "src/kernels/mod.rs"]
mod kernels;
#[path = "src/precision.rs"]
mod precision;
#[path = "src/tiling.rs"]
mod tiling;
#[path = "src/uniforms.rs"]
mod uniforms;

use dims::HeadDims;
use kernels::Kernel;
use precision::Precision;
use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-changed=templates");
    println!("cargo::rerun-if-changed=src");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let first = HeadDims::all().next().expect("a supported size");
    let mut validated = 0;
    for kernel in Kernel::ALL {
        let variants: Vec<HeadDims> = if kernel.depends_on_dims() { HeadDims::all().collect() } else { vec![first] };
        for dims in variants.into_iter().filter(|&dims| kernel.generated_for(dims)) {
            let source = assemble::wgsl(kernel, dims);
            if let Err(message) = validate(&source) {
                let name = format!("{}_{}x{}.wgsl", kernel.name(), dims.dk, dims.dv);
                let path = out_dir.join(name);
                std::fs::write(&path, &source).expect("OUT_DIR is writable");
                panic!("kernel {} for {dims} is invalid WGSL (source: {}):\n{message}", kernel.name(), path.display());
            }
            validated += 1;
        }
    }
    std::fs::write(out_dir.join("validated_variants.txt"), validated.to_string()).expect("OUT_DIR is writable");
}

/// naga's verdict on one module, as a diagnostic printed against the source.
fn validate(source: &str) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    // The tensor-core variants need f16, cooperative matrices and subgroups; a host checks the adapter
    // has them.
    let capabilities = naga::valid::Capabilities::SHADER_FLOAT16
        | naga::valid::Capabilities::COOPERATIVE_MATRIX
        | naga::valid::Capabilities::SUBGROUP;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities)
        .validate(&module)
        .map_err(|e| {
            // The diagnostic names the entry point; its causes name what is wrong there.
            let mut message = e.emit_to_string(source);
            let mut cause = std::error::Error::source(e.as_inner());
            while let Some(inner) = cause {
                message.push_str(&format!("\ncaused by: {inner}"));
                cause = inner.source();
            }
            message
        })?;
    naga::back::spv::write_vec(&module, &info, &naga::back::spv::Options::default(), None)
        .map_err(|e| format!("SPIR-V backend: {e}"))?;
    Ok(())
}
