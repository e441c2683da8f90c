//! Helpers shared by the simulator's integration tests.

use flashback_native::run::RunOptions;

/// Run options for a test run: no recording, no capture file.
pub fn opts() -> RunOptions {
    RunOptions {
        step: "t".into(),
        capture_path: None,
        no_recording: true,
        stream_only: false,
        overwrite_capture: false,
        sys_root: None,
    }
}
