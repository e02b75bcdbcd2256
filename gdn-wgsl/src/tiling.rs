//! How kernels spread a `[dk, dv]` state over a workgroup's threads.
//!
//! The recurrent backward ([`Tiling`]): a workgroup of `tx × ty` threads covers `ty·ry ≥ dk` rows
//! and `tx·rx` columns; each thread keeps an `ry × rx` tile of the state in registers. The decode
//! step and the recurrent kernels ([`LaneLayout`]): column groups of four columns, or of one, over
//! row lanes. (The chunked family's tensor-core kernels cut a head into 16 × 16 blocks: their
//! [`crate::TensorCoreTiling`] lies with them.) WGSL cannot size a per-thread array with an
//! `override`, so the generator derives these numbers from the head dims and writes them as
//! `const`s into each variant.

use crate::HeadDims;

/// Invocations of a block of interleaved column groups ([`LaneLayout`]): the shuffle kernels need
/// subgroups at least this wide.
pub const LANE_BLOCK: u32 = 32;

/// Threads along an extent: about four elements each, at most 16 threads, a power of two.
fn threads_along(extent: u32) -> u32 {
    extent.div_ceil(4).next_power_of_two().min(16)
}

/// The thread layout of one recurrence kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiling {
    /// Threads across columns.
    pub tx: u32,
    /// Threads across rows.
    pub ty: u32,
    /// Columns per thread.
    pub rx: u32,
    /// Rows per thread.
    pub ry: u32,
}

impl Tiling {
    /// The backward: one workgroup covers every column of a head, because the row sums `dq̂`,
    /// `dk̂` run over all of them.
    pub fn backward(dims: HeadDims) -> Self {
        let (ty, tx) = (threads_along(dims.dk), threads_along(dims.dv));
        Self { tx, ty, rx: dims.dv.div_ceil(tx), ry: dims.dk.div_ceil(ty) }
    }

    /// Threads per workgroup.
    pub fn threads(&self) -> u32 {
        self.tx * self.ty
    }

    /// Columns one workgroup covers.
    pub fn columns(&self) -> u32 {
        self.tx * self.rx
    }

    /// Rows one workgroup covers (at least dk).
    pub fn rows(&self) -> u32 {
        self.ty * self.ry
    }
}

/// Workgroup memory the kernels whose tiles or stages are sized by it are fitted to (the
/// tensor-core passes over chunks, the few-heads recurrent forward's stage): 32 KiB, lavapipe's
/// and Apple's, the least the kernels are tested under.
pub(crate) const PORTABLE_WORKGROUP_BYTES: u32 = 32 * 1024;
/// How the decode step and the recurrent kernels spread a head's `[dk, dv]` state over a workgroup
/// (`templates/decode/decode_step.wgsl`, `templates/recurrent/recurrence_forward.wgsl`,
/// `recurrence_forward_chunks.wgsl`, `recurrence_backward_columns.wgsl`):
/// column groups of `row_lanes` invocations, row lane `rl` of group `g` holding rows
/// `rl + row_lanes·i` of the group's `group_columns` columns (a vec4 of four, or one),
/// [`LaneLayout::column_lanes`] groups interleaved in each block of [`LANE_BLOCK`]
/// consecutive invocations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneLayout {
    /// Column groups of a workgroup, a whole number of blocks.
    pub groups: u32,
    /// Invocations holding a column group's rows: [`ROW_LANES`] or [`LANE_BLOCK`].
    pub row_lanes: u32,
    /// State rows a lane holds.
    pub rows_per_lane: u32,
    /// Columns of a group: four (a vec4 a row) or one.
    pub group_columns: u32,
}

/// Row lanes of the decode step and of the per-token recurrent forward: a lane holds `dk / 8` rows,
/// so a block of 32 holds four column groups.
pub const ROW_LANES: u32 = 8;

/// Column groups (one column each) of a workgroup of the column-block recurrent backward at
/// dk ≤ 128: four beat eight, whose shares of dq̂ and of dk̂ are then summed in turn to fit, four
/// barriers a chunk instead of two (BENCHMARKS.md, S4 recurrent backward).
pub const RECURRENT_COLUMNS_GROUPS: u32 = 4;

impl LaneLayout {
    /// The decode step: a head's whole state in one workgroup, with at least `dk / 4` groups
    /// whatever `dv`, so that a token's jobs (one per q, k and v channel and per column) take few
    /// rounds of the workgroup.
    pub fn decode(dims: HeadDims) -> Self {
        Self::new(dims, dims.dk.max(dims.dv) / 4, ROW_LANES)
    }

    /// The per-token recurrent forward: one block of four column groups (16 columns) a workgroup
    /// (its columns are independent, so a head's spread over several workgroups).
    pub fn recurrent_forward(dims: HeadDims) -> Self {
        Self::new(dims, 4, ROW_LANES)
    }

    /// The chunk-solved recurrent forward for few heads
    /// (`templates/recurrent/recurrence_forward_chunks.wgsl`): one column a group, its rows over a
    /// whole block of 32 lanes (one subgroup), so that a lane holds `dk / 32` entries of the state
    /// and its share of a chunk is small; four groups a workgroup, so that a head's columns spread
    /// over many SMs. With few heads a GPU's schedulers each run one or two such warps, and every
    /// instruction's latency shows.
    pub fn recurrent_forward_chunks(dims: HeadDims) -> Self {
        Self { group_columns: 1, ..Self::new(dims, 4, LANE_BLOCK) }
    }

    /// The column-block recurrent backward for few heads
    /// (`templates/recurrent/recurrence_backward_columns.wgsl`): one column a group over 32 lanes
    /// as in [`LaneLayout::recurrent_forward_chunks`], `RECURRENT_COLUMNS_GROUPS` (4) groups a
    /// workgroup, fewer above dk = 128: the groups' shares of a chunk's dq̂ and dk̂ take 16 KiB of
    /// workgroup memory at most. Each workgroup sums its groups' shares before writing them, so
    /// more groups would mean fewer partials for `qk_norm_backward` to add, but more warps to wait
    /// for at each of a chunk's barriers.
    pub fn recurrent_backward_columns(dims: HeadDims) -> Self {
        let groups = (RECURRENT_COLUMNS_GROUPS * 128 / dims.dk).clamp(1, RECURRENT_COLUMNS_GROUPS);
        Self { group_columns: 1, ..Self::new(dims, groups, LANE_BLOCK) }
    }

    fn new(dims: HeadDims, groups: u32, row_lanes: u32) -> Self {
        let column_lanes = LANE_BLOCK / row_lanes;
        Self {
            groups: groups.next_multiple_of(column_lanes),
            row_lanes,
            rows_per_lane: dims.dk.div_ceil(row_lanes),
            group_columns: 4,
        }
    }

    /// Column groups interleaved in a block (row lanes this many invocations apart).
    pub fn column_lanes(&self) -> u32 {
        LANE_BLOCK / self.row_lanes
    }

    /// Threads per workgroup.
    pub fn threads(&self) -> u32 {
        self.groups * self.row_lanes
    }

    /// State columns one workgroup covers.
    pub fn columns(&self) -> u32 {
        self.group_columns * self.groups
    }

    /// The `const`s the four templates read.
    pub(crate) fn constants(&self, dims: HeadDims) -> Vec<(&'static str, u32)> {
        vec![
            ("DK", dims.dk),
            ("DV", dims.dv),
            ("ROW_LANES", self.row_lanes),
            ("COLUMN_LANES", self.column_lanes()),
            ("RY", self.rows_per_lane),
            ("THREADS", self.threads()),
        ]
    }
}
