//! `web_fetch` and `web_search`.
//!
//! `web_fetch` gets one http(s) URL, follows at most five redirects
//! within its site (one to another site is told, not followed: the model
//! fetches it through every check again), and
//! refuses any address that is not public (loopback, private, link-local,
//! shared, multicast, reserved, and IPv6 forms of those) after resolving
//! the name and on every hop, then connects to the very address it
//! checked (a name that resolves differently the second time gets
//! nowhere). `[tools.web_fetch] allow_hosts` and `allow_private` open
//! that up. No proxy is used. At most 1 MiB of the body is read; HTML
//! comes back as Markdown (`htmd`, on a real HTML parser), text as text,
//! anything else as a short description.
//!
//! `web_search` asks a SearXNG instance (`[tools.web_search] endpoint`)
//! for JSON results and returns title, URL and snippet of each.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::policy::Workspace;
use crate::protocol::Effect;
use crate::protocol::operation::Operation;
use crate::tools::args::whole;
use crate::tools::spec::{ToolContext, ToolError};
use crate::tools::typed::TypedTool;

/// The most of a body that is read.
const MAX_BODY: usize = 1024 * 1024;
const MAX_REDIRECTS: usize = 5;
const TIMEOUT: Duration = Duration::from_secs(30);

pub use crate::config::WebSettings;

/// Whether an address is on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            let s = v6.segments();
            // NAT64 and 6to4 carry an IPv4 address inside.
            if s[0] == 0x64 && s[1] == 0xff9b {
                let [a, b] = s[6].to_be_bytes();
                let [c, d] = s[7].to_be_bytes();
                return is_public_v4(Ipv4Addr::new(a, b, c, d));
            }
            if s[0] == 0x2002 {
                let [a, b] = s[1].to_be_bytes();
                let [c, d] = s[2].to_be_bytes();
                return is_public_v4(Ipv4Addr::new(a, b, c, d));
            }
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link-local
                || (s[0] & 0xffc0) == 0xfec0 // site-local
                || s[0] == 0x2001 && s[1] == 0x0db8 // documentation
                || s[0..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible
        }
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_unspecified()
        || ip.is_documentation()
        || a == 0
        || a >= 240
        || (a == 100 && (64..128).contains(&b)) // shared (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (18..20).contains(&b))) // benchmarking
}

fn http_client(pin: Option<(&str, &[SocketAddr])>) -> Result<reqwest::Client, ToolError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent(concat!("lathe/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(10))
        .timeout(TIMEOUT);
    if let Some((host, addrs)) = pin {
        builder = builder.resolve_to_addrs(host, addrs);
    }
    builder
        .build()
        .map_err(|e| ToolError::ExecutionFailed(format!("could not build an HTTP client: {e}")))
}

fn parse_url(raw: &str) -> Result<reqwest::Url, ToolError> {
    let url = reqwest::Url::parse(raw.trim())
        .map_err(|e| ToolError::InvalidArgs(format!("url `{raw}`: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::InvalidArgs(format!(
            "url `{raw}`: only http:// and https:// are fetched"
        )));
    }
    if url.host_str().is_none() {
        return Err(ToolError::InvalidArgs(format!("url `{raw}` has no host")));
    }
    Ok(url)
}

/// The host a URL reaches, for rules and the dialog.
fn host_of(url: &reqwest::Url) -> String {
    match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_string(),
        _ => String::new(),
    }
}

pub struct WebFetch {
    settings: WebSettings,
}

impl WebFetch {
    pub fn new(settings: &WebSettings) -> Self {
        Self {
            settings: settings.clone(),
        }
    }

    fn allowed_host(&self, url: &reqwest::Url) -> bool {
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        let with_port = format!("{host}:{}", url.port_or_known_default().unwrap_or(0));
        self.settings
            .allow_hosts
            .iter()
            .any(|a| a.eq_ignore_ascii_case(&host) || a.eq_ignore_ascii_case(&with_port))
    }

