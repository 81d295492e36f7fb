use super::*;

fn write(root: &Path, file: &str, text: &str) {
    let path = root.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn claude_code_definitions_are_read_with_lathes_tool_names() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    write(
        home.path(),
        ".claude/agents/reviewer.md",
        "---\nname: reviewer\ndescription: Reviews code: use after a change\ntools: Read, Grep, Bash(git diff:*), NotebookEdit\nmodel: sonnet\neffort: low\n---\nYou review code.\n",
    );
    write(
        ws.path(),
        ".lathe/agents/docs/writer.md",
        "---\ndescription: Writes docs.\n---\nWrite docs.\n",
    );
    write(
        ws.path(),
        ".claude/agents/reviewer.md",
        "---\ndescription: The repository's.\n---\nx\n",
    );
    write(
        ws.path(),
        ".claude/agents/broken.md",
        "---\nname: Bad Name\ndescription: x\n---\n",
    );
    write(
        ws.path(),
        ".claude/agents/nodesc.md",
        "---\nname: nodesc\n---\n",
    );
    let found = discover(ws.path(), &roots(ws.path(), None, Some(home.path())));
    let r = &found.person[0];
    assert_eq!(r.name, "reviewer");
    assert_eq!(
        r.tools.as_deref(),
        Some(&["read_file".to_string(), "grep".into(), "exec_shell".into()][..])
    );
    assert_eq!(
        r.model, None,
        "Claude Code's alias: the conversation's model"
    );
    assert_eq!(r.effort, Some(crate::protocol::Effort::Low));
    assert_eq!(r.prompt, "You review code.\n");
    let names: Vec<&str> = found.workspace.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        ["writer", "ws-reviewer"],
        "the file names one; yours win"
    );
    let all = found.warnings.join("\n");
    for said in [
        "`NotebookEdit` is no tool Lathe has",
        "`sonnet` is Claude Code's name",
        "broken.md: field `name`",
        "nodesc.md: field `description` is missing",
    ] {
        assert!(all.contains(said), "{said}: {all}");
    }
    assert!(all.contains("ws-reviewer"), "{all}");
}

#[test]
fn trusting_offers_the_pending_types_once() {
    let a = |name: &str| AgentType {
        name: name.into(),
        description: "d".into(),
        tools: None,
        model: None,
        effort: None,
        prompt: String::new(),
        file: PathBuf::from("/x"),
        origin: Origin::Workspace,
        text: String::new(),
    };
    let r = Registry::new(vec![a("mine")], vec![a("theirs")]);
    assert!(r.get("theirs").is_none());
    assert!(r.trust_pending());
    assert!(r.get("theirs").is_some());
    assert!(!r.trust_pending(), "nothing more");
    assert_ne!(digest(&[a("x")]), digest(&[a("y")]));
}
