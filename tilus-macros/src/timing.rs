//! `#[tile_kernel]`'s own time, measured inside rustc (`TILUS_MACRO_TIMES=FILE` at build time):
//! each expansion appends one line to FILE,
//!
//! ```text
//! <kernel> total <us> parse <us> front <us> compile <us> emit <us> to_rustc <us>
//! ```
//!
//! (the kernel `(unparsed)` with the stages it reached where syn rejects the item): the stages
//! as the macro runs them under the compiler (syn over rustc's token bridge, the macro and
//! `tilus-core` at the build's optimisation level), which the unit benchmark (`compile_time.rs`,
//! proc-macro2's fallback tokens in an optimised test binary) cannot show. Lines are appended
//! whole, so parallel rustc processes can share the file.

use std::io::Write;
use std::time::Instant;

/// The stages timed so far, or nothing when the variable is unset (the usual build).
pub(crate) struct Stages {
    file: std::ffi::OsString,
    last: Instant,
    start: Instant,
    marks: Vec<(&'static str, u128)>,
}

impl Stages {
    pub(crate) fn from_env() -> Option<Stages> {
        std::env::var_os("TILUS_MACRO_TIMES").map(Stages::to_file)
    }

    /// Stages timed from now, appended to `file` by [`Stages::finish`].
    pub(crate) fn to_file(file: std::ffi::OsString) -> Stages {
        let now = Instant::now();
        Stages {
            file,
            last: now,
            start: now,
            marks: Vec::new(),
        }
    }

    /// The stage `name` ends now.
    pub(crate) fn mark(stages: &mut Option<Stages>, name: &'static str) {
        if let Some(s) = stages {
            let now = Instant::now();
            s.marks.push((name, (now - s.last).as_micros()));
            s.last = now;
        }
    }

    /// Appends the kernel's line (errors of the file are ignored: timing never fails a build).
    pub(crate) fn finish(stages: Option<Stages>, kernel: &str) {
        let Some(s) = stages else { return };
        let mut line = format!("{kernel} total {}", s.start.elapsed().as_micros());
        for (name, us) in &s.marks {
            line += &format!(" {name} {us}");
        }
        line.push('\n');
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&s.file);
        if let Ok(mut f) = file {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Stages;

    /// Two expansions append two lines, each the kernel, its total and its stages in order.
    #[test]
    fn each_expansion_appends_its_line() {
        let dir = std::env::temp_dir().join(format!("tilus-timing-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("times.txt");
        let _ = std::fs::remove_file(&file);
        for kernel in ["first", "second"] {
            let mut stages = Some(Stages::to_file(file.clone().into()));
            Stages::mark(&mut stages, "parse");
            Stages::mark(&mut stages, "compile");
            Stages::finish(stages, kernel);
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(' ').collect()).collect();
        assert_eq!(lines.len(), 2, "{text}");
        for (line, kernel) in lines.iter().zip(["first", "second"]) {
            assert_eq!(line.len(), 7, "{text}");
            assert_eq!(
                (line[0], line[1], line[3], line[5]),
                (kernel, "total", "parse", "compile")
            );
            let us: Vec<u128> = [2, 4, 6]
                .iter()
                .map(|&i| line[i].parse().unwrap())
                .collect();
            assert!(us[1] + us[2] <= us[0], "stages within the total: {text}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