    /// The addresses to connect to for `url`, all of them public unless
    /// the config allows otherwise.
    async fn addresses(&self, url: &reqwest::Url) -> Result<Vec<SocketAddr>, ToolError> {
        let host = url.host_str().unwrap_or_default();
        let port = url.port_or_known_default().unwrap_or(80);
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::time::timeout(
                Duration::from_secs(10),
                tokio::net::lookup_host((bare, port)),
            )
            .await
            .map_err(|_| ToolError::ExecutionFailed(format!("looking up {host} timed out")))?
            .map_err(|e| ToolError::ExecutionFailed(format!("cannot resolve {host}: {e}")))?
            .collect(),
        };
        if addrs.is_empty() {
            return Err(ToolError::ExecutionFailed(format!("{host} has no address")));
        }
        if !(self.settings.allow_private || self.allowed_host(url))
            && let Some(bad) = addrs.iter().find(|a| !is_public(a.ip()))
        {
            return Err(ToolError::PermissionDenied(format!(
                "{host} resolves to {}, which is not a public address; web_fetch does not \
                 reach this machine or the local network (the person can allow it in \
                 [tools.web_fetch] allow_hosts)",
                bad.ip()
            )));
        }
        Ok(addrs)
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchArgs {
    /// http:// or https:// URL
    url: String,
    /// GET (default) or HEAD
    method: Option<Method>,
    /// Request headers
    headers: Option<std::collections::BTreeMap<String, String>>,
    /// Return HTML as is instead of Markdown (default false)
    raw: Option<bool>,
}

#[derive(PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
enum Method {
    Get,
    Head,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to search for
    #[schemars(length(min = 1))]
    query: String,
    /// How many results (default 5)
    #[serde(default, deserialize_with = "whole")]
    #[schemars(with = "Option<u64>", range(min = 1, max = 20))]
    num_results: Option<u64>,
}

#[async_trait]
impl TypedTool for WebFetch {
    type Args = FetchArgs;

    fn name(&self) -> &'static str {
        "web_fetch"
    }

    fn description(&self) -> &str {
        "Fetch an http(s) URL and return status, content type and body: HTML as Markdown, \
         text as is, at most 1 MiB. Public addresses only; at most 5 redirects."
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Web
    }

    fn effect(&self) -> Effect {
        Effect::Network
    }

    fn operations(
        &self,
        args: &Self::Args,
        _workspace: &Workspace,
    ) -> Result<Vec<Operation>, ToolError> {
        let FetchArgs { url, .. } = args;
        let url = parse_url(url)?;
        // A literal address that would be refused is refused now, before
        // the person is asked about it.
        let bare = url
            .host_str()
            .unwrap_or_default()
            .trim_start_matches('[')
            .trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>()
            && !is_public(ip)
            && !(self.settings.allow_private || self.allowed_host(&url))
        {
            return Err(ToolError::PermissionDenied(format!(
                "{ip} is not a public address; web_fetch does not reach this machine or the \
                 local network (the person can allow it in [tools.web_fetch] allow_hosts)"
            )));
        }
        Ok(vec![Operation::Net {
            host: host_of(&url),
        }])
    }

