//! `agent agents`: the profiles a run here can use (`agent_app::profiles` loads them), where
//! each comes from, its tools and model.

use anyhow::Result;
use serde_json::json;

use crate::cli::AgentsArgs;
use crate::exit::ExitCode;
use crate::output::print;

/// `agent agents`.
pub(crate) async fn command(args: AgentsArgs) -> Result<ExitCode> {
    let mut overrides = agent_app::Overrides::default();
    overrides.workspace.clone_from(&args.workspace);
    let app = crate::settings::app(overrides)?;
    let workspace = match app.named_workspace() {
        Some(dir) => dir,
        None => std::env::current_dir()?,
    };
    let profiles = app.profiles(&workspace)?;
    let location = agent_app::profiles::location;
    if args.json {
        let list: Vec<_> = profiles
            .iter()
            .map(|(name, p)| {
                json!({
                    "name": name,
                    "description": p.description,
                    "source": location(name, p),
                    "tools": p.tools.summary(),
                    "model": p.model,
                    "provider": p.provider,
                    "max_iterations": p.limits.max_iterations,
                    "max_cost": p.limits.max_cost,
                    "max_depth": p.max_depth,
                    "sandbox": p.sandbox,
                })
            })
            .collect();
        print(&json!({ "agents": list }).to_string());
        return Ok(ExitCode::Completed);
    }
    let rows: Vec<[String; 5]> = profiles
        .iter()
        .map(|(name, p)| {
            [
                name.clone(),
                p.model.clone().unwrap_or_else(|| "-".into()),
                p.tools.summary(),
                location(name, p),
                p.description.clone(),
            ]
        })
        .collect();
    print(&crate::output::table(
        ["NAME", "MODEL", "TOOLS", "SOURCE", "DESCRIPTION"],
        &rows,
    ));
    Ok(ExitCode::Completed)
}
