//! A server's address in one form: what requests go to, what a session
//! records, what a key hint is made over and what a carried reasoning
//! item is tagged with. Two spellings of one server (`HTTP://Host:80/v1/`,
//! ` http://host//v1 `, a trailing newline) are one server; anything
//! that is not a plain `http` or `https` URL is refused, never guessed.

/// Why a base URL cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerError {
    #[error("base URL `{0}` is not a valid URL: {1}")]
    Invalid(String, String),
    #[error("base URL `{0}` must start with http:// or https://")]
    Scheme(String),
    #[error("base URL `{0}` names no host")]
    NoHost(String),
}

/// `url` in its one form: scheme and host lower-cased, the scheme's
/// default port left out, the path without empty segments (`//`) or a
/// trailing `/`, surrounding white space gone; the query is kept (Azure
/// names its API version there), a fragment is not (no server sees it).
pub fn normalize(url: &str) -> Result<String, ServerError> {
    let shown = crate::protocol::visible::name(url.trim()).into_owned();
    let mut parsed = reqwest::Url::parse(url.trim())
        .map_err(|e| ServerError::Invalid(shown.clone(), e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ServerError::Scheme(shown));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(ServerError::NoHost(shown));
    }
    let path: Vec<String> = parsed
        .path()
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    parsed.set_path(&path.join("/"));
    parsed.set_fragment(None);
    let mut out = parsed.to_string();
    // `Url` writes a bare host with a `/`; the one form has none.
    if parsed.query().is_none() && out.ends_with('/') {
        out.pop();
    }
    Ok(out)
}

/// Whether `a` and `b` are one server (both normalized; either failing
/// to is no match).
pub fn same(a: &str, b: &str) -> bool {
    matches!((normalize(a), normalize(b)), (Ok(x), Ok(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn spellings_of_one_server_are_one_form() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://127.0.0.1:8080/v1/",
            " http://127.0.0.1:8080/v1 ",
            "http://127.0.0.1:8080/v1\n",
            "http://127.0.0.1:8080//v1",
            "http://127.0.0.1:8080/v1//",
            "HTTP://127.0.0.1:8080/v1#frag",
        ] {
            assert_eq!(
                normalize(url).unwrap(),
                "http://127.0.0.1:8080/v1",
                "{url:?}"
            );
        }
        assert_eq!(
            normalize("https://API.OpenAI.com:443/v1/").unwrap(),
            "https://api.openai.com/v1"
        );
        assert_eq!(
            normalize("https://api.anthropic.com/").unwrap(),
            "https://api.anthropic.com"
        );
        assert_eq!(
            normalize("https://x.openai.azure.com/openai/v1/?api-version=preview").unwrap(),
            "https://x.openai.azure.com/openai/v1?api-version=preview"
        );
        assert!(!same("http://a.example/v1", "http://b.example/v1"));
        assert!(!same("http://a.example:81/v1", "http://a.example/v1"));
        for bad in [
            "",
            "ftp://x/v1",
            "file:///etc/passwd",
            "http://",
            "not a url",
        ] {
            assert!(normalize(bad).is_err(), "{bad:?}");
        }
    }

    proptest! {
        #![proptest_config(crate::props::config(256))]

        /// Any input: no panic; what comes out is its own form, parses,
        /// and keeps the scheme and host it was given.
        #[test]
        fn normalizing_is_stable(url in prop_oneof![
            any::<String>(),
            "(https?|HTTP|ftp)://[a-zA-Z0-9.\\-]{0,20}(:[0-9]{1,5})?(/{1,3}[a-z0-9%.\\-]{0,8}){0,4}/?(\\?[a-z=&]{0,10})?(#[a-z]{0,5})?[ \n]?",
        ]) {
            if let Ok(n) = normalize(&url) {
                let again = normalize(&n);
                prop_assert_eq!(again.as_ref(), Ok(&n));
                let parsed = reqwest::Url::parse(&n).unwrap();
                let given = reqwest::Url::parse(url.trim()).unwrap();
                prop_assert_eq!(parsed.host_str(), given.host_str());
                prop_assert_eq!(parsed.scheme(), given.scheme());
                prop_assert!(!n.contains("//") || n.find("//") == n.find("://").map(|i| i + 1));
                prop_assert!(!n.ends_with('/'));
            }
        }

        /// Respelling a server (case, trailing or doubled slashes, white
        /// space) never makes it another.
        #[test]
        fn respellings_are_the_same_server(
            host in "[a-z][a-z0-9]{0,10}(\\.[a-z]{2,5}){0,2}",
            port in proptest::option::of(1u16..),
            segments in proptest::collection::vec("[a-z0-9]{1,6}", 0..4),
            slashes in 1usize..4,
            trailing in 0usize..3,
            space in "[ \t\n]{0,2}",
        ) {
            let port = port.map(|p| format!(":{p}")).unwrap_or_default();
            let plain = format!("http://{host}{port}/{}", segments.join("/"));
            let sep = "/".repeat(slashes);
            let respelled = format!(
                "{space}HTTP://{}{port}{sep}{}{}{space}",
                host.to_uppercase(),
                segments.join(&sep),
                "/".repeat(trailing),
            );
            prop_assert!(same(&plain, &respelled), "{} vs {}", plain, respelled);
        }
    }
}