    async fn execute(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let FetchArgs {
            url,
            method,
            headers: asked,
            raw,
        } = args;
        let mut url = parse_url(&url)?;
        let head = method == Some(Method::Head);
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(map) = asked {
            for (k, v) in &map {
                let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                    .map_err(|e| ToolError::InvalidArgs(format!("header `{k}`: {e}")))?;
                if matches!(
                    name.as_str(),
                    "host" | "content-length" | "transfer-encoding" | "connection" | "upgrade"
                ) {
                    return Err(ToolError::InvalidArgs(format!(
                        "header `{k}` is set by Lathe"
                    )));
                }
                let value = reqwest::header::HeaderValue::from_str(v)
                    .map_err(|e| ToolError::InvalidArgs(format!("header `{k}`: {e}")))?;
                headers.insert(name, value);
            }
        }
        let mut hops = 0;
        let response = loop {
            let addrs = self.addresses(&url).await?;
            let host = url.host_str().unwrap_or_default().to_string();
            let client = http_client(Some((&host, &addrs)))?;
            let request = if head {
                client.head(url.clone())
            } else {
                client.get(url.clone())
            };
            let sent = tokio::select! {
                r = request.headers(headers.clone()).send() => r,
                () = ctx.cancel.cancelled() => {
                    return Err(ToolError::Cancelled("interrupted by the user".into()));
                }
            };
            let response = sent.map_err(|e| {
                ToolError::ExecutionFailed(format!("fetching {url} failed: {}", error_chain(&e)))
            })?;
            if !response.status().is_redirection() {
                break response;
            }
            let Some(location) = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
            else {
                break response;
            };
            hops += 1;
            if hops > MAX_REDIRECTS {
                return Err(ToolError::ExecutionFailed(format!(
                    "more than {MAX_REDIRECTS} redirects (the last to {location})"
                )));
            }
            let next = url.join(location).map_err(|e| {
                ToolError::ExecutionFailed(format!("bad redirect `{location}`: {e}"))
            })?;
            // Only within the site that was judged and approved: another
            // site is the model's to fetch, through every check again
            // (rules, approval), and no header it set goes there unasked.
            if next.origin() != url.origin() {
                return Ok(json!({
                    "status": response.status().as_u16(),
                    "url": url.as_str(),
                    "redirect": next.as_str(),
                    "note": "the page redirects to another site; it was not followed: fetch that \
                             URL with web_fetch to follow it",
                }));
            }
            url = parse_url(next.as_str())?;
        };
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let (bytes, truncated) = read_capped(response, &ctx.cancel).await?;
        let raw = raw.unwrap_or(false);
        let total = bytes.len();
        let ct = content_type.clone();
        let body = tokio::task::spawn_blocking(move || render(&bytes, &ct, raw))
            .await
            .map_err(|e| ToolError::Internal(e.to_string()))?;
        let mut v = json!({
            "status": status,
            "content_type": content_type,
            "url": url.as_str(),
            "bytes": total,
            "body": body,
        });
        if truncated {
            v["truncated"] = json!(true);
            v["note"] = json!(format!("only the first {MAX_BODY} bytes were read"));
        }
        Ok(v)
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

async fn read_capped(
    mut response: reqwest::Response,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<(Vec<u8>, bool), ToolError> {
    let mut out = Vec::new();
    loop {
        let chunk = tokio::select! {
            c = response.chunk() => c,
            () = cancel.cancelled() => return Err(ToolError::Cancelled("interrupted by the user".into())),
        };
        match chunk {
            Ok(Some(c)) => {
                let room = MAX_BODY - out.len();
                if c.len() > room {
                    out.extend_from_slice(&c[..room]);
                    return Ok((out, true));
                }
                out.extend_from_slice(&c);
            }
            Ok(None) => return Ok((out, false)),
            Err(e) => {
                return Err(ToolError::ExecutionFailed(format!(
                    "reading the body failed: {}",
                    error_chain(&e)
                )));
            }
        }
    }
}

/// The body as the model gets it.
fn render(bytes: &[u8], content_type: &str, raw: bool) -> String {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let charset = content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("charset")).then(|| v.trim().trim_matches('"').to_string())
    });
    let textual = mime.is_empty()
        || mime.starts_with("text/")
        || mime.contains("json")
        || mime.contains("xml")
        || mime.contains("javascript")
        || mime.contains("yaml")
        || mime.contains("toml");
    if !textual {
        return format!("[{mime} content, {} bytes, not shown]", bytes.len());
    }
    let encoding = charset
        .and_then(|c| encoding_rs::Encoding::for_label(c.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(bytes);
    if mime == "text/html" || mime == "application/xhtml+xml" {
        if raw {
            return text.into_owned();
        }
        // The converter walks the document recursively: a page nested
        // deeper than any real one would overflow its stack, so such a
        // page is read as text instead.
        if nesting(&text) > MAX_NESTING {
            return html_text(&text);
        }
        let converter = htmd::HtmlToMarkdown::builder()
            .skip_tags(vec!["script", "style", "noscript", "svg", "head"])
            .build();
        return converter
            .convert(&text)
            .unwrap_or_else(|_| text.into_owned());
    }
    text.into_owned()
}

/// How deep a page's elements may nest before it is read as text.
const MAX_NESTING: usize = 256;

/// Elements that never hold others (no end tag).
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "!doctype",
];

/// The deepest the elements of `html` open inside each other, as its tags
/// say (unclosed ones counted as open: a guess on the deep side).
fn nesting(html: &str) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        if rest.starts_with("!--") {
            rest = rest.find("-->").map_or("", |end| &rest[end + 3..]);
            continue;
        }
        let end = rest.find('>').unwrap_or(rest.len());
        let tag = &rest[..end];
        rest = &rest[end.min(rest.len())..];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '!')
            .collect::<String>()
            .to_ascii_lowercase();
        if name.is_empty() || VOID.contains(&name.as_str()) || tag.ends_with('/') {
            continue;
        }
        if closing {
            depth = depth.saturating_sub(1);
        } else {
            depth += 1;
            deepest = deepest.max(depth);
        }
    }
    deepest
}

