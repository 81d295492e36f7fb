//! A Server-Sent Events parser (the WHATWG event-stream format), fed with
//! byte chunks as they arrive from the network.
//!
//! Lines may end in LF, CR or CRLF, even when a CRLF pair is split across
//! chunks; a line split across chunks is completed, never rescanned, so the
//! cost is linear in the stream size. Comments (`:`) are skipped, `data`
//! lines are joined with newlines, and an event is dispatched at a blank
//! line. At the end of the stream a pending event is dispatched too (some
//! servers omit the last blank line).

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, empty when the server sent none.
    pub event: String,
    pub data: String,
}

/// The longest line, and the most data one event may gather, before the
/// stream is refused: a server that never ends a line or an event cannot
/// grow memory without bound.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    /// Bytes of `buf` already scanned for a line end.
    scanned: usize,
    /// The previous chunk ended in CR; a leading LF belongs to it.
    skip_lf: bool,
    /// Whether the byte-order mark check has happened.
    started: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one chunk; returns the events it completes, or why the stream
    /// is refused (a line or an event past [`MAX_LINE`]).
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, String> {
        let mut chunk = chunk;
        // An empty chunk (a body may yield one) does not end the wait
        // for the `\n` of a `\r\n` cut in two.
        if self.skip_lf && !chunk.is_empty() {
            self.skip_lf = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        self.buf.extend_from_slice(chunk);
        if !self.started && self.buf.len() >= 3 {
            self.started = true;
            if self.buf.starts_with(b"\xEF\xBB\xBF") {
                self.buf.drain(..3);
                self.scanned = 0;
            }
        }
        let mut out = Vec::new();
        let mut line_start = 0;
        let mut i = self.scanned;
        while i < self.buf.len() {
            let b = self.buf[i];
            if b == b'\n' || b == b'\r' {
                let line = String::from_utf8_lossy(&self.buf[line_start..i]).into_owned();
                self.line(&line, &mut out);
                i += 1;
                if b == b'\r' {
                    if i == self.buf.len() {
                        self.skip_lf = true;
                    } else if self.buf[i] == b'\n' {
                        i += 1;
                    }
                }
                line_start = i;
            } else {
                i += 1;
            }
        }
        self.buf.drain(..line_start);
        self.scanned = self.buf.len();
        if self.buf.len() > MAX_LINE {
            return Err(format!(
                "a line of the event stream passed {} MiB without ending",
                MAX_LINE >> 20
            ));
        }
        if self.data.len() > MAX_LINE {
            return Err(format!(
                "an event of the stream passed {} MiB without ending",
                MAX_LINE >> 20
            ));
        }
        Ok(out)
    }

    /// Ends the stream: a last unterminated line and a pending event are
    /// dispatched.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let mut out = Vec::new();
        if !self.buf.is_empty() {
            let line = String::from_utf8_lossy(&self.buf).into_owned();
            self.buf.clear();
            self.scanned = 0;
            self.line(&line, &mut out);
        }
        self.line("", &mut out);
        out.pop()
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if self.has_data {
                if self.data.ends_with('\n') {
                    self.data.pop();
                }
                out.push(SseEvent {
                    event: std::mem::take(&mut self.event),
                    data: std::mem::take(&mut self.data),
                });
            }
            self.event.clear();
            self.data.clear();
            self.has_data = false;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => {
                self.event.clear();
                self.event.push_str(value);
            }
            // `id` and `retry` matter only to reconnecting browsers.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out: Vec<SseEvent> = chunks.iter().flat_map(|c| p.feed(c).unwrap()).collect();
        out.extend(p.finish());
        out
    }

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn parses_events_data_and_comments() {
        let got = all(&[b": keep-alive\n\nevent: ping\ndata: {}\n\ndata: a\ndata: b\n\n"]);
        assert_eq!(got, vec![ev("ping", "{}"), ev("", "a\nb")]);
    }

    #[test]
    fn handles_any_chunking_and_line_endings() {
        let text = b"data: hello\r\n\r\ndata:world\r\rdata: x\n\n";
        let expected = vec![ev("", "hello"), ev("", "world"), ev("", "x")];
        for split in 0..text.len() {
            let (a, b) = text.split_at(split);
            assert_eq!(all(&[a, b]), expected, "split at {split}");
        }
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(all(&bytes), expected);
    }

    /// A `\r\n` cut in two with an empty chunk between is one line end,
    /// not two (which would end the event early).
    #[test]
    fn an_empty_chunk_inside_a_cut_crlf_is_nothing() {
        let mut p = SseParser::new();
        let mut out = p.feed(b"event: a\r").unwrap();
        out.extend(p.feed(b"").unwrap());
        out.extend(p.feed(b"\ndata: x\r\n\r\n").unwrap());
        assert_eq!(
            out,
            vec![SseEvent {
                event: "a".into(),
                data: "x".into()
            }]
        );
    }

    #[test]
    fn multibyte_characters_split_across_chunks_survive() {
        let text = "data: héllo 😀\n\n".as_bytes();
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(all(&bytes), vec![ev("", "héllo 😀")]);
    }

    #[test]
    fn a_pending_event_is_dispatched_at_the_end() {
        assert_eq!(all(&[b"data: [DONE]"]), vec![ev("", "[DONE]")]);
        assert_eq!(all(&[b"data: [DONE]\n"]), vec![ev("", "[DONE]")]);
    }

    #[test]
    fn a_leading_bom_is_ignored() {
        assert_eq!(all(&[b"\xEF\xBB\xBFdata: x\n\n"]), vec![ev("", "x")]);
    }

    #[test]
    fn a_long_line_in_many_chunks_is_not_rescanned() {
        let mut p = SseParser::new();
        p.feed(b"data: ").unwrap();
        for _ in 0..10_000 {
            assert!(p.feed(b"xxxxxxxxxx").unwrap().is_empty());
        }
        let out = p.feed(b"\n\n").unwrap();
        assert_eq!(out[0].data.len(), 100_000);
    }

    /// A line that never ends, or data lines with no blank line between
    /// them: refused at 16 MiB, not grown without bound.
    #[test]
    fn endless_lines_and_events_are_refused() {
        let mb = vec![b'x'; 1 << 20];
        let mut p = SseParser::new();
        p.feed(b"data: ").unwrap();
        let mut refused = None;
        for _ in 0..20 {
            if let Err(e) = p.feed(&mb) {
                refused = Some(e);
                break;
            }
        }
        assert!(refused.is_some_and(|e| e.contains("without ending")));
        let mut p = SseParser::new();
        let mut line = b"data: ".to_vec();
        line.extend_from_slice(&mb);
        line.push(b'\n');
        let refused = (0..20).find_map(|_| p.feed(&line).err());
        assert!(refused.is_some_and(|e| e.contains("event")));
    }

    mod properties {
        use proptest::prelude::*;

        use super::*;

        /// Streams as servers send them: events with fields, comments,
        /// blank lines, any line ending, any bytes (multibyte, invalid
        /// UTF-8, a byte-order mark).
        fn stream() -> impl Strategy<Value = Vec<u8>> {
            let line = prop_oneof![
                "data: [ -~é😀]{0,30}".prop_map(String::into_bytes),
                "event: [a-z_.]{0,12}".prop_map(String::into_bytes),
                ": [ -~]{0,10}".prop_map(String::into_bytes),
                Just(Vec::new()),
                proptest::collection::vec(any::<u8>(), 0..20),
            ];
            let end = prop_oneof![Just(&b"\n"[..]), Just(&b"\r\n"[..]), Just(&b"\r"[..])];
            (any::<bool>(), proptest::collection::vec((line, end), 0..30)).prop_map(
                |(bom, lines)| {
                    let mut out = if bom {
                        b"\xEF\xBB\xBF".to_vec()
                    } else {
                        Vec::new()
                    };
                    for (l, e) in lines {
                        out.extend_from_slice(&l);
                        out.extend_from_slice(e);
                    }
                    out
                },
            )
        }

        fn parse(chunks: &[&[u8]]) -> Vec<SseEvent> {
            let mut p = SseParser::new();
            let mut out: Vec<SseEvent> = chunks.iter().flat_map(|c| p.feed(c).unwrap()).collect();
            out.extend(p.finish());
            out
        }

        proptest! {
            #![proptest_config(crate::props::config(256))]

            /// However the network cuts a stream into chunks, the same
            /// events come out; nothing panics.
            #[test]
            fn any_chunking_gives_the_same_events(
                bytes in stream(),
                cuts in proptest::collection::vec(any::<proptest::sample::Index>(), 0..8),
            ) {
                let whole = parse(&[&bytes]);
                let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
                at.sort_unstable();
                let mut chunks: Vec<&[u8]> = Vec::new();
                let mut from = 0;
                for to in at {
                    chunks.push(&bytes[from..to]);
                    from = to;
                }
                chunks.push(&bytes[from..]);
                prop_assert_eq!(parse(&chunks), whole.clone());
                let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
                prop_assert_eq!(parse(&bytewise), whole);
            }
        }
    }
}
