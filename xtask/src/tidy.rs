//! Tidy checks that run as ordinary tests: the crate dependency direction of the architecture,
//! and that every Rust file opens with a `//!` doc comment saying what it is for.

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    /// Which workspace crates each crate may depend on (normal dependencies).
    /// This is the Architecture Invariant of `docs/architecture.md`.
    const ALLOWED: &[(&str, &[&str])] = &[
        ("agent-goal", &[]),
        ("agent-llm", &[]),
        ("agent-execution", &["agent-goal", "agent-llm"]),
        (
            "agent-store-fs",
            &["agent-execution", "agent-goal", "agent-llm"],
        ),
        ("agent-api", &["agent-execution", "agent-goal", "agent-llm"]),
        ("agent-mcp", &["agent-execution", "agent-goal", "agent-llm"]),
        (
            "agent-cli",
            &[
                "agent-goal",
                "agent-llm",
                "agent-execution",
                "agent-store-fs",
                "agent-api",
                "agent-mcp",
            ],
        ),
    ];

    fn root() -> PathBuf {
        super::super::workspace_root()
    }

    /// Returns the workspace crates named in the `[dependencies]` table of a manifest.
    fn workspace_deps(manifest: &str) -> Vec<String> {
        let mut deps = Vec::new();
        let mut in_deps = false;
        for line in manifest.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                in_deps = line == "[dependencies]";
                continue;
            }
            if in_deps {
                let name = line.split(['.', '=', ' ']).next().unwrap_or("");
                if name.starts_with("agent-") {
                    deps.push(name.to_owned());
                }
            }
        }
        deps
    }

    #[test]
    fn crate_dependencies_point_downward() {
        let allowed: BTreeMap<_, _> = ALLOWED.iter().copied().collect();
        let crates_dir = root().join("crates");
        let mut seen = 0;
        for entry in std::fs::read_dir(&crates_dir).unwrap() {
            let dir = entry.unwrap().path();
            let manifest_path = dir.join("Cargo.toml");
            let Ok(manifest) = std::fs::read_to_string(&manifest_path) else {
                continue;
            };
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            let deps = workspace_deps(&manifest);
            // New crates must be placed in the table before they may depend on anything.
            let ok = allowed.get(name.as_str()).copied().unwrap_or(&[]);
            for dep in deps {
                assert!(
                    ok.contains(&dep.as_str()),
                    "{name} depends on {dep}, which breaks the dependency direction in \
                     docs/architecture.md (allowed: {ok:?})"
                );
            }
            seen += 1;
        }
        assert!(
            seen >= ALLOWED.len(),
            "expected at least {} crates, found {seen}",
            ALLOWED.len()
        );
    }

    #[test]
    fn agent_api_never_names_a_concrete_store() {
        let manifest = std::fs::read_to_string(root().join("crates/agent-api/Cargo.toml")).unwrap();
        assert!(
            !manifest.contains("agent-store-"),
            "agent-api must take Arc<dyn TraceStore>"
        );
    }

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy();
            if path.is_dir() {
                if name == "target" || name.starts_with('.') || name == "node_modules" {
                    continue;
                }
                rust_files(&path, out);
            } else if name.ends_with(".rs") {
                out.push(path);
            }
        }
    }

    #[test]
    fn every_rust_file_opens_with_a_module_doc() {
        let mut files = Vec::new();
        for top in ["crates", "xtask", "tests"] {
            let dir = root().join(top);
            if dir.is_dir() {
                rust_files(&dir, &mut files);
            }
        }
        assert!(!files.is_empty());
        let missing: Vec<_> = files
            .iter()
            .filter(|path| {
                let text = std::fs::read_to_string(path).unwrap();
                !text.trim_start().starts_with("//!")
            })
            .map(|path| {
                path.strip_prefix(root())
                    .unwrap_or(path)
                    .display()
                    .to_string()
            })
            .collect();
        assert!(
            missing.is_empty(),
            "files without a `//!` opening doc comment: {missing:#?}"
        );
    }

    #[test]
    fn manifest_parser_reads_only_normal_dependencies() {
        let manifest = "[dependencies]\nagent-goal.workspace = true\nserde = \"1\"\n\n\
                        [dev-dependencies]\nagent-store-fs = { path = \"x\" }\n";
        assert_eq!(workspace_deps(manifest), vec!["agent-goal".to_owned()]);
    }
}
