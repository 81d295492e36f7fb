//! A Server-Sent Events parser (the WHATWG event-stream format), fed with
//! byte chunks as they arrive from the network.
//!
//! Lines may end in LF, CR or CRLF, even when a CRLF pair is split across
//! chunks; a line split across chunks is completed, never rescanned, so the
//! cost is linear in the stream size. Comments (`:`) are skipped, `data`
//! lines are joined with newlines, and an event is dispatched at a blank
//! line. At the end of the stream a pending event is dispatched too (some
//! servers omit the last blank line).
//!
//! Events are handed to the caller as they are read, and whole lines are
//! read in place: memory follows the longest line and event, not the size
//! of a chunk (a reader on loopback gets chunks of hundreds of KiB).

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

/// Why a stream was refused: a line or an event past [`MAX_LINE`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseError(pub String);

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Above this, a buffer left mostly empty after a chunk gives its memory
/// back (one huge line must not hold its size for the rest of the stream).
const KEEP: usize = 64 * 1024;

#[derive(Debug, Default)]
pub struct SseParser {
    /// A line begun in an earlier chunk, without its end (before the
    /// stream's first three bytes are seen: those bytes).
    buf: Vec<u8>,
    /// The previous chunk ended in CR; a leading LF belongs to it.
    skip_lf: bool,
    /// Whether the byte-order mark check has happened.
    started: bool,
    /// The event being gathered (its allocations are reused).
    pending: SseEvent,
    has_data: bool,
    /// `pending` was handed out and is cleared before the next line.
    dispatched: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one chunk, handing each event it completes to `each` as soon
    /// as it is read (no list of a chunk's events is built, and whole
    /// lines are read in place, not copied). `each` returns whether the
    /// stream is over; then the rest of the chunk is left unread and
    /// `true` is returned.
    pub fn feed_each<E: From<SseError>>(
        &mut self,
        chunk: &[u8],
        each: &mut impl FnMut(&SseEvent) -> Result<bool, E>,
    ) -> Result<bool, E> {
        let mut chunk = chunk;
        // An empty chunk (a body may yield one) does not end the wait
        // for the `\n` of a `\r\n` cut in two.
        if self.skip_lf && !chunk.is_empty() {
            self.skip_lf = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        if !self.started {
            // A byte-order mark counts only as the stream's first bytes.
            if self.buf.is_empty() && chunk.len() >= BOM.len() {
                self.started = true;
                chunk = chunk.strip_prefix(BOM).unwrap_or(chunk);
            } else {
                self.buf.extend_from_slice(chunk);
                if self.buf.len() < BOM.len() {
                    return Ok(false);
                }
                return self.head(each);
            }
        }
        self.lines(chunk, each)
    }

    /// Ends the stream: a last unterminated line and a pending event are
    /// dispatched.
    pub fn finish_each<E: From<SseError>>(
        &mut self,
        each: &mut impl FnMut(&SseEvent) -> Result<bool, E>,
    ) -> Result<bool, E> {
        if !self.started && self.head(each)? {
            return Ok(true);
        }
        if !self.buf.is_empty() {
            let last = std::mem::take(&mut self.buf);
            if let Some(end) = self.line(&String::from_utf8_lossy(&last))
                && each(end)?
            {
                return Ok(true);
            }
        }
        match self.line("") {
            Some(ev) => each(ev),
            None => Ok(false),
        }
    }

    /// The stream's first bytes, gathered in `buf`: the mark is dropped
    /// and the rest read as any chunk.
    fn head<E: From<SseError>>(
        &mut self,
        each: &mut impl FnMut(&SseEvent) -> Result<bool, E>,
    ) -> Result<bool, E> {
        self.started = true;
        let head = std::mem::take(&mut self.buf);
        self.lines(head.strip_prefix(BOM).unwrap_or(&head), each)
    }

    /// Reads the lines of `chunk`, joining its start to a line begun
    /// earlier, and keeps its unended tail.
    fn lines<E: From<SseError>>(
        &mut self,
        chunk: &[u8],
        each: &mut impl FnMut(&SseEvent) -> Result<bool, E>,
    ) -> Result<bool, E> {
        let mut rest = chunk;
        if !self.buf.is_empty() {
            // A line begun in an earlier chunk ends at this one's first
            // line end; only that much is copied.
            let Some(at) = rest.iter().position(|&b| b == b'\n' || b == b'\r') else {
                self.buf.extend_from_slice(rest);
                return self.bounded();
            };
            let mut joined = std::mem::take(&mut self.buf);
            joined.extend_from_slice(&rest[..=at]);
            rest = &rest[at + 1..];
            let (_, end) = self.scan(&joined, each)?;
            joined.clear();
            self.buf = joined;
            if end {
                return Ok(true);
            }
            if self.skip_lf && !rest.is_empty() {
                self.skip_lf = false;
                if let Some(after) = rest.strip_prefix(b"\n") {
                    rest = after;
                }
            }
        }
        let (used, end) = self.scan(rest, each)?;
        if end {
            return Ok(true);
        }
        self.buf.extend_from_slice(&rest[used..]);
        if self.buf.capacity() > KEEP && self.buf.len() < self.buf.capacity() / 4 {
            self.buf.shrink_to(self.buf.len().max(1024));
        }
        self.bounded()
    }

    /// Dispatches every whole line of `bytes`; returns how many bytes
    /// those lines took, and whether `each` said the stream is over.
    fn scan<E: From<SseError>>(
        &mut self,
        bytes: &[u8],
        each: &mut impl FnMut(&SseEvent) -> Result<bool, E>,
    ) -> Result<(usize, bool), E> {
        let mut start = 0;
        while let Some(off) = bytes[start..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        {
            let at = start + off;
            let ev = self.line(&String::from_utf8_lossy(&bytes[start..at]));
            let end = match ev {
                Some(ev) => each(ev)?,
                None => false,
            };
            start = at + 1;
            if bytes[at] == b'\r' {
                if start == bytes.len() {
                    self.skip_lf = true;
                } else if bytes[start] == b'\n' {
                    start += 1;
                }
            }
            if end {
                return Ok((start, true));
            }
            // (An event handed on is cleared at the next line: its size
            // counts no more.)
            if !self.dispatched && self.pending.data.len() > MAX_LINE {
                return Err(SseError(format!(
                    "an event of the stream passed {} MiB without ending",
                    MAX_LINE >> 20
                ))
                .into());
            }
        }
        Ok((start, false))
    }

    /// Refuses a line that has grown past [`MAX_LINE`] without ending.
    fn bounded<E: From<SseError>>(&self) -> Result<bool, E> {
        if self.buf.len() > MAX_LINE {
            return Err(SseError(format!(
                "a line of the event stream passed {} MiB without ending",
                MAX_LINE >> 20
            ))
            .into());
        }
        Ok(false)
    }

    /// Reads one line; at a blank line that ends an event with data,
    /// returns that event (valid until the next line is read).
    fn line(&mut self, line: &str) -> Option<&SseEvent> {
        if self.dispatched {
            self.dispatched = false;
            self.pending.event.clear();
            self.pending.data.clear();
            if self.pending.data.capacity() > KEEP {
                self.pending.data.shrink_to(1024);
            }
        }
        if line.is_empty() {
            if std::mem::take(&mut self.has_data) {
                if self.pending.data.ends_with('\n') {
                    self.pending.data.pop();
                }
                // Cleared as the next line is read: the caller reads it first.
                self.dispatched = true;
                return Some(&self.pending);
            }
            self.pending.event.clear();
            self.pending.data.clear();
            return None;
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                self.pending.data.push_str(value);
                self.pending.data.push('\n');
                self.has_data = true;
            }
            "event" => {
                self.pending.event.clear();
                self.pending.event.push_str(value);
            }
            // `id` and `retry` matter only to reconnecting browsers.
            _ => {}
        }
        None
    }
}

/// The chunk-at-a-time forms the tests read most easily.
#[cfg(test)]
impl SseParser {
    fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, String> {
        let mut out = Vec::new();
        self.feed_each(chunk, &mut |ev: &SseEvent| {
            out.push(ev.clone());
            Ok::<_, SseError>(false)
        })
        .map_err(|e| e.0)?;
        Ok(out)
    }

    fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let _ = self.finish_each(&mut |ev: &SseEvent| {
            out.push(ev.clone());
            Ok::<_, SseError>(false)
        });
        out
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

    /// Only the stream's first bytes can be a byte-order mark; later it
    /// is part of a line (here a field name no event knows).
    #[test]
    fn a_mark_after_the_start_is_not_dropped() {
        assert_eq!(all(&[b"\n", b"\xEF\xBB\xBFdata: x\n\n"]), vec![]);
        assert_eq!(
            all(&[b"\xEF", b"\xBB", b"\xBFdata: x\n\n"]),
            vec![ev("", "x")]
        );
    }

    /// A large chunk of whole events is read in place, one event at a
    /// time: the parser keeps no copy of it, and stops where told.
    #[test]
    fn a_large_chunk_is_read_in_place_and_stops_when_told() {
        let chunk = "data: {\"delta\":\"abcd\"}\n\n".repeat(20_000);
        let mut p = SseParser::new();
        let mut seen = 0;
        let ended = p
            .feed_each(chunk.as_bytes(), &mut |ev: &SseEvent| {
                assert_eq!(ev.data, "{\"delta\":\"abcd\"}");
                seen += 1;
                Ok::<_, SseError>(seen == 15_000)
            })
            .unwrap();
        assert!(ended);
        assert_eq!(seen, 15_000);
        assert!(p.buf.capacity() < 1024, "kept {} bytes", p.buf.capacity());
        assert!(p.pending.data.capacity() < 1024);
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