/// The text of `html` without its tags, scripts and styles: what a page
/// too deep to convert says.
fn html_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let lower: String = rest
            .chars()
            .take(8)
            .collect::<String>()
            .to_ascii_lowercase();
        let skip_to = ["<script", "<style"]
            .iter()
            .find(|t| lower.starts_with(*t))
            .map(|t| format!("</{}", &t[1..]));
        match skip_to {
            Some(close) => {
                let lower_rest = rest.to_ascii_lowercase();
                rest = lower_rest
                    .find(&close)
                    .and_then(|i| rest.get(i..))
                    .unwrap_or("");
                rest = rest.find('>').map_or("", |i| &rest[i + 1..]);
            }
            None => {
                rest = rest.find('>').map_or("", |i| &rest[i + 1..]);
                out.push(' ');
            }
        }
    }
    out.push_str(rest);
    let text = out
        .replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub struct WebSearch {
    endpoint: Option<String>,
}

impl WebSearch {
    pub fn new(settings: &WebSettings) -> Self {
        Self {
            endpoint: settings.search_endpoint.clone(),
        }
    }

    fn search_url(&self, query: &str) -> Option<Result<reqwest::Url, ToolError>> {
        let endpoint = self.endpoint.as_deref()?.trim_end_matches('/');
        let base = if endpoint.ends_with("/search") {
            endpoint.to_string()
        } else {
            format!("{endpoint}/search")
        };
        Some(parse_url(&base).map(|mut url| {
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("format", "json");
            url
        }))
    }
}

#[async_trait]
impl TypedTool for WebSearch {
    type Args = SearchArgs;

