use std::os::unix::fs::PermissionsExt;

use super::*;

/// Credentials as a login keeps them, with these tokens.
fn credentials(access: &str, refresh: &str) -> StoredCredentials {
    let tokens = serde_json::from_value(serde_json::json!({
        "access_token": access,
        "token_type": "bearer",
        "expires_in": 3600,
        "refresh_token": refresh,
    }))
    .unwrap();
    StoredCredentials::new("client-1".into(), Some(tokens), vec![], Some(0))
}

#[test]
fn tokens_are_kept_for_the_person_alone_and_for_their_server_alone() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join(DIR);
    let file = TokenFile::of(&dir, "https://mcp.example.com/mcp");
    assert!(!file.logged_in());
    file.write(credentials("at-1", "rt-1")).unwrap();
    assert!(file.logged_in());
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file.path), 0o600);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(file.secrets(), vec!["at-1".to_string(), "rt-1".to_string()]);
    // Another server's file is another name; a file put in its place (or
    // a server whose URL differs in any way) reads as no login: a token
    // goes only to the URL it was issued for.
    for other in [
        "https://mcp.example.com/mcp/",
        "http://mcp.example.com/mcp",
        "https://evil.example/mcp",
    ] {
        let theirs = TokenFile::of(&dir, other);
        assert_ne!(theirs.path, file.path);
        std::fs::copy(&file.path, &theirs.path).unwrap();
        assert!(
            theirs.read().is_none(),
            "{other} read a token for another URL"
        );
        assert!(theirs.secrets().is_empty());
    }
    // Nothing else is left in the directory but the files named.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| n.ends_with(".json")), "{names:?}");
    assert!(file.remove().unwrap());
    assert!(!file.remove().unwrap());
    assert!(!file.logged_in());
}

#[test]
fn a_file_that_is_not_a_login_reads_as_none() {
    let root = tempfile::tempdir().unwrap();
    let file = TokenFile::of(root.path(), "https://mcp.example.com/mcp");
    for text in ["", "{", "null", "{\"server\": 1}", "\u{feff}é"] {
        std::fs::write(&file.path, text).unwrap();
        assert!(file.read().is_none(), "{text:?}");
    }
}

#[tokio::test]
async fn a_refresh_waits_for_anothers_and_a_refused_token_is_forgotten_only_if_still_kept() {
    let root = tempfile::tempdir().unwrap();
    let file = TokenFile::of(root.path(), "https://mcp.example.com/mcp");
    file.save(credentials("at-1", "rt-1")).await.unwrap();
    // One process's refresh holds the lock; another's waits for it.
    let guard = file.acquire_refresh_guard().await.unwrap();
    assert!(guard.is_some());
    let other = file.clone();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let waiter = tokio::spawn(async move {
        let g = other.acquire_refresh_guard().await.unwrap();
        // Under the lock, what the first one saved is read.
        let _ = tx.send(other.load().await.unwrap());
        drop(g);
    });
    tokio::task::yield_now().await;
    file.save(credentials("at-2", "rt-2")).await.unwrap();
    drop(guard);
    let seen = rx.await.unwrap();
    waiter.await.unwrap();
    let seen = seen
        .and_then(|c| serde_json::to_value(c.token_response).ok())
        .unwrap();
    assert_eq!(seen["refresh_token"], "rt-2");
    // A refusal of a token spent before the last refresh leaves the new
    // one; a refusal of the token kept forgets the login.
    file.on_refresh_token_rejected(&credentials("at-1", "rt-1"))
        .await
        .unwrap();
    assert!(file.logged_in());
    file.on_refresh_token_rejected(&credentials("at-2", "rt-2"))
        .await
        .unwrap();
    assert!(!file.logged_in());
}

#[test]
fn only_this_logins_return_with_a_code_is_taken() {
    let state = "s-123";
    assert_eq!(
        returned("/callback?code=c1&state=s-123", state),
        Return::Code {
            code: "c1".into(),
            iss: None
        }
    );
    assert_eq!(
        returned(
            "/callback?code=c1&state=s-123&iss=https%3A%2F%2Fas.example",
            state
        ),
        Return::Code {
            code: "c1".into(),
            iss: Some("https://as.example".into())
        }
    );
    // Another login's state, or none, is waited past: a page on the
    // person's machine cannot end the login or feed it a code.
    for target in [
        "/callback?code=c1&state=other",
        "/callback?code=c1",
        "/callback?code=c1&state=s-123x",
    ] {
        assert!(
            matches!(returned(target, state), Return::NotOurs(400, _)),
            "{target}"
        );
    }
    assert!(matches!(
        returned("/favicon.ico", state),
        Return::NotOurs(404, _)
    ));
    assert!(matches!(
        returned("//evil.example/callback?state=s-123&code=c", state),
        Return::NotOurs(404, _)
    ));
    assert_eq!(
        returned(
            "/callback?state=s-123&error=access_denied&error_description=no",
            state
        ),
        Return::Refused("access_denied: no".into())
    );
    assert_eq!(
        returned("/callback?state=s-123&code=", state),
        Return::Refused("no code came back".into())
    );
    // No state to wait for takes nothing.
    assert!(matches!(
        returned("/callback?code=c1&state=", ""),
        Return::NotOurs(400, _)
    ));
}

#[test]
fn only_an_https_page_or_one_on_this_machine_is_opened() {
    for ok in [
        "https://auth.example.com/authorize?x=1",
        "http://localhost:3001/authorize",
        "http://127.0.0.1:9/a",
        "http://[::1]:9/a",
    ] {
        assert!(openable(ok), "{ok}");
    }
    for bad in [
        "javascript:alert(1)?x",
        "file:///etc/passwd?x",
        "http://auth.example.com/authorize",
        "http://10.0.0.1/a",
        "data:text/html,hi",
        "ms-settings:x",
        "not a url",
        "",
    ] {
        assert!(!openable(bad), "{bad}");
    }
    assert_eq!(one_line("a\nb\x1b[31mc"), "a b[31mc");
}

#[test]
fn the_browser_opens_with_its_first_entry_and_the_url_where_it_says() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("opened");
    let script = dir.path().join("browser");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > {}\n", out.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let url = "http://127.0.0.1:1/authorize?a=1&b=2";
    let wait = || {
        for _ in 0..200 {
            if let Ok(t) = std::fs::read_to_string(&out)
                && t.ends_with('\n')
            {
                return t;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the browser never ran");
    };
    let first = format!("{}:firefox", script.display());
    assert_eq!(
        open_browser(url, Some(&first)).unwrap(),
        script.display().to_string()
    );
    assert_eq!(wait(), format!("{url}\n"));
    std::fs::remove_file(&out).unwrap();
    open_browser(url, Some(&format!("{} --new %s", script.display()))).unwrap();
    assert_eq!(wait(), format!("--new\n{url}\n"));
    assert!(
        open_browser(url, Some("/nonexistent/browser"))
            .unwrap_err()
            .contains("/nonexistent/browser")
    );
}

proptest::proptest! {
    /// Whatever reaches the loopback listener, reading it never panics,
    /// and only a target of this login with its state yields a code.
    #[test]
    fn any_request_is_read_without_a_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600), target in "\\PC{0,80}") {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let (mut a, mut b) = tokio::io::duplex(4096);
            a.write_all(&bytes).await.unwrap();
            drop(a);
            let _ = read_target(&mut b).await;
        });
        if let Return::Code { .. } = returned(&target, "s-1") {
            proptest::prop_assert!(target.contains("s-1"));
        }
    }
}
