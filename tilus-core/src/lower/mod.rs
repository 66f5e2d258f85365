pub fn lower(def: &crate::ast::KernelDef) -> Result<crate::ir::Kernel, Vec<crate::diag::Diagnostic>> { let _ = def; todo!() }
