//! How flags, environment and file make a provider configuration.

use agent_llm::ProviderKind;

use super::*;
use crate::config::ModelConfig;

/// An environment without any provider's variables.
fn env() -> Environment {
    Environment::default()
}

fn file(text: &str) -> FileConfig {
    FileConfig::parse(text, std::path::Path::new("agent.toml")).unwrap()
}

#[test]
fn the_file_settings_stay_with_the_file_provider() {
    let file = FileConfig {
        provider: Some(ProviderKind::Openai),
        model: Some("gpt-from-file".into()),
        base_url: Some("http://file/v1".into()),
        api_key: Some("file-key".into()),
        ..FileConfig::default()
    };
    let flags = ProviderOverrides {
        kind: Some(ProviderKind::Anthropic),
        ..ProviderOverrides::default()
    };
    let config = resolve(&flags, &file, &env()).unwrap();
    assert_eq!(config.kind, ProviderKind::Anthropic);
    assert_eq!(config.model, "claude-sonnet-4-5");
    assert_ne!(config.base_url.as_deref(), Some("http://file/v1"));
    assert_ne!(config.api_key.as_deref(), Some("file-key"));
    // Without a provider in the file, its settings apply to whichever is chosen.
    let file = FileConfig {
        provider: None,
        ..file
    };
    let config = resolve(&flags, &file, &env()).unwrap();
    assert_eq!(config.model, "gpt-from-file");
    assert_eq!(config.base_url.as_deref(), Some("http://file/v1"));
}

#[test]
fn openai_settings_serve_both_openai_apis() {
    let flags = ProviderOverrides {
        kind: Some(ProviderKind::OpenaiResponses),
        ..ProviderOverrides::default()
    };
    let openai = file("provider = \"openai\"\n");
    let config = resolve(&flags, &openai, &env()).unwrap();
    assert_eq!(config.kind, ProviderKind::OpenaiResponses);
    assert_eq!(config.model, "gpt-5-codex");
    let named = file("provider = \"openai\"\nmodel = \"o3-pro\"\n");
    assert_eq!(resolve(&flags, &named, &env()).unwrap().model, "o3-pro");
    let responses = file("provider = \"openai-responses\"\n");
    assert_eq!(responses.provider, Some(ProviderKind::OpenaiResponses));
}

#[test]
fn flags_win_over_the_file() {
    let file = FileConfig {
        provider: Some(ProviderKind::Openai),
        model: Some("from-file".into()),
        base_url: Some("http://file/v1".into()),
        ..FileConfig::default()
    };
    let flags = ProviderOverrides {
        model: Some("from-flag".into()),
        base_url: Some("http://flag/v1".into()),
        ..ProviderOverrides::default()
    };
    let config = resolve(&flags, &file, &env()).unwrap();
    assert_eq!(config.kind, ProviderKind::Openai);
    assert_eq!(config.model, "from-flag");
    assert_eq!(config.base_url.as_deref(), Some("http://flag/v1"));
}

#[test]
fn streaming_is_off_by_the_flag_or_the_model_table() {
    let mut file = FileConfig::default();
    file.models.insert(
        "local".into(),
        ModelConfig {
            stream: Some(false),
            ..ModelConfig::default()
        },
    );
    let mut flags = ProviderOverrides {
        script: Some("s.json".into()),
        model: Some("local".into()),
        ..ProviderOverrides::default()
    };
    assert!(!resolve(&flags, &file, &env()).unwrap().stream);
    flags.model = Some("other".into());
    assert!(resolve(&flags, &file, &env()).unwrap().stream);
    flags.no_stream = true;
    assert!(!resolve(&flags, &file, &env()).unwrap().stream);
}

// Multi-threaded: the question blocks the test's thread while the mock server answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_a_local_server_is_asked_for_its_own() {
    let server = agent_test_support::mock_model::MockModelServer::start().await;
    server.serve_models(&["smollm2"]);
    let flags = ProviderOverrides {
        kind: Some(ProviderKind::Openai),
        base_url: Some(server.openai_base()),
        ..ProviderOverrides::default()
    };
    let config = resolve(&flags, &FileConfig::default(), &env()).unwrap();
    assert_eq!(config.model, "smollm2");
    assert_eq!(config.model_error, None);

    server.serve_models(&["a", "b"]);
    let config = resolve(&flags, &FileConfig::default(), &env()).unwrap();
    assert!(client(&config).is_err());
    let error = config.model_error.unwrap();
    assert!(error.contains("several: a, b"), "{error}");
}

#[test]
fn the_context_window_comes_from_the_flag_then_the_model_table_then_the_file() {
    let mut file = FileConfig {
        context_window: Some(1000),
        ..FileConfig::default()
    };
    file.models.insert(
        "scripted".into(),
        ModelConfig {
            context_window: Some(2000),
            input: Some(1.0),
            output: Some(2.0),
            ..ModelConfig::default()
        },
    );
    let mut flags = ProviderOverrides {
        script: Some("s.json".into()),
        ..ProviderOverrides::default()
    };
    assert_eq!(
        resolve(&flags, &file, &env()).unwrap().context_window,
        Some(2000)
    );
    flags.context_window = Some(3000);
    assert_eq!(
        resolve(&flags, &file, &env()).unwrap().context_window,
        Some(3000)
    );
    flags.context_window = None;
    flags.model = Some("other".into());
    assert_eq!(
        resolve(&flags, &file, &env()).unwrap().context_window,
        Some(1000)
    );
    let prices = file.prices().unwrap();
    let price = prices.price("scripted").unwrap();
    assert_eq!((price.input_per_mtok, price.output_per_mtok), (1.0, 2.0));
    assert!(prices.price("gpt-4o").is_some(), "the built-in prices stay");
}

#[test]
fn a_script_implies_the_scripted_provider() {
    let flags = ProviderOverrides {
        script: Some("s.json".into()),
        ..ProviderOverrides::default()
    };
    let config = resolve(&flags, &FileConfig::default(), &env()).unwrap();
    assert_eq!(config.kind, ProviderKind::Scripted);
    assert_eq!(config.model, "scripted");
}

#[test]
fn the_environment_names_the_provider_its_key_and_the_model() {
    let env = Environment::from_pairs([
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("AGENT_MODEL", "claude-opus-4"),
    ]);
    let config = resolve(&ProviderOverrides::default(), &FileConfig::default(), &env).unwrap();
    assert_eq!(config.kind, ProviderKind::Anthropic);
    assert_eq!(config.api_key.as_deref(), Some("sk-ant"));
    assert_eq!(config.model, "claude-opus-4");
    assert!(
        resolve(
            &ProviderOverrides::default(),
            &FileConfig::default(),
            &Environment::default()
        )
        .is_none()
    );
}
