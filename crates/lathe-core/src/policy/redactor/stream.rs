//! Text redacted as it streams: a model's answer or reasoning, delta by
//! delta, never shown (or printed with `--json`) before what could still
//! turn out to be a secret is complete.
//!
//! What comes is kept until it can be judged: the last word (a key has
//! no blank in it, and a credential's shape may still be growing), the
//! words before it that could be pieces of a spaced or dumped form (short
//! ones, numbers, hex, escapes), and an unterminated private-key block.
//! What is before that is redacted once, in the context of what follows
//! it (a match running over the cut keeps its start back), and shown:
//! prose flows a word behind the model. Each
//! release looks at the window that can still complete a secret, never
//! at the whole message again; deltas that come together are released
//! together, so a fast stream costs about one pass over its text.

use std::time::{Duration, Instant};

use super::{Redactor, char_start};

/// Deltas closer together than this come in a burst: they are released
/// in batches (the screen cannot show each anyway). A slower stream shows
/// every delta as soon as it can be judged.
const BURST: Duration = Duration::from_millis(8);

/// In a burst, what waits is released once this much can be.
const BATCH: usize = 512;

/// The most that waits: past it, what waits longest is judged as it is
/// (a match running over the cut still keeps its start back), so a stream
/// of numbers or one endless word neither waits for ever nor is looked
/// at again and again.
const MAX_WAIT: usize = 8 * 1024;

/// How far before the cut a match that runs over it is looked for,
/// beyond the secrets' own forms (a secret-named assignment's name).
const CONTEXT: usize = 256;

/// Where a private key's block starts: nothing after it is shown until
/// the block ends.
const PEM: &str = "-----BEGIN ";

/// Where the run of words at the end of `text` that could be (part of)
/// a secret's form begins: the last word always (it may still grow: a
/// key has no blank), and before it every word that is short (a spaced
/// or dumped key: `s k - l i v e`, `163 153 055`), holds a digit, or is
/// made of hex digits and escapes (`736b2d6c`, `\x73`, `&#115;`, `%73`).
/// Words of prose stop it, and are shown.
fn suspect_tail(text: &str) -> usize {
    let mut end = text.len();
    let mut first = true;
    loop {
        let body = text[..end].trim_end();
        let start = body
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8());
        let word = &body[start..];
        let last = std::mem::replace(&mut first, false);
        // The last word waits even when the text ends in a blank: the
        // next delta may go on with a form.
        if !(last || suspect(word)) || word.is_empty() {
            return end;
        }
        if start == 0 {
            return 0;
        }
        end = start;
    }
}

/// Whether a word could be a piece of a secret's form.
fn suspect(word: &str) -> bool {
    let w = word.trim_matches(|c: char| {
        matches!(
            c,
            '.' | ',' | ';' | ':' | '!' | '?' | '"' | '\'' | '(' | ')'
        )
    });
    w.chars().count() <= 2
        || w.chars().any(|c| c.is_ascii_digit())
        || w.chars().all(|c| c.is_ascii_hexdigit())
        || w.chars()
            .any(|c| matches!(c, '\\' | '&' | '#' | '%' | '=' | '+' | '/' | '_' | '-'))
}

/// One stream of text (a model's answer, or its reasoning) on its way
/// to the screen.
#[derive(Debug, Default)]
pub struct Stream {
    pending: String,
    last: Option<Instant>,
    /// How much waited when it was last looked at (in a burst, it is
    /// looked at again only a batch later).
    looked: usize,
    /// Everything shown so far, and a digest of the text it was made
    /// from: the whole message, redacted, without a second pass.
    shown: String,
    taken: Digest,
    /// Something was shown before it could be judged whole (what waited
    /// passed [`MAX_WAIT`]): the whole message must be redacted again.
    forced: bool,
}

/// FNV-1a over the bytes of a text, with its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Digest(u64, usize);

impl Default for Digest {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325, 0)
    }
}

impl Digest {
    fn add(&mut self, text: &str) {
        for b in text.bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.1 += text.len();
    }
}

