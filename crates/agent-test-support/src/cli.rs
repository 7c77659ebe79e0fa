//! A temporary environment for running the `agent` binary as a user would: a root folder with
//! `home/` (the isolated `HOME` and `XDG_CONFIG_HOME`; `XDG_DATA_HOME` is `home/.local/share`),
//! `work/` (a workspace) and `traces/` (`AGENT_TRACE_DIR`), and commands that start in the root with no keys, no user
//! configuration, no editor and no terminal.
//!
//! The binary's path is a parameter: agent-cli's tests pass `env!("CARGO_BIN_EXE_agent")`, and
//! other test crates build it with [`build_agent`].

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::OnceLock;

/// Variables of the caller's environment that would change what `agent` does.
const CLEARED: [&str; 10] = [
    "AGENT_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "AGENT_MODEL",
    "AGENT_TOKEN",
    "RUST_LOG",
    "EDITOR",
    "VISUAL",
];

/// A temporary home, workspace and trace folder, and the `agent` commands to run in them.
pub struct CliEnv {
    root: tempfile::TempDir,
    binary: PathBuf,
}

impl CliEnv {
    /// A fresh environment for the `agent` binary at `binary`.
    pub fn new(binary: impl Into<PathBuf>) -> Self {
        let root = tempfile::tempdir().expect("cannot create a temporary folder");
        for dir in ["home", "work", "traces"] {
            std::fs::create_dir(root.path().join(dir)).expect("cannot create a folder");
        }
        Self {
            root,
            binary: binary.into(),
        }
    }

    /// The root folder (the commands' current folder).
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// A path under the root.
    pub fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    /// A path under the root, as a command-line argument.
    pub fn arg(&self, name: &str) -> String {
        self.path(name).to_string_lossy().into_owned()
    }

    /// The workspace folder, as a command-line argument.
    pub fn work(&self) -> String {
        self.arg("work")
    }

    /// The trace folder (also `AGENT_TRACE_DIR`).
    pub fn traces(&self) -> PathBuf {
        self.path("traces")
    }

    /// The user's data folder (`XDG_DATA_HOME`), where traces live when no trace folder is
    /// named: `home/.local/share`.
    pub fn data(&self) -> PathBuf {
        self.path("home/.local/share")
    }

    /// Writes a file under the root (creating its folders) and returns its path as an argument.
    pub fn write(&self, name: &str, text: &str) -> String {
        let path = self.path(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("cannot create a folder");
        }
        std::fs::write(&path, text).expect("cannot write a file");
        path.to_string_lossy().into_owned()
    }

