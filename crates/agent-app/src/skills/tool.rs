//! The `skill` tool, which loads one skill's instructions into the context, and
//! [`SkillsExtension`], which gives every runner the skills of its workspace (its
//! [`Extension`](crate::factory::Extension) implementation is in the factory's
//! `extension.rs`, with the others).

use std::path::{Path, PathBuf};

use agent_tools::{Risk, ToolContext, ToolDefinition, ToolError, ToolOutput, TypedTool};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::{Found, Skill, discover, read_file};

/// The tool's name.
pub const SKILL_TOOL: &str = "skill";

/// The most files of a skill's folder listed with its body.
const MAX_LISTED_FILES: usize = 50;

/// Loads a skill: its body, its folder and the files beside it.
#[derive(Debug, Clone)]
pub struct SkillTool {
    found: Found,
}

impl SkillTool {
    /// The tool over the skills `found`.
    pub fn new(found: Found) -> Self {
        Self { found }
    }
}

/// The arguments of a `skill` call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillArgs {
    /// The skill's name, as the system prompt lists it.
    pub name: String,
}

#[async_trait]
impl TypedTool for SkillTool {
    type Args = SkillArgs;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: SKILL_TOOL.to_owned(),
            description: "Load a skill listed under \"Skills\" in the system prompt: returns its \
                          instructions and the path of its folder, where the files it mentions \
                          are. Call it before doing a task the skill's description matches."
                .to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "description": "The skill's name." }
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn run(&self, args: SkillArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(skill) = self.found.get(args.name.trim()) else {
            let names: Vec<&str> = self.found.skills.iter().map(|s| s.name.as_str()).collect();
            return Err(ToolError::failed(format!(
                "there is no skill {:?}; the skills are: {}",
                args.name,
                names.join(", ")
            )));
        };
        let skill = skill.clone();
        tokio::task::spawn_blocking(move || load(&skill))
            .await
            .map_err(|error| ToolError::failed(error.to_string()))?
    }
}

/// What the model gets for `skill`: a heading with the folder, the allowed tools, the body, and
/// the files of the folder.
fn load(skill: &Skill) -> Result<ToolOutput, ToolError> {
    let (_, body) = read_file(&skill.dir).map_err(ToolError::failed)?;
    let mut text = format!(
        "# Skill: {}\n\nBase directory for this skill: {}\n(paths in the instructions are \
         relative to it)\n",
        skill.name,
        skill.dir.display()
    );
    if !skill.allowed_tools.is_empty() {
        text.push_str(&format!(
            "Tools the skill uses: {}\n",
            skill.allowed_tools.join(", ")
        ));
    }
    text.push('\n');
    text.push_str(body.trim());
    text.push('\n');
    let files = files_of(&skill.dir);
    if !files.is_empty() {
        text.push_str("\nFiles in the skill's folder:\n");
        for file in files {
            text.push_str(&format!("- {file}\n"));
        }
    }
    Ok(ToolOutput::text(text))
}

/// The files under `dir` (two levels down, hidden ones left out), relative, sorted, at most
/// [`MAX_LISTED_FILES`], `SKILL.md` itself left out.
fn files_of(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut folders = vec![(dir.to_path_buf(), 0)];
    while let Some((folder, depth)) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let hidden = entry.file_name().to_string_lossy().starts_with('.');
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if hidden {
                continue;
            }
            if kind.is_dir() && depth < 2 {
                folders.push((path, depth + 1));
            } else if kind.is_file() {
                let relative = path.strip_prefix(dir).unwrap_or(&path);
                if relative != Path::new(super::SKILL_FILE) {
                    files.push(relative.display().to_string());
                }
            }
        }
    }
    files.sort();
    files.truncate(MAX_LISTED_FILES);
    files
}

/// The skills of each runner's workspace and of the user's folder: their list in the system
/// prompt and the `skill` tool (neither when there are no skills).
#[derive(Debug, Clone, Default)]
pub struct SkillsExtension {
    user_dir: Option<PathBuf>,
}

impl SkillsExtension {
    /// Skills of the workspace and of `user_dir`, the user's agent folder.
    pub fn new(user_dir: Option<PathBuf>) -> Self {
        Self { user_dir }
    }

    /// The skills of `workspace` (and of the user's folder).
    pub fn found(&self, workspace: &Path) -> Found {
        discover(workspace, self.user_dir.as_deref())
    }
}
