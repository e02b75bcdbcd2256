//! The metadata a host binds by agrees with what each generated module declares, checked through
//! naga's reflection of every variant: bindings (slot, name, access), workgroup size, workgroup
//! memory, and the uniform structs' layouts against the Rust structs.

use gdn_wgsl::{BindingKind, HeadDims, Kernel, KernelSource, LayerUniform, Precision, ReduceUniform, kernel_source};
use naga::{AddressSpace, StorageAccess};

/// Every generated variant.
fn variants() -> impl Iterator<Item = KernelSource> {
    HeadDims::all().flat_map(|dims| {
        Kernel::ALL
            .into_iter()
            .filter(move |kernel| kernel.generated_for(dims))
            .map(move |kernel| kernel_source(kernel, dims).expect("generated for these dims"))
    })
}

fn module(wgsl: &str) -> naga::Module {
    naga::front::wgsl::parse_str(wgsl).unwrap_or_else(|e| panic!("{}", e.emit_to_string(wgsl)))
}

#[test]
fn declared_bindings_workgroup_size_and_memory_match_the_metadata() {
    for source in variants() {
        let (kernel, dims) = (source.kernel, source.dims);
        {
            let module = module(&source.wgsl);
            let mut declared: Vec<(u32, String, AddressSpace)> = module
                .global_variables
                .iter()
                .filter_map(|(_, var)| {
                    var.binding.as_ref().map(|b| (b.binding, var.name.clone().unwrap_or_default(), var.space))
                })
                .collect();
            declared.sort_by_key(|d| d.0);
            assert_eq!(declared.len(), source.bindings.len(), "{kernel:?} {dims}");
            for ((slot, name, space), (expected_slot, binding)) in
                declared.iter().zip(source.bindings.iter().enumerate())
            {
                assert_eq!((*slot as usize, name.as_str()), (expected_slot, binding.name), "{kernel:?} {dims}");
                let expected_space = match binding.kind {
                    BindingKind::LayerUniform | BindingKind::ReduceUniform => AddressSpace::Uniform,
                    BindingKind::ReadU32 | BindingKind::ReadF32 | BindingKind::ReadF16 => {
                        AddressSpace::Storage { access: StorageAccess::LOAD }
                    }
                    BindingKind::WriteF32
                    | BindingKind::WriteVec4F32
                    | BindingKind::WriteU32
                    | BindingKind::WriteF16
                    | BindingKind::Counters => {
                        AddressSpace::Storage { access: StorageAccess::LOAD | StorageAccess::STORE }
                    }
                };
                assert_eq!(*space, expected_space, "{kernel:?} {dims}: {name}");
            }

            let [entry] = &module.entry_points[..] else { panic!("{kernel:?}: one entry point expected") };
            assert_eq!(entry.name, gdn_wgsl::ENTRY_POINT);
            assert_eq!(entry.workgroup_size, [source.workgroup_size, 1, 1], "{kernel:?} {dims}");

            let mut layouter = naga::proc::Layouter::default();
            layouter.update(module.to_ctx()).expect("layout");
            let shared: u32 = module
                .global_variables
                .iter()
                .filter(|(_, var)| var.space == AddressSpace::WorkGroup)
                .map(|(_, var)| layouter[var.ty].size)
                .sum();
            assert_eq!(shared, source.workgroup_bytes, "{kernel:?} {dims}: workgroup memory");
        }
    }
}

/// lavapipe (CI's adapter) offers 32 KiB of workgroup memory and subgroups of 8: every f32 kernel
/// it runs (all but the tensor-core ones and the shuffle kernels, whose portable twins it runs
/// instead) fits at every head size.
#[test]
fn every_kernel_a_software_adapter_runs_fits_its_workgroup_memory() {
    for source in variants() {
        let (kernel, dims) = (source.kernel, source.dims);
        if kernel.precision() == Precision::F32 && !kernel.needs_wide_subgroups() {
            assert!(source.workgroup_bytes <= 32 * 1024, "{kernel:?} {dims}: {} bytes", source.workgroup_bytes);
        }
    }
}

/// Cooperative loads and stores need 16-byte aligned workgroup addresses; a driver may lay the
/// workgroup variables out in any order, so in the tensor-core variants every one of them is a
/// multiple of 16 bytes (a lone 4-byte atomic once shifted the staging and every output was wrong).
#[test]
fn tensor_core_workgroup_variables_keep_16_byte_alignment() {
    for source in variants().filter(|source| source.precision == Precision::TensorCore) {
        let (kernel, dims) = (source.kernel, source.dims);
        let module = module(&source.wgsl);
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(module.to_ctx()).expect("layout");
        for (_, var) in module.global_variables.iter().filter(|(_, var)| var.space == AddressSpace::WorkGroup) {
            let size = layouter[var.ty].size;
            assert_eq!(size % 16, 0, "{kernel:?} {dims}: {:?} has {size} bytes", var.name);
        }
    }
}

/// Member names and byte offsets of the WGSL struct `name` in the module of `kernel`.
fn wgsl_struct(kernel: Kernel, name: &str) -> (Vec<(String, u32)>, u32) {
    let source = kernel_source(kernel, HeadDims::new(16, 16).unwrap()).unwrap();
    let module = module(&source.wgsl);
    let (_, ty) = module.types.iter().find(|(_, t)| t.name.as_deref() == Some(name)).expect("struct declared");
    let naga::TypeInner::Struct { members, span } = &ty.inner else { panic!("{name} is a struct") };
    (members.iter().map(|m| (m.name.clone().unwrap_or_default(), m.offset)).collect(), *span)
}

