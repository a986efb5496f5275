//! What the examples other than the lesson share (each includes this file with `#[path]`): a
//! command line that takes nothing, and output that ends quietly when its reader goes away.

use std::process::ExitCode;

/// Refuses any argument, for an example that takes none: one line naming it, and the exit
/// code 2 to return. `None` when there is none.
#[allow(dead_code)] // shared_openings takes a flag, and reads its arguments itself
pub fn refuse_arguments(example: &str) -> Option<ExitCode> {
    let first = std::env::args_os().nth(1)?;
    eprintln!(
        "error: unexpected argument {:?}; usage: {example} (it takes no arguments)",
        first.to_string_lossy()
    );
    Some(ExitCode::from(2))
}

/// Ends the program after a failed write to stdout: quietly when the reader went away (a
/// closed pipe, `| head`), with a message otherwise. `println!` would panic.
pub fn stdout_failed(error: &std::io::Error) -> ! {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: writing the output: {error}");
    std::process::exit(1);
}

/// `println!`, ending the program as [`stdout_failed`] says when stdout cannot be written.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(error) = writeln!(std::io::stdout(), $($arg)*) {
            $crate::output::stdout_failed(&error);
        }
    }};
}

pub(crate) use say;
