//! Checks the device layer against the f64 oracle.