impl Stream {
    /// `delta` came at `now`: what can be shown of the stream so far,
    /// redacted, if anything.
    pub fn push(&mut self, redactor: &Redactor, delta: &str, now: Instant) -> Option<String> {
        self.pending.push_str(delta);
        let burst = self
            .last
            .is_some_and(|t| now.saturating_duration_since(t) < BURST);
        self.last = Some(now);
        if burst && self.pending.len() < self.looked + BATCH {
            return None;
        }
        self.looked = self.pending.len();
        let cut = self.judged();
        if cut == 0 || (burst && cut < BATCH) {
            return None;
        }
        self.release(redactor, cut)
    }

    /// No delta came since the last one, and it is `now`: once the
    /// stream has paused, what can be judged is shown (a burst's last
    /// deltas do not wait for a delta that is slow to come).
    pub fn tick(&mut self, redactor: &Redactor, now: Instant) -> Option<String> {
        let paused = self
            .last
            .is_some_and(|t| now.saturating_duration_since(t) >= BURST);
        if !paused || self.pending.is_empty() {
            return None;
        }
        let cut = self.judged();
        (cut > 0).then(|| self.release(redactor, cut)).flatten()
    }

    /// The stream ended: the rest, redacted.
    pub fn finish(&mut self, redactor: &Redactor) -> Option<String> {
        let len = self.pending.len();
        self.last = None;
        (len > 0).then(|| self.release(redactor, len)).flatten()
    }

    /// The stream is being sent again (a retry): what waits is dropped,
    /// as the screen drops what it showed.
    pub fn discard(&mut self) {
        *self = Self::default();
    }

    /// `text` whole as it was shown, once the stream has finished, if
    /// the stream was exactly `text` (the provider's message is the
    /// deltas it streamed): each part was redacted in the context of
    /// what followed it, so the whole needs no second pass.
    pub fn shown_whole(&self, text: &str) -> Option<&str> {
        if self.forced || !self.pending.is_empty() || self.taken.1 != text.len() {
            return None;
        }
        let mut digest = Digest::default();
        digest.add(text);
        (digest == self.taken).then_some(self.shown.as_str())
    }

    /// How much of what waits can be judged now: all but the words at
    /// its end that could still be part of a secret's form; and whether
    /// the most that may wait ([`MAX_WAIT`]) decided it (then what goes
    /// out was not judged whole).
    fn cut(&self) -> (usize, bool) {
        let text = &self.pending;
        let mut cut = suspect_tail(text);
        // A private key's block, from its start to the end of its END
        // line (`-----END … KEY-----`): cut before that, the block would
        // go out in two parts, neither of them a whole block.
        if let Some(begin) = text.rfind(PEM) {
            let block = &text[begin..];
            let ended = block.find("-----END ").is_some_and(|at| {
                let label = &block[at + "-----END ".len()..];
                label
                    .find("-----")
                    .is_some_and(|close| !label[..close].contains('\n'))
            });
            if !ended {
                cut = cut.min(begin);
            }
        }
        let floor = text.len().saturating_sub(MAX_WAIT);
        (char_start(text, cut.max(floor)), floor > cut)
    }

    /// [`Stream::cut`], remembering when the bound decided it.
    fn judged(&mut self) -> usize {
        let (cut, forced) = self.cut();
        self.forced |= forced;
        cut
    }

    /// Shows the first `cut` bytes of what waits, redacted; a match that
    /// runs over the cut keeps its start (and what follows) back.
    fn release(&mut self, redactor: &Redactor, cut: usize) -> Option<String> {
        let mut cut = cut;
        if cut < self.pending.len() {
            let from = char_start(
                &self.pending,
                cut.saturating_sub(redactor.hold().max(CONTEXT)),
            );
            if let Some(start) = redactor.split_at(&self.pending[from..], cut - from) {
                cut = from + start;
            }
        }
        if cut == 0 {
            return None;
        }
        let shown: String = self.pending.drain(..cut).collect();
        self.looked = self.looked.saturating_sub(cut);
        self.taken.add(&shown);
        let shown = redactor.redact_str(&shown).unwrap_or(shown);
        self.shown.push_str(&shown);
        Some(shown)
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
