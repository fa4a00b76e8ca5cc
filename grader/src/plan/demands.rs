//! What the driver-call trace of a student's own binary must show, beyond
//! a passing report, for its run to count. Each family says which of these
//! it asks (`exercise::demands`); the judge asks them of the trace.

/// One question asked of a run's trace and report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Demand {
    /// Every kernel the exercise needs (the catalogue's `launches`) was
    /// launched, and at least once successfully.
    Launched,
    /// A copy from the GPU to the host succeeded after the last successful
    /// launch of those kernels.
    CopiedBack,
    /// Asynchronous copies from page-locked memory, each direction on two
    /// or more streams.
    OverlappedCopies,
    /// On a GPU, where the run's chunks and serial time leave room for it,
    /// the overlapped run took clearly less time than the serial one.
    OverlapInTime,
}

/// What every exercise's trace must show: the kernel did the work and its
/// result came back.
pub const EVERY_EXERCISE: &[Demand] = &[Demand::Launched, Demand::CopiedBack];