    /// `agent <args>` as a blocking command: current folder the root, `HOME` and
    /// `XDG_CONFIG_HOME` the `home/` folder, `XDG_DATA_HOME` [`CliEnv::data`], `AGENT_TRACE_DIR` the `traces/` folder,
    /// `NO_COLOR`, no standard input, and none of the caller's keys, model, token, log filter
    /// or editor.
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        self.program(&self.binary, args)
    }

    /// Another program (e.g. a client that starts `agent` itself) in the same environment as
    /// [`CliEnv::command`], which the processes it starts inherit.
    pub fn program(
        &self,
        program: impl AsRef<std::ffi::OsStr>,
        args: &[&str],
    ) -> std::process::Command {
        let mut command = std::process::Command::new(program);
        command
            .args(args)
            .current_dir(self.root.path())
            .env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("home"))
            .env("XDG_DATA_HOME", self.data())
            .env("XDG_STATE_HOME", self.path("state"))
            .env("AGENT_TRACE_DIR", self.traces())
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        for var in CLEARED {
            command.env_remove(var);
        }
        command
    }

    /// [`CliEnv::command`] as a tokio command.
    pub fn agent(&self, args: &[&str]) -> tokio::process::Command {
        self.command(args).into()
    }

    /// Starts `agent serve --port 0 <args>` and waits (up to a minute) for the address it logs.
    /// Its stdout is discarded and the rest of its stderr kept in [`Served::log`]; the process
    /// is killed when the value is dropped.
    pub fn serve(&self, args: &[&str]) -> Served {
        self.serve_with(args, |_| {})
    }

    /// [`CliEnv::serve`] with the command changed by `configure` first (e.g. run as another
    /// user).
    pub fn serve_with(
        &self,
        args: &[&str],
        configure: impl FnOnce(&mut std::process::Command),
    ) -> Served {
        let mut all = vec!["serve", "--port", "0"];
        all.extend_from_slice(args);
        let mut command = self.command(&all);
        configure(&mut command);
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the agent binary could not start");
        let mut reader = std::io::BufReader::new(child.stderr.take().expect("piped stderr"));
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let url = loop {
            let mut line = String::new();
            let read = std::io::BufRead::read_line(&mut reader, &mut line).unwrap_or(0);
            log.lock().expect("log").push_str(&line);
            assert!(read > 0, "agent serve exited: {}", log.lock().expect("log"));
            if let Some(at) = line.find("http://") {
                let url: String = line[at..]
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .collect();
                break url.trim_end_matches('/').to_owned();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no address in the log"
            );
        };
        let kept = log.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while std::io::BufRead::read_line(&mut reader, &mut line).unwrap_or(0) > 0 {
                kept.lock().expect("log").push_str(&line);
                line.clear();
            }
        });
        Served { child, url, log }
    }

    /// Runs `agent <args>` to the end and returns what it printed.
    pub async fn run(&self, args: &[&str]) -> Output {
        self.agent(args)
            .output()
            .await
            .expect("the agent binary could not start")
    }
}

/// A running `agent serve` (see [`CliEnv::serve`]), killed when dropped.
pub struct Served {
    child: std::process::Child,
    /// The base URL, `http://127.0.0.1:<port>`.
    pub url: String,
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Served {
    /// What the server wrote on stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().expect("log").clone()
    }

    /// Sends one HTTP/1.1 request (`Connection: close`, a JSON body when given) and returns the
    /// status and the body parsed as JSON (`Value::Null` when it is not JSON). Blocking: call it
    /// from `spawn_blocking` when the test's runtime must keep serving a mock model.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        use std::io::{Read, Write};
        let address = self.url.trim_start_matches("http://");
        let mut stream =
            std::net::TcpStream::connect(address).expect("cannot connect to agent serve");
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .expect("cannot send the request");
        let mut response = String::new();
        stream
            .read_to_string(&mut response)
            .expect("cannot read the response");
        let status = response
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP response: {response}"));
        let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        (status, serde_json::from_str(body).unwrap_or_default())
    }

    /// The process, to signal or wait for.
    pub fn child(&mut self) -> &mut std::process::Child {
        &mut self.child
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a command printed on stdout.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What a command printed on stderr.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A command's exit code (-1 when a signal ended it).
pub fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

/// The `agent` binary of this workspace, built once per process with `cargo build -p goaltree-cli`
/// (for test crates other than agent-cli, which have no `CARGO_BIN_EXE_agent`). It lands next
/// to the calling test binary's folder: `<target>/debug/agent` for `<target>/debug/deps/*`.
/// `AGENT_TEST_BINARY` names another binary to test instead, and nothing is built.
pub fn build_agent() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        // A binary built elsewhere (a release build, a copy kept apart from other builds).
        if let Some(binary) = std::env::var_os("AGENT_TEST_BINARY") {
            let binary = PathBuf::from(binary);
            assert!(
                binary.is_file(),
                "AGENT_TEST_BINARY: no file at {}",
                binary.display()
            );
            return binary;
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args(["build", "--quiet", "-p", "goaltree-cli", "--bin", "agent"])
            .current_dir(root)
            .status()
            .expect("cargo build could not start");
        assert!(status.success(), "building the agent binary failed");
        let exe = std::env::current_exe().expect("the test binary has a path");
        let binary = exe
            .parent()
            .and_then(Path::parent)
            .expect("the test binary is in <target>/<profile>/deps")
            .join("agent");
        assert!(binary.is_file(), "no agent binary at {}", binary.display());
        binary
    })
}
