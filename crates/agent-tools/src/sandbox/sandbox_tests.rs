//! Tests of the sandbox settings: the environment of commands, modes, and what is granted.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

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

#[test]
fn with_namespaces_protected_paths_are_mounted_watched_or_never_granted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("real-agent")).unwrap();
    std::os::unix::fs::symlink("real-agent", root.join(".agent")).unwrap();
    let config = SandboxConfig {
        protected: vec![root.join("traces")],
        helper: Some(PathBuf::from("/bin/false")),
        namespaces: true,
        ..SandboxConfig::default()
    };
    let split = split_protected(&config, &root);
    assert_eq!(split.existing, [root.join(".git"), root.join("real-agent")]);
    assert_eq!(
        split.missing,
        [root.join("agent.toml"), root.join("traces")]
    );
    assert_eq!(split.symlinks, [root.join(".agent")]);

    // The symlinked name keeps the top closed; the missing ones are taken away when created.
    let confinement = Confinement::prepare(&config, &root, "split-test").unwrap();
    assert!(!confinement.writable.contains(&root));
    assert!(confinement.writable.contains(&root.join(".git")));
    std::fs::remove_file(root.join(".agent")).unwrap();
    let confinement = Confinement::prepare(&config, &root, "split-test").unwrap();
    assert!(confinement.writable.contains(&root));
    assert_eq!(confinement.read_only, [root.join(".git")]);
    std::fs::write(root.join("agent.toml"), "allow = [\"bash\"]\n").unwrap();
    std::fs::create_dir(root.join(".agent")).unwrap();
    let taken = confinement.remove_created();
    assert_eq!(taken, [root.join("agent.toml"), root.join(".agent")]);
    assert!(!root.join("agent.toml").exists());
    assert!(confinement.remove_created().is_empty());
}

#[test]
#[cfg(feature = "sandbox")]
fn a_program_that_is_no_helper_fails_the_probe() {
    use std::path::Path;
    let error = probe_helper(Path::new("/bin/false")).unwrap_err();
    assert!(error.contains("failed"), "{error}");
    assert!(probe_helper(Path::new("/nonexistent/agent")).is_err());
}
