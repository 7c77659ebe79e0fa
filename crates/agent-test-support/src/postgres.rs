//! A throwaway PostgreSQL cluster for a test: `initdb` and `pg_ctl` from the installed server
//! (Debian's `postgresql` package, which `scripts/setup-postgres.sh` installs), in a temporary
//! folder, listening on a free loopback port, stopped and removed when dropped.
//!
//! The server refuses to run as root, so under root the cluster is made and run as the
//! `postgres` user the package creates.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use tempfile::TempDir;

/// A running PostgreSQL cluster of its own; its one user is `postgres`, with no password.
pub struct Cluster {
    dir: TempDir,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

impl Cluster {
    /// Makes and starts a cluster (without `fsync`: tests need no durability across a crash
    /// of the machine). Panics with what to install when there is no server.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Like [`Cluster::start`], with more server options (`-c name=value` pairs, which win
    /// over the defaults).
    pub fn start_with(options: &[&str]) -> Self {
        let bin = server_bin().unwrap_or_else(|| {
            panic!(
                "PostgreSQL's initdb and pg_ctl were not found (set PG_BIN, or run \
                 scripts/setup-postgres.sh, which `cargo xtask setup` runs)"
            )
        });
        let as_postgres = is_root();
        let dir = tempfile::Builder::new()
            .prefix("agent-pg-")
            .tempdir()
            .unwrap();
        if as_postgres {
            run(Command::new("chown")
                .args(["-R", "postgres:"])
                .arg(dir.path()));
        }
        let cluster = Self {
            port: free_port(),
            dir,
            bin,
            as_postgres,
        };
        let data = cluster.data();
        run(cluster
            .command("initdb")
            .args([
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
                "-D",
            ])
            .arg(&data));
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200 {}",
            cluster.port,
            cluster.dir.path().display(),
            options.join(" ")
        );
        run(cluster
            .command("pg_ctl")
            .args(["-w", "-t", "60", "-D"])
            .arg(&data)
            .arg("-l")
            .arg(cluster.dir.path().join("server.log"))
            .args(["-o", &options, "start"]));
        cluster
    }

    /// The URL of a database of this cluster (`postgres` always exists).
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// Creates an empty database and returns its URL.
    pub fn create_database(&self, name: &str) -> String {
        run(self
            .command("createdb")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
            ])
            .arg(name));
        self.url(name)
    }

    /// The server's log so far (for a failing test's message).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        let mut command = if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(path);
            command
        } else {
            Command::new(path)
        };
        command.stdin(Stdio::null());
        command
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .args(["-D"])
            .arg(self.data())
            .args(["-m", "immediate", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// The folder with `initdb` and `pg_ctl`: `$PG_BIN`, the newest `/usr/lib/postgresql/*/bin`,
/// or the `PATH`.
pub fn server_bin() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file())
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn run(command: &mut Command) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