#[test]
fn uniform_structs_match_their_rust_twins() {
    let (layer, span) = wgsl_struct(Kernel::RecurrenceBackward, "Layer");
    assert_eq!(span as usize, std::mem::size_of::<LayerUniform>());
    let rust_layer = [
        ("tokens", std::mem::offset_of!(LayerUniform, tokens)),
        ("seqs", std::mem::offset_of!(LayerUniform, seqs)),
        ("nk", std::mem::offset_of!(LayerUniform, nk)),
        ("nv", std::mem::offset_of!(LayerUniform, nv)),
        ("rep", std::mem::offset_of!(LayerUniform, rep)),
        ("kk", std::mem::offset_of!(LayerUniform, kk)),
        ("channels", std::mem::offset_of!(LayerUniform, channels)),
        ("ckpt_interval", std::mem::offset_of!(LayerUniform, ckpt_interval)),
        ("has_h0", std::mem::offset_of!(LayerUniform, has_h0)),
        ("has_dht", std::mem::offset_of!(LayerUniform, has_dht)),
        ("rms_eps", std::mem::offset_of!(LayerUniform, rms_eps)),
        ("gate_parts", std::mem::offset_of!(LayerUniform, gate_parts)),
        ("has_conv_state", std::mem::offset_of!(LayerUniform, has_conv_state)),
        ("chunk_bwd_base", std::mem::offset_of!(LayerUniform, chunk_bwd_base)),
        ("gate_parts_base", std::mem::offset_of!(LayerUniform, gate_parts_base)),
        ("hat_parts", std::mem::offset_of!(LayerUniform, hat_parts)),
        ("ckpt_columns", std::mem::offset_of!(LayerUniform, ckpt_columns)),
    ];
    let rust_layer: Vec<(String, u32)> = rust_layer.iter().map(|(n, o)| (n.to_string(), *o as u32)).collect();
    assert_eq!(layer, rust_layer);

    let (reduce, span) = wgsl_struct(Kernel::ColumnSumsFinish, "Reduce");
    assert_eq!(span as usize, std::mem::size_of::<ReduceUniform>());
    let rust_reduce = [
        ("rows", std::mem::offset_of!(ReduceUniform, rows)),
        ("cols", std::mem::offset_of!(ReduceUniform, cols)),
        ("rows_per_block", std::mem::offset_of!(ReduceUniform, rows_per_block)),
        ("blocks", std::mem::offset_of!(ReduceUniform, blocks)),
        ("partial_at", std::mem::offset_of!(ReduceUniform, partial_at)),
    ];
    let rust_reduce: Vec<(String, u32)> = rust_reduce.iter().map(|(n, o)| (n.to_string(), *o as u32)).collect();
    assert_eq!(reduce, rust_reduce);
}

#[test]
fn unsupported_sizes_name_the_dim_and_the_generated_sizes() {
    let err = HeadDims::new(128, 100).unwrap_err();
    assert_eq!((err.name, err.value), ("dv", 100));
    let text = err.to_string();
    assert!(text.starts_with("dv = 100 has no generated kernels; generated head sizes are [8, 16,"), "{text}");
    assert!(HeadDims::new(48, 80).is_ok());
}

/// Storage memory written by one invocation and read by another of its workgroup needs
/// `storageBarrier()` between (WGSL's `workgroupBarrier()` orders workgroup memory only): the
/// recurrent backward's kv rows, written by the `ty = 0` invocations during the replay, read by
/// all in the reverse sweep, then overwritten by the next segment's replay.
#[test]
fn the_recurrent_backward_orders_its_shared_kv_rows_with_storage_barriers() {
    for dims in HeadDims::all() {
        let wgsl = kernel_source(Kernel::RecurrenceBackward, dims).unwrap().wgsl;
        let at = |needle: &str| wgsl.find(needle).unwrap_or_else(|| panic!("{dims}: {needle} not found"));
        let (write, read) = (
            at("scratch[kv_scratch_index(job, t - t0, col)] = kv;"),
            at("= scratch[kv_scratch_index(job, step, col)];"),
        );
        assert!(
            wgsl[write..read].contains("storageBarrier();"),
            "{dims}: no storage barrier between the kv write and read"
        );
        let next_replay = wgsl[read..].find("if (layer.has_h0").map(|n| read + n).expect("the dh0 store follows");
        assert!(
            wgsl[read..next_replay].contains("storageBarrier();"),
            "{dims}: no storage barrier before the next replay"
        );
    }
}

/// A kernel declared not to depend on the head dims generates one module and one interface for
/// every pair (it is generated, snapshotted and overridden once).
#[test]
fn kernels_that_do_not_depend_on_dims_are_the_same_for_every_pair() {
    for kernel in Kernel::ALL.into_iter().filter(|kernel| !kernel.depends_on_dims()) {
        let mut sources = HeadDims::all().map(|dims| kernel_source(kernel, dims).expect("generated for every pair"));
        let first = sources.next().expect("a supported pair");
        for source in sources {
            assert_eq!(
                (&source.wgsl, source.workgroup_size, source.workgroup_bytes),
                (&first.wgsl, first.workgroup_size, first.workgroup_bytes),
                "{kernel:?} differs at {}",
                source.dims
            );
        }
    }
}
