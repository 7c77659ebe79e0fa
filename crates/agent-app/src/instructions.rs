//! The instructions a run's system prompt carries: the user's `AGENTS.md`, the project's
//! `AGENTS.md` files (or `CLAUDE.md` where a folder has no `AGENTS.md`), and a short
//! description of the environment.
//!
//! Project files are looked up from the workspace up to the git root (the nearest folder
//! holding `.git`, a folder or a worktree's file); without a git root only the workspace's own
//! file counts. They go into the prompt from the most general to the most specific: the user's
//! `$XDG_CONFIG_HOME/agent/AGENTS.md` (else `~/.config/agent/AGENTS.md`), then the project's
//! from the git root down to the workspace, so that where they disagree the nearer file, read
//! last, wins. Together they are capped at [`MAX_BYTES`]; what is cut is said in the prompt and
//! on stderr. The runner takes the result as data (`RunnerOptions::instructions`), in the
//! static part of the prompt; the date is rendered once, so it does not change during a run.
//! The environment block says where the run works and what its commands may do (the sandbox),
//! so the model knows before it tries.

use std::path::{Path, PathBuf};

use agent_runner::Instruction;
use agent_tools::SandboxMode;

use crate::error::{Error, Result};

/// The most bytes of instruction files a prompt carries.
pub const MAX_BYTES: usize = 64 * 1024;

/// The project file names, the first found in a folder winning.
const FILE_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// What [`gather`] found: the blocks for the prompt, and a warning for the user when the files
/// were cut.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Found {
    /// The blocks, the environment last.
    pub instructions: Vec<Instruction>,
    /// Why some of the files' text was left out, when it was.
    pub warning: Option<String>,
}

/// What the environment block says besides the workspace and the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvironmentBlock<'a> {
    /// Today, `YYYY-MM-DD`.
    pub date: &'a str,
    /// The sandbox of the run's commands, when it has one.
    pub sandbox: Option<SandboxMode>,
}

/// The instructions of a run in `workspace`: the instruction files (the user's own in
/// `user_dir`, the user's agent folder, then the project's) and the environment block. A file
/// that exists but cannot be read is an error naming it.
pub fn gather(
    workspace: &Path,
    user_dir: Option<&Path>,
    env: EnvironmentBlock<'_>,
) -> Result<Found> {
    let workspace = std::path::absolute(workspace).map_err(|error| {
        Error::io(
            format!("cannot resolve the workspace {}", workspace.display()),
            error,
        )
    })?;
    let workspace = workspace.canonicalize().unwrap_or(workspace);
    let git_root = git_root(&workspace);
    let mut files = Vec::new();
    if let Some(dir) = user_dir {
        let path = dir.join(FILE_NAMES[0]);
        if path.is_file() {
            files.push(path);
        }
    }
    for folder in project_folders(&workspace, git_root.as_deref()) {
        if let Some(path) = FILE_NAMES
            .iter()
            .map(|name| folder.join(name))
            .find(|path| path.is_file())
            && !files.contains(&path)
        {
            files.push(path);
        }
    }
    let mut found = Found::default();
    let mut left = MAX_BYTES;
    for (index, path) in files.iter().enumerate() {
        let bytes = std::fs::read(path).map_err(|error| {
            Error::io(
                format!("cannot read the instructions in {}", path.display()),
                error,
            )
        })?;
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let title = format!("Instructions from {}", path.display());
        if text.len() <= left {
            left -= text.len();
            found.instructions.push(Instruction::new(title, text));
            continue;
        }
        let kept = &text[..text.floor_char_boundary(left)];
        let later = files.len() - index - 1;
        let why = format!(
            "the instruction files exceed {} KB: the rest of {}{} was left out",
            MAX_BYTES / 1024,
            path.display(),
            match later {
                0 => String::new(),
                1 => " and 1 later file".to_owned(),
                n => format!(" and {n} later files"),
            }
        );
        found
            .instructions
            .push(Instruction::new(title, format!("{kept}\n\n[{why}]")));
        found.warning = Some(format!("agent: warning: {why}"));
        break;
    }
    found.instructions.push(Instruction::new(
        "Environment",
        environment(&workspace, git_root.as_deref(), env),
    ));
    Ok(found)
}

