//! Tidy checks that run as ordinary tests: the crate dependency direction of the architecture,
//! that every Rust file opens with a `//!` doc comment saying what it is for, that no module is
//! over 500 lines of non-test code, that no crate's modules import each other in a cycle (but
//! the few still listed), and that the runner's public items are the committed list.

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    /// Which workspace crates each crate may depend on (normal dependencies).
    /// This is the Architecture Invariant of `docs/architecture.md`. No entry names
    /// `agent-test-support`: it is only ever a dev-dependency.
    const ALLOWED: &[(&str, &[&str])] = &[
        ("agent-goal", &[]),
        ("agent-llm", &[]),
        ("agent-execution", &["agent-goal", "agent-llm"]),
        ("agent-tools", &[]),
        (
            "agent-context",
            &["agent-goal", "agent-llm", "agent-execution"],
        ),
        (
            "agent-runner",
            &[
                "agent-goal",
                "agent-llm",
                "agent-execution",
                "agent-context",
                "agent-tools",
                "agent-checkpoint",
            ],
        ),
        (
            "agent-plan",
            &[
                "agent-goal",
                "agent-execution",
                "agent-runner",
                "agent-checkpoint",
            ],
        ),
        ("agent-store-fs", &["agent-execution"]),
        ("agent-checkpoint", &[]),
        ("agent-store-pg", &["agent-execution"]),
        ("agent-mcp", &["agent-tools"]),
        (
            "agent-worker",
            &["agent-execution", "agent-runner", "agent-tools"],
        ),
        (
            "agent-app",
            &[
                "agent-llm",
                "agent-goal",
                "agent-execution",
                "agent-tools",
                "agent-runner",
                "agent-plan",
                "agent-worker",
                "agent-checkpoint",
                "agent-mcp",
                "agent-store-fs",
                "agent-store-pg",
            ],
        ),
        (
            "agent-api",
            &[
                "agent-execution",
                "agent-runner",
                "agent-plan",
                "agent-worker",
                "agent-checkpoint",
            ],
        ),
        (
            "agent-acp",
            &[
                "agent-execution",
                "agent-goal",
                "agent-llm",
                "agent-runner",
                "agent-plan",
                "agent-tools",
            ],
        ),
        (
            "agent-otel",
            &["agent-execution", "agent-goal", "agent-llm"],
        ),
        ("agent-test-support", &["agent-execution"]),
        (
            "agent-tui",
            &[
                "agent-execution",
                "agent-goal",
                "agent-runner",
                "agent-plan",
            ],
        ),
        (
            "agent-cli",
            &[
                "agent-goal",
                "agent-llm",
                "agent-execution",
                "agent-tools",
                "agent-runner",
                "agent-plan",
                "agent-worker",
                "agent-app",
                "agent-api",
                "agent-mcp",
                "agent-acp",
                "agent-otel",
                "agent-checkpoint",
                "agent-tui",
            ],
        ),
        (
            "goaltree",
            &[
                "agent-goal",
                "agent-llm",
                "agent-execution",
                "agent-tools",
                "agent-runner",
                "agent-store-fs",
                "agent-store-pg",
                "agent-mcp",
                "agent-api",
            ],
        ),
    ];

    /// The most lines a module may have before its tests.
    const MAX_MODULE_LINES: usize = 500;

    fn root() -> PathBuf {
        super::super::workspace_root()
    }

    /// Returns the workspace crates (folders of `crates/`) named in the `[dependencies]` table
    /// of a manifest; registry crates whose name starts the same way (`agent-client-protocol`)
    /// are not ours.
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
                if name.starts_with("agent-") && root().join("crates").join(name).is_dir() {
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
            for dep in &deps {
                assert!(
                    ok.contains(&dep.as_str()),
                    "{name} depends on {dep}, which breaks the dependency direction in \
                     docs/architecture.md (allowed: {ok:?})"
                );
            }
            // The table says exactly what each crate uses, so it reads as the architecture.
            for listed in ok {
                assert!(
                    deps.iter().any(|dep| dep == listed),
                    "the table lets {name} depend on {listed}, which it does not: remove it"
                );
            }
            seen += 1;
        }
        assert!(seen >= 9, "expected at least 9 crates, found {seen}");
    }

    #[test]
    fn agent_api_never_names_a_concrete_store() {
        let manifest = std::fs::read_to_string(root().join("crates/agent-api/Cargo.toml")).unwrap();
        assert!(
            !manifest.contains("agent-store-"),
            "agent-api must take Arc<dyn TraceStore>"
        );
    }

    /// `cargo tree` of the normal dependencies `args` select, one `{p}` line per crate.
    fn cargo_tree(args: &[&str]) -> String {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let output = std::process::Command::new(cargo)
            .current_dir(root())
            .args(["tree", "--offline", "-e", "normal", "--prefix", "none"])
            .args(["--format", "{p}"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "cargo tree failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The application core builds an agent for any front end: no command-line parser or
    /// terminal library reaches it, whatever its features.
    #[test]
    fn the_application_core_links_no_front_end_library() {
        let tree = cargo_tree(&["-p", "goaltree-app", "--all-features"]);
        let names: std::collections::BTreeSet<&str> = tree
            .lines()
            .filter_map(|line| line.split_whitespace().next())
            .collect();
        assert!(
            names.contains("goaltree-runner"),
            "the tree is empty: {tree}"
        );
        for front_end in [
            "clap",
            "ratatui",
            "crossterm",
            "goaltree-tui",
            "goaltree-acp",
            "goaltree-api",
        ] {
            assert!(
                !names.contains(front_end),
                "agent-app depends on {front_end}; front ends build on the core, not the other \
                 way round"
            );
        }
    }

    /// Every feature of a published crate is named in its README's `## Features` list, so what
    /// a downstream can turn off is documented where crates.io shows it.
    #[test]
    fn every_feature_is_in_its_crates_readme() {
        for entry in std::fs::read_dir(root().join("crates")).unwrap() {
            let dir = entry.unwrap().path();
            let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
                continue;
            };
            let mut in_features = false;
            let mut features = Vec::new();
            for line in manifest.lines() {
                if line.starts_with('[') {
                    in_features = line == "[features]";
                } else if in_features
                    && !line.starts_with('#')
                    && let Some((name, _)) = line.split_once('=')
                {
                    features.push(name.trim().to_owned());
                }
            }
            features.retain(|f| f != "default");
            if features.is_empty() {
                continue;
            }
            let readme = std::fs::read_to_string(dir.join("README.md")).unwrap_or_default();
            let section = readme.split("## Features").nth(1).unwrap_or("");
            for feature in features {
                assert!(
                    section.contains(&format!("- `{feature}`")),
                    "{}: feature `{feature}` is missing from README.md's `## Features` list",
                    dir.display()
                );
            }
        }
    }

    /// One declared minimum Rust version, the workspace's, which every package inherits, and
    /// no newer than the toolchain that runs these checks (CI's): the packages promise no more
    /// than CI builds and tests with.
    #[test]
    fn every_package_declares_the_workspace_s_rust_version_and_ci_meets_it() {
        let workspace = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
        let declared = workspace
            .lines()
            .find_map(|l| l.strip_prefix("rust-version = "))
            .map(|v| v.trim_matches('"').to_owned())
            .expect("the workspace declares rust-version");
        for entry in std::fs::read_dir(root().join("crates")).unwrap() {
            let manifest = entry.unwrap().path().join("Cargo.toml");
            let text = std::fs::read_to_string(&manifest).unwrap_or_default();
            assert!(
                text.is_empty() || text.contains("rust-version.workspace = true"),
                "{} does not inherit the workspace's rust-version",
                manifest.display()
            );
        }
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
        let version = std::process::Command::new(rustc)
            .arg("--version")
            .output()
            .unwrap();
        let version = String::from_utf8_lossy(&version.stdout);
        let numbers = |text: &str| -> Vec<u32> {
            text.split(['.', '-', ' '])
                .take(2)
                .map(|n| n.parse().unwrap_or(0))
                .collect()
        };
        let running = numbers(version.trim_start_matches("rustc "));
        assert!(
            numbers(&declared) <= running,
            "the checks run on {version}, older than the declared rust-version {declared}"
        );
    }

    /// The smallest offline agent — the runner without default features (no shell-rule parser,
    /// sandbox, tiktoken or HTTP provider), which brings the model types, the records and the
    /// tools — stays under 100 crates, its own included.
    #[test]
    fn a_minimal_offline_agent_stays_under_100_crates() {
        let tree = cargo_tree(&["-p", "goaltree-runner", "--no-default-features"]);
        let crates: std::collections::BTreeSet<&str> = tree
            .lines()
            .filter_map(|line| line.split(" (").next())
            .collect();
        assert!(crates.contains("goaltree-llm v0.1.0"), "{tree}");
        for heavy in [
            "brush-parser",
            "landlock",
            "tiktoken-rs",
            "reqwest",
            "insta",
        ] {
            assert!(
                !crates.iter().any(|c| c.starts_with(&format!("{heavy} "))),
                "the minimal agent compiles {heavy}"
            );
        }
        assert!(crates.len() < 100, "{} crates: {crates:#?}", crates.len());
    }

    /// The command line parses no configuration file itself: agent.toml is the application's.
    #[test]
    fn the_command_line_parses_no_toml() {
        let manifest = std::fs::read_to_string(root().join("crates/agent-cli/Cargo.toml")).unwrap();
        assert!(
            !manifest
                .lines()
                .any(|line| line.trim_start().starts_with("toml")),
            "agent-cli depends on toml; agent.toml is read by agent-app"
        );
        let mut files = Vec::new();
        rust_files(&root().join("crates/agent-cli/src"), &mut files);
        assert!(files.len() > 20, "found only {} files", files.len());
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                !text.contains("toml::from_str"),
                "{} parses TOML; agent.toml is read by agent-app",
                path.display()
            );
        }
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

    /// The lines of a source file before its tests: files named `*_tests.rs` or `tests.rs` (a
    /// folder module's `#[cfg(test)] mod tests;`) are all test, and a file's own tests start at
    /// its first `#[cfg(test)]` line.
    fn code_lines(path: &Path, text: &str) -> usize {
        let name = path.file_name().unwrap().to_string_lossy();
        if name.ends_with("_tests.rs") || name == "tests.rs" {
            return 0;
        }
        text.lines()
            .take_while(|line| line.trim() != "#[cfg(test)]")
            .count()
    }

    /// The runner's lines before their tests (counted as [`code_lines`] does) just before plan
    /// mode, templates and the queue worker left it for crates above it.
    const RUNNER_LINES_BEFORE_SPLIT: usize = 9_350;

    /// How much lighter the runner stays: it keeps the loop, and what is not the loop lives in
    /// the crates around it (plan mode above it; the queue worker beside it; the context view
    /// and compaction's rules, the loop guard, budgets and approvals' policy below it).
    const RUNNER_LINES_SHED: usize = 3_500;

    #[test]
    fn the_runner_keeps_the_loop_and_little_else() {
        let mut files = Vec::new();
        rust_files(&root().join("crates/agent-runner/src"), &mut files);
        let lines: usize = files
            .iter()
            .map(|path| code_lines(path, &std::fs::read_to_string(path).unwrap()))
            .sum();
        assert!(lines > 1_000, "found only {lines} lines");
        assert!(
            lines + RUNNER_LINES_SHED <= RUNNER_LINES_BEFORE_SPLIT,
            "agent-runner has {lines} lines before its tests, more than {} \
             ({RUNNER_LINES_BEFORE_SPLIT} before the split, less {RUNNER_LINES_SHED}): what is \
             not the loop belongs in the crate it is about",
            RUNNER_LINES_BEFORE_SPLIT - RUNNER_LINES_SHED
        );
    }

    #[test]
    fn no_module_is_over_500_lines() {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(root().join("crates")).unwrap() {
            let src = entry.unwrap().path().join("src");
            if src.is_dir() {
                rust_files(&src, &mut files);
            }
        }
        rust_files(&root().join("xtask/src"), &mut files);
        assert!(files.len() > 50, "found only {} files", files.len());
        let long: Vec<String> = files
            .iter()
            .filter_map(|path| {
                let text = std::fs::read_to_string(path).unwrap();
                let lines = code_lines(path, &text);
                (lines > MAX_MODULE_LINES).then(|| {
                    let shown = path.strip_prefix(root()).unwrap_or(path).display();
                    format!("{shown}: {lines} lines")
                })
            })
            .collect();
        assert!(
            long.is_empty(),
            "modules over {MAX_MODULE_LINES} lines of non-test code (split them along a \
             seam): {long:#?}"
        );
    }

    /// The top-level modules of a crate's `src` and the modules each one names through
    /// `crate::` (or, for a top-level file, `super::`) outside its tests.
    fn module_imports(src: &Path) -> BTreeMap<String, std::collections::BTreeSet<String>> {
        let mut files = Vec::new();
        rust_files(src, &mut files);
        let module_of = |path: &Path| -> Option<String> {
            let relative = path.strip_prefix(src).ok()?;
            let first = relative.components().next()?.as_os_str().to_string_lossy();
            let name = first.trim_end_matches(".rs").to_owned();
            (name != "lib" && name != "main" && !name.ends_with("_tests")).then_some(name)
        };
        let modules: std::collections::BTreeSet<String> =
            files.iter().filter_map(|p| module_of(p)).collect();
        let mut graph: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
        for path in &files {
            let Some(module) = module_of(path) else {
                continue;
            };
            let text = std::fs::read_to_string(path).unwrap();
            let before_tests = &text[..text.find("#[cfg(test)]").unwrap_or(text.len())];
            // Comments (doc links included) are not imports.
            let code: String = before_tests
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            let top_level = path.parent() == Some(src);
            let mut named = referenced(&code, "crate::");
            if top_level {
                named.extend(referenced(&code, "super::"));
            }
            let entry = graph.entry(module.clone()).or_default();
            for name in named {
                if name != module && modules.contains(&name) {
                    entry.insert(name);
                }
            }
        }
        graph
    }

    /// The modules of a folder module `src/<folder>/` (its files and sub-folders, `mod.rs` and
    /// tests aside) and the ones each names through `crate::<folder>::` or, from a file directly
    /// in the folder, `super::`, outside its tests: the same graph as [`module_imports`], one
    /// level down.
    fn folder_imports(
        src: &Path,
        folder: &Path,
    ) -> BTreeMap<String, std::collections::BTreeSet<String>> {
        let dir = src.join(folder);
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        let module_of = |path: &Path| -> Option<String> {
            let relative = path.strip_prefix(&dir).ok()?;
            let first = relative.components().next()?.as_os_str().to_string_lossy();
            let name = first.trim_end_matches(".rs").to_owned();
            (name != "mod" && name != "tests" && !name.ends_with("_tests")).then_some(name)
        };
        let modules: std::collections::BTreeSet<String> =
            files.iter().filter_map(|p| module_of(p)).collect();
        let prefix = format!(
            "crate::{}::",
            folder
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("::")
        );
        let mut graph: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
        for path in &files {
            let Some(module) = module_of(path) else {
                continue;
            };
            let code = code_before_tests(path);
            let mut named = referenced(&code, &prefix);
            if path.parent() == Some(dir.as_path()) {
                named.extend(referenced(&code, "super::"));
            }
            let entry = graph.entry(module.clone()).or_default();
            for name in named {
                if name != module && modules.contains(&name) {
                    entry.insert(name);
                }
            }
        }
        graph
    }

    /// A file's code before its tests, without comment lines (doc links are not imports).
    fn code_before_tests(path: &Path) -> String {
        let text = std::fs::read_to_string(path).unwrap();
        let before_tests = &text[..text.find("#[cfg(test)]").unwrap_or(text.len())];
        before_tests
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Every folder module under `src`, as paths relative to it (`formats`, `formats/responses`).
    fn folder_modules(src: &Path, under: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(src.join(under)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                let relative = under.join(path.file_name().unwrap());
                folder_modules(src, &relative, out);
                out.push(relative);
            }
        }
    }

    /// The first path segments after each `prefix` in `code`, `prefix{a, b::c}` included.
    fn referenced(code: &str, prefix: &str) -> Vec<String> {
        let ident = |s: &str| -> String {
            s.trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        let mut names = Vec::new();
        for (at, _) in code.match_indices(prefix) {
            let rest = &code[at + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let mut depth = 0;
                let mut item = String::new();
                for c in group.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            names.push(ident(&item));
                            item.clear();
                            continue;
                        }
                        _ => {}
                    }
                    item.push(c);
                }
                names.push(ident(&item));
            } else {
                names.push(ident(rest));
            }
        }
        names.retain(|n| !n.is_empty());
        names
    }

    /// A cycle of `graph`, as the modules along it, if there is one.
    fn find_cycle(
        graph: &BTreeMap<String, std::collections::BTreeSet<String>>,
    ) -> Option<Vec<String>> {
        fn visit(
            node: &str,
            graph: &BTreeMap<String, std::collections::BTreeSet<String>>,
            path: &mut Vec<String>,
            done: &mut std::collections::BTreeSet<String>,
        ) -> Option<Vec<String>> {
            if let Some(start) = path.iter().position(|n| n == node) {
                let mut cycle = path[start..].to_vec();
                cycle.push(node.to_owned());
                return Some(cycle);
            }
            if done.contains(node) {
                return None;
            }
            path.push(node.to_owned());
            for next in graph.get(node).into_iter().flatten() {
                if let Some(cycle) = visit(next, graph, path, done) {
                    return Some(cycle);
                }
            }
            path.pop();
            done.insert(node.to_owned());
            None
        }
        let mut done = std::collections::BTreeSet::new();
        graph
            .keys()
            .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
    }

    /// Crates whose modules still import each other in a cycle, each to be untangled; the
    /// check below fails for any other crate with a cycle, and for a crate listed here that no
    /// longer has one, so the list only shrinks.
    const CYCLES_LEFT: &[&str] = &[];

    #[test]
    fn no_crate_has_modules_importing_each_other_in_a_cycle() {
        let runner = module_imports(&root().join("crates/agent-runner/src"));
        assert!(runner.len() > 20, "found only {} modules", runner.len());
        assert!(
            runner["step"].contains("act"),
            "the import scan finds nothing: {runner:#?}"
        );
        let mut problems = Vec::new();
        for entry in std::fs::read_dir(root().join("crates")).unwrap() {
            let dir = entry.unwrap().path();
            let src = dir.join("src");
            if !src.is_dir() {
                continue;
            }
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            // The crate's top-level modules, then the modules of each folder module.
            let mut folders = Vec::new();
            folder_modules(&src, Path::new(""), &mut folders);
            folders.sort();
            let cycle = find_cycle(&module_imports(&src)).or_else(|| {
                folders.iter().find_map(|folder| {
                    let cycle = find_cycle(&folder_imports(&src, folder))?;
                    let shown = folder.display().to_string().replace('/', "::");
                    Some(cycle.into_iter().map(|m| format!("{shown}::{m}")).collect())
                })
            });
            match (cycle, CYCLES_LEFT.contains(&name.as_str())) {
                (Some(cycle), false) => problems.push(format!(
                    "{name}: modules import each other in a cycle: {}",
                    cycle.join(" → ")
                )),
                (None, true) => problems.push(format!(
                    "{name} has no module cycle any more: take it out of CYCLES_LEFT"
                )),
                _ => {}
            }
        }
        problems.sort();
        assert!(
            problems.is_empty(),
            "let data flow one way (move what both sides use below them): {problems:#?}"
        );
    }

    /// The breaking-change gate: every library crate's public API, with signatures, is the
    /// committed `public-api.txt`; `TIDY_BLESS=1 cargo test -p xtask` (or `cargo xtask
    /// public-api --bless`) rewrites them after an intended change.
    #[test]
    fn every_crate_s_public_api_is_the_committed_one() {
        let bless = std::env::var_os("TIDY_BLESS").is_some();
        if let Err(error) = crate::public_api::check(&root(), bless) {
            panic!("{error:#}");
        }
    }

    #[test]
    fn the_cycle_check_finds_a_cycle() {
        let code = "use crate::{a::X, b};\nuse super::c::Y;\nfn f() { crate::d::g() }";
        assert_eq!(referenced(code, "crate::"), ["a", "b", "d"]);
        let edges = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")];
        let mut graph: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            graph.entry(from.into()).or_default().insert(to.into());
        }
        assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
        graph.get_mut("c").unwrap().remove("a");
        assert_eq!(find_cycle(&graph), None);
    }
}