    fn name(&self) -> &'static str {
        "web_search"
    }

    fn description(&self) -> &str {
        "Search the web (the configured SearXNG instance) and return title, url and snippet \
         of each result. Fetch a result with web_fetch."
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Web
    }

    fn effect(&self) -> Effect {
        Effect::Network
    }

    fn operations(
        &self,
        args: &Self::Args,
        _workspace: &Workspace,
    ) -> Result<Vec<Operation>, ToolError> {
        let SearchArgs { query, .. } = args;
        Ok(match self.search_url(query) {
            Some(url) => vec![Operation::Net {
                host: host_of(&url?),
            }],
            // Nothing is sent anywhere.
            None => Vec::new(),
        })
    }

    async fn execute(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let SearchArgs { query, num_results } = args;
        let n = usize::try_from(num_results.unwrap_or(5).clamp(1, 20)).unwrap_or(5);
        let Some(url) = self.search_url(&query) else {
            return Ok(json!({
                "error": "web search not configured",
                "message": "No search API endpoint is configured. Set [tools.web_search] endpoint \
                            (a SearXNG instance with the JSON format enabled) in your config.",
                "query": query,
            }));
        };
        let url = url?;
        let client = http_client(None)?;
        let sent = tokio::select! {
            r = client.get(url.clone()).header("Accept", "application/json").send() => r,
            () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled("interrupted by the user".into())),
        };
        let response = sent.map_err(|e| {
            ToolError::ExecutionFailed(format!("the search failed: {}", error_chain(&e)))
        })?;
        let status = response.status();
        let (bytes, _) = read_capped(response, &ctx.cancel).await?;
        if !status.is_success() {
            return Err(ToolError::ExecutionFailed(format!(
                "the search endpoint answered {status}: {}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
            )));
        }
        let body: Value = serde_json::from_slice(&bytes).map_err(|e| {
            ToolError::ExecutionFailed(format!(
                "the search endpoint did not answer JSON ({e}); enable `json` in SearXNG's \
                 search.formats"
            ))
        })?;
        let results: Vec<Value> = body["results"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .take(n)
            .map(|r| {
                json!({
                    "title": r["title"].as_str().unwrap_or(""),
                    "url": r["url"].as_str().unwrap_or(""),
                    "snippet": r["content"].as_str().unwrap_or(""),
                })
            })
            .collect();
        Ok(json!({"query": query, "results": results}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page nested deeper than any real one (divs, lists, tables) is
    /// read as text, not converted by a recursive walk that would
    /// overflow the stack; ordinary pages still become Markdown.
    #[test]
    fn a_deeply_nested_page_does_not_crash_the_conversion() {
        for (open, close) in [
            ("<div>", "</div>"),
            ("<ul><li>", "</li></ul>"),
            ("<table><tr><td>", "</td></tr></table>"),
            ("<li>", ""),
        ] {
            let page = format!(
                "<html><body>{}deep text{}</body></html>",
                open.repeat(5_000),
                close.repeat(5_000)
            );
            // On a small stack, as a worker thread has.
            let text = std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || render(page.as_bytes(), "text/html", false))
                .unwrap()
                .join()
                .expect("the conversion overflowed its stack");
            assert_eq!(text, "deep text", "{open}");
        }
        let ok = render(
            b"<html><body><h1>Title</h1><p>a <b>b</b></p><script>x()</script></body></html>",
            "text/html",
            false,
        );
        assert!(ok.contains("# Title") && ok.contains("**b**"), "{ok}");
        assert_eq!(
            html_text("<p>a&amp;b</p><script>evil()</script><style>x{}</style>c"),
            "a&b c"
        );
    }

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2002:7f00:1::",
            "::127.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["1.1.1.1", "93.184.216.34", "2606:4700:4700::1111"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn html_becomes_markdown_and_binary_a_line() {
        let html = b"<html><head><title>t</title><script>evil()</script></head>\
                     <body><h1>Title</h1><p>Some <b>bold</b> text.</p></body></html>";
        let md = render(html, "text/html; charset=utf-8", false);
        assert!(md.contains("# Title"), "{md}");
        assert!(md.contains("**bold**"), "{md}");
        assert!(!md.contains("evil"), "{md}");
        assert_eq!(
            render(b"\x89PNG", "image/png", false),
            "[image/png content, 4 bytes, not shown]"
        );
        assert_eq!(
            render(b"caf\xe9", "text/plain; charset=iso-8859-1", false),
            "café"
        );
    }

    #[test]
    fn only_http_urls() {
        assert!(parse_url("file:///etc/passwd").is_err());
        assert!(parse_url("ftp://x/y").is_err());
        assert!(parse_url("https://example.com/a").is_ok());
    }

    /// A private address written in the URL is refused before anyone is
    /// asked; allowed, it is an ordinary network operation.
    #[test]
    fn a_literal_private_address_is_refused_before_approval() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let fetch = WebFetch::new(&WebSettings::default());
        for url in [
            "http://127.0.0.1:8080/x",
            "http://[::1]/",
            "http://169.254.169.254/latest/meta-data",
            "http://10.0.0.1/",
        ] {
            let e = (&fetch as &dyn crate::tools::Tool)
                .operations(&json!({"url": url}), &ws)
                .unwrap_err();
            assert!(matches!(e, ToolError::PermissionDenied(_)), "{url}: {e:?}");
        }
        assert!(
            (&fetch as &dyn crate::tools::Tool)
                .operations(&json!({"url": "https://example.com/"}), &ws)
                .is_ok()
        );
        let open = WebFetch::new(&WebSettings {
            allow_hosts: vec!["127.0.0.1:8080".into()],
            ..WebSettings::default()
        });
        assert!(
            (&open as &dyn crate::tools::Tool)
                .operations(&json!({"url": "http://127.0.0.1:8080/x"}), &ws)
                .is_ok()
        );
    }
}