/// The nearest folder from `workspace` up that holds `.git`.
fn git_root(workspace: &Path) -> Option<PathBuf> {
    workspace
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The folders whose instruction files count, from the git root down to the workspace; the
/// workspace alone without a git root.
fn project_folders(workspace: &Path, git_root: Option<&Path>) -> Vec<PathBuf> {
    let Some(root) = git_root else {
        return vec![workspace.to_path_buf()];
    };
    let mut folders: Vec<PathBuf> = workspace
        .ancestors()
        .take_while(|dir| dir.starts_with(root))
        .map(Path::to_path_buf)
        .collect();
    folders.reverse();
    folders
}

/// The environment block: workspace, OS, date, git repository and branch, and the sandbox.
fn environment(workspace: &Path, git_root: Option<&Path>, env: EnvironmentBlock<'_>) -> String {
    let git = match git_root {
        None => "no".to_owned(),
        Some(root) => match head(root) {
            Some(Head::Branch(name)) => format!("yes, branch {name}"),
            Some(Head::Detached(commit)) => format!("yes, detached HEAD at {commit}"),
            None => "yes".to_owned(),
        },
    };
    let mut block = format!(
        "- Workspace: {}\n- OS: {}\n- Date: {}\n- Git repository: {git}",
        workspace.display(),
        std::env::consts::OS,
        env.date
    );
    if let Some(mode) = env.sandbox {
        block.push_str(&format!("\n- Sandbox: {mode} ({})", sandbox_words(mode)));
    }
    block
}

/// What a sandbox mode lets commands and tools do, for the model.
fn sandbox_words(mode: SandboxMode) -> &'static str {
    match mode {
        SandboxMode::ReadOnly => {
            "commands may read anything but write nowhere but their temporary folder, with no \
             network; file edits are refused"
        }
        SandboxMode::WorkspaceWrite => {
            "commands may write only in the workspace and their temporary folder, with no \
             network; .git, agent.toml and .agent/ stay read-only"
        }
        SandboxMode::Off => "commands run without confinement",
    }
}

/// What a repository's `HEAD` points at.
#[derive(Debug, PartialEq, Eq)]
enum Head {
    /// A branch, by its short name.
    Branch(String),
    /// A commit, abbreviated.
    Detached(String),
}

