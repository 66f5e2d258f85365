pub fn run_all(k: &mut crate::ir::Kernel) { let _ = k; }
