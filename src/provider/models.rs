//! What Lathe knows of well-known models without asking: the size of
//! their context window, in tokens (input and output together). An
//! unknown model has no known window: the context meter then shows
//! tokens only, and compaction waits for the server to say the
//! conversation is too long, unless `context_window` is configured.

/// The context window of `model`, if Lathe knows it.
pub fn context_window(model: &str) -> Option<u64> {
    let m = model.trim().to_ascii_lowercase();
    // A provider prefix (`openai/gpt-4o`, `anthropic/claude-…`) and a
    // date suffix do not change the window.
    let m = m.rsplit('/').next().unwrap_or(&m);
    const TABLE: &[(&str, u64)] = &[
        ("claude-", 200_000),
        ("gpt-5", 400_000),
        ("gpt-4.1", 1_047_576),
        ("gpt-4o", 128_000),
        ("gpt-4-turbo", 128_000),
        ("gpt-4-32k", 32_768),
        ("gpt-4", 8_192),
        ("gpt-3.5-turbo", 16_385),
        ("o1-mini", 128_000),
        ("o1", 200_000),
        ("o3", 200_000),
        ("o4-mini", 200_000),
        ("codex-mini", 200_000),
    ];
    TABLE
        .iter()
        .find(|(prefix, _)| m.starts_with(prefix))
        .map(|(_, window)| *window)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_models_have_windows_and_others_none() {
        assert_eq!(context_window("claude-sonnet-4-5-20250929"), Some(200_000));
        assert_eq!(context_window("gpt-4o-mini"), Some(128_000));
        assert_eq!(context_window("openai/gpt-4.1"), Some(1_047_576));
        assert_eq!(context_window("gpt-4-0613"), Some(8_192));
        assert_eq!(context_window("gpt-4-turbo-preview"), Some(128_000));
        assert_eq!(context_window("o3-mini"), Some(200_000));
        assert_eq!(context_window("qwen2.5-coder:32b"), None);
        assert_eq!(context_window("mock-model"), None);
    }
}
