//! Tests of the sandbox settings: the environment of commands, modes, and what is granted.

use std::collections::BTreeMap;
use std::ffi::OsString;

use super::*;

fn env_of(config: &SandboxConfig, vars: &[(&str, &str)]) -> Vec<String> {
    let vars = vars
        .iter()
        .map(|(name, value)| (OsString::from(name), OsString::from(value)));
    command_env(config, vars)
        .into_iter()
        .map(|(name, value)| format!("{}={}", name.to_string_lossy(), value.to_string_lossy()))
        .collect()
}

#[test]
fn secrets_are_left_out_unless_kept() {
    let vars = [
        ("PATH", "/bin"),
        ("OPENAI_API_KEY", "sk"),
        ("AGENT_TOKEN", "t"),
        ("db_password", "p"),
        ("MY_SECRET_THING", "s"),
        ("GH_PAT", "g"),
    ];
    let mut config = SandboxConfig {
        env_remove: vec!["GH_PAT".to_owned()],
        ..SandboxConfig::default()
    };
    assert_eq!(env_of(&config, &vars), ["PATH=/bin"]);

    config.env_keep = vec!["AGENT_TOKEN".to_owned()];
    config.env_set = BTreeMap::from([("PATH".to_owned(), "/usr/bin".to_owned())]);
    assert_eq!(env_of(&config, &vars), ["AGENT_TOKEN=t", "PATH=/usr/bin"]);

    let off = SandboxConfig::new(SandboxMode::Off);
    assert_eq!(env_of(&off, &vars).len(), vars.len());
}

#[test]
fn modes_read_and_order_from_strict_to_loose() {
    for mode in [
        SandboxMode::ReadOnly,
        SandboxMode::WorkspaceWrite,
        SandboxMode::Off,
    ] {
        assert_eq!(mode.as_str().parse::<SandboxMode>(), Ok(mode));
    }
    assert!("none".parse::<SandboxMode>().is_err());
    assert!(SandboxMode::ReadOnly < SandboxMode::WorkspaceWrite);
    assert!(SandboxMode::WorkspaceWrite < SandboxMode::Off);
}

#[test]
fn protected_entries_are_never_granted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for sub in [".git/hooks", ".agent", "src", "data/traces"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    std::fs::write(root.join("agent.toml"), "").unwrap();
    std::fs::write(root.join("README.md"), "").unwrap();
    std::os::unix::fs::symlink("..", root.join("src/up")).unwrap();
    std::os::unix::fs::symlink("/", root.join("top")).unwrap();

    let config = SandboxConfig {
        protected: vec![root.join("data/traces")],
        ..SandboxConfig::default()
    };
    let protected = protected_paths(&config, &root);
    let mut writable = Vec::new();
    grant_tree(&root, &protected, &mut writable);
    writable.sort();
    let names: Vec<_> = writable
        .iter()
        .map(|path| path.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert_eq!(names, ["README.md", "src"]);
}