/// The `HEAD` of the repository at `root`, read from its files without running git: `.git` is
/// the git folder, or (in a worktree or submodule) a file naming it.
fn head(root: &Path) -> Option<Head> {
    let dot_git = root.join(".git");
    let git_dir = if dot_git.is_dir() {
        dot_git
    } else {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let target = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
        root.join(target)
    };
    let text = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let text = text.trim();
    match text.strip_prefix("ref:") {
        Some(reference) => {
            let reference = reference.trim();
            let name = reference.strip_prefix("refs/heads/").unwrap_or(reference);
            Some(Head::Branch(name.to_owned()))
        }
        None if text.len() >= 7 && text.chars().all(|c| c.is_ascii_hexdigit()) => {
            Some(Head::Detached(text[..7].to_owned()))
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    /// The block of a run on this date, with no sandbox said.
    const DATE: EnvironmentBlock<'static> = EnvironmentBlock {
        date: "2030-01-02",
        sandbox: None,
    };

    use super::*;

    /// A folder tree: `repo/` (a git root on branch `main`) holding `repo/sub/work/`.
    struct Tree {
        _dir: tempfile::TempDir,
        root: PathBuf,
        work: PathBuf,
        user: PathBuf,
    }

    fn tree() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("repo");
        let work = root.join("sub").join("work");
        let user = base.join("config").join("agent");
        fs::create_dir_all(&work).unwrap();
        fs::create_dir_all(&user).unwrap();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        Tree {
            _dir: dir,
            root,
            work,
            user,
        }
    }

    fn titles(found: &Found) -> Vec<String> {
        found.instructions.iter().map(|i| i.title.clone()).collect()
    }

    #[test]
    fn files_from_the_git_root_down_to_the_workspace_after_the_users_own() {
        let t = tree();
        fs::write(t.root.join("AGENTS.md"), "root rules\n").unwrap();
        fs::write(t.root.join("sub/CLAUDE.md"), "sub rules (claude)").unwrap();
        fs::write(t.work.join("AGENTS.md"), "work rules").unwrap();
        fs::write(t.work.join("CLAUDE.md"), "ignored: AGENTS.md wins").unwrap();
        fs::write(t.user.join("AGENTS.md"), "my own rules").unwrap();
        // Above the git root nothing counts.
        fs::write(t.root.parent().unwrap().join("AGENTS.md"), "outside").unwrap();
        let found = gather(&t.work, Some(&t.user), DATE).unwrap();
        let title = |path: PathBuf| format!("Instructions from {}", path.display());
        assert_eq!(
            titles(&found),
            [
                title(t.user.join("AGENTS.md")),
                title(t.root.join("AGENTS.md")),
                title(t.root.join("sub/CLAUDE.md")),
                title(t.work.join("AGENTS.md")),
                "Environment".to_owned(),
            ]
        );
        let texts: Vec<&str> = found.instructions.iter().map(|i| i.text.as_str()).collect();
        assert_eq!(
            &texts[..4],
            [
                "my own rules",
                "root rules",
                "sub rules (claude)",
                "work rules"
            ]
        );
        assert_eq!(
            texts[4],
            format!(
                "- Workspace: {}\n- OS: {}\n- Date: 2030-01-02\n- Git repository: yes, branch main",
                t.work.display(),
                std::env::consts::OS
            )
        );
        assert!(found.warning.is_none());
    }

    #[test]
    fn without_a_git_root_only_the_workspace_file_counts() {
        let t = tree();
        fs::remove_dir_all(t.root.join(".git")).unwrap();
        fs::write(t.root.join("AGENTS.md"), "root rules").unwrap();
        fs::write(t.work.join("CLAUDE.md"), "work rules").unwrap();
        let found = gather(&t.work, None, DATE).unwrap();
        assert_eq!(found.instructions.len(), 2);
        assert_eq!(found.instructions[0].text, "work rules");
        assert!(found.instructions[1].text.ends_with("- Git repository: no"));
    }

    #[test]
    fn the_workspace_at_the_git_root_and_nothing_to_read_leave_the_environment_alone() {
        let t = tree();
        fs::write(t.root.join("AGENTS.md"), "   \n").unwrap();
        let found = gather(&t.root, Some(&t.user), DATE).unwrap();
        assert_eq!(titles(&found), ["Environment"]);
    }

    #[test]
    fn a_worktree_names_its_branch_through_the_gitdir_file_and_a_detached_head_its_commit() {
        let t = tree();
        let git_dir = t.root.join("elsewhere");
        fs::create_dir_all(&git_dir).unwrap();
        fs::write(git_dir.join("HEAD"), "ref: refs/heads/feature/x\n").unwrap();
        fs::remove_dir_all(t.root.join(".git")).unwrap();
        fs::write(t.root.join(".git"), "gitdir: elsewhere\n").unwrap();
        assert_eq!(head(&t.root), Some(Head::Branch("feature/x".into())));
        fs::write(
            git_dir.join("HEAD"),
            "0123456789abcdef0123456789abcdef01234567\n",
        )
        .unwrap();
        assert_eq!(head(&t.root), Some(Head::Detached("0123456".into())));
        let found = gather(&t.work, None, DATE).unwrap();
        assert!(
            found.instructions[0]
                .text
                .ends_with("- Git repository: yes, detached HEAD at 0123456")
        );
    }

    #[test]
    fn the_files_are_capped_and_the_cut_is_said() {
        let t = tree();
        fs::write(t.user.join("AGENTS.md"), "é".repeat(MAX_BYTES / 2 - 1)).unwrap();
        fs::write(t.root.join("AGENTS.md"), "r".repeat(10)).unwrap();
        fs::write(t.work.join("AGENTS.md"), "w".repeat(10)).unwrap();
        let found = gather(&t.work, Some(&t.user), DATE).unwrap();
        assert_eq!(found.instructions.len(), 3, "{:?}", titles(&found));
        let cut = &found.instructions[1].text;
        let why = format!(
            "the instruction files exceed 64 KB: the rest of {} and 1 later file was left out",
            t.root.join("AGENTS.md").display()
        );
        assert_eq!(cut, &format!("{}\n\n[{why}]", "r".repeat(2)));
        assert_eq!(found.warning, Some(format!("agent: warning: {why}")));
        let kept: usize = found.instructions[..1].iter().map(|i| i.text.len()).sum();
        assert_eq!(kept + 2, MAX_BYTES);
    }

    #[test]
    fn a_folder_named_like_an_instruction_file_is_not_read() {
        let t = tree();
        fs::create_dir_all(t.work.join("AGENTS.md")).unwrap();
        let found = gather(&t.work, None, DATE).unwrap();
        assert_eq!(titles(&found), ["Environment"]);
    }
}
