//! Input: terminal events, keys by who has them (the questions, the top
//! view, the global keys, the composer), the mouse, Ctrl-C, and what the
//! composer hands on (a message, a slash command).

use super::*;
use crate::components::approval::{Ahead, READING};

impl App {
    pub fn on_terminal_event(&mut self, ev: Event, now: Instant) {
        self.screen.now = now;
        match ev {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.on_key(key, now),
            Event::Paste(text) => {
                // A paste is never an answer: it restarts the quiet moment
                // of a dialog and goes where text goes.
                self.questions.each(|q| q.input(now));
                self.screen.dirty = true;
                if !self.questions.paste(&text) && self.overlays.is_empty() {
                    self.composer.paste(&text);
                }
            }
            Event::Mouse(m) => self.on_mouse(m),
            Event::Resize(..) => {
                // What the question looks like changed: it is read anew
                // before a key answers it.
                self.questions.each(|q| q.input(now));
                self.screen.dirty = true;
            }
            Event::FocusGained => {
                self.focus(true);
                self.screen.dirty = true;
            }
            Event::FocusLost => self.focus(false),
            _ => {}
        }
    }

    pub(super) fn on_mouse(&mut self, m: MouseEvent) {
        match m.kind {
            MouseEventKind::ScrollUp => self.transcript.scroll_up(MOUSE_LINES),
            MouseEventKind::ScrollDown => self.transcript.scroll_down(MOUSE_LINES),
            // A click on a change's diff opens it whole, on folded reads
            // opens them (or closes either).
            MouseEventKind::Down(crossterm::event::MouseButton::Left) => {
                let area = self.screen.transcript_area.get();
                let inside = m.row >= area.y && m.row < area.bottom() && m.column < area.right();
                let cell = inside
                    .then(|| self.transcript.cell_at(usize::from(m.row - area.y)))
                    .flatten();
                if !cell.is_some_and(|i| self.transcript.toggle_open(i)) {
                    return;
                }
            }
            _ => return,
        }
        self.screen.dirty = true;
    }

    pub fn on_key(&mut self, key: KeyEvent, now: Instant) {
        self.screen.now = now;
        self.screen.dirty = true;
        // A key is the person, here (a terminal without focus events).
        self.person.presence.focused = true;
        self.person.presence.called = false;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return self.on_ctrl_c(now);
        }
        if ctrl && key.code == KeyCode::Char('z') {
            self.bus.request(Request::Suspend);
            return;
        }
        if ctrl && key.code == KeyCode::Char('l') {
            self.bus.request(Request::Repaint);
            return;
        }
        // Ctrl-S: the mouse to the terminal (its own selection) or back.
        if ctrl && key.code == KeyCode::Char('s') {
            self.bus.request(Request::ToggleMouse);
            return;
        }
        // Ctrl-G: the message in the person's editor.
        if ctrl && key.code == KeyCode::Char('g') && !self.questions.is_asking() {
            self.bus.request(Request::Edit(EditRequest {
                purpose: EditPurpose::Composer,
                name: "message.md".into(),
                text: self.composer.text(),
            }));
            return;
        }
        self.person.quit_armed = None;
        // The keys overlay, over everything, takes every key while open.
        if let Some(help) = &mut self.screen.help {
            if help.handle_key(key) {
                self.screen.help = None;
            }
            return;
        }
        if ctrl && key.code == KeyCode::Char('t') && self.questions.is_asking() {
            // Not for the question (and no reason to read it anew).
            self.flash("the log opens once the question is answered", now);
            return;
        }
        // Enter sends what the composer holds to the running turn,
        // whatever question is up: it never answers one, so a correction
        // typed as a dialog opened reaches the model. A question's own
        // text (the model's question, "no, and say what instead") keeps
        // its Enter.
        if key.code == KeyCode::Enter
            && key.modifiers.is_empty()
            && self.is_running()
            && !self.composer.is_empty()
            && !self.questions.is_writing()
        {
            return self.composer_key(key, now);
        }
        // Writing that starts as a question opens is writing: its keys go
        // into the composer, never lost, never answers.
        let composing = !self.composer.is_empty();
        if let Some(question) = self.questions.top() {
            match question.type_ahead(key, composing, now) {
                Ahead::Typed(keys) => {
                    for key in keys {
                        self.composer_key(key, now);
                    }
                    return;
                }
                Ahead::Held => return self.flash(READING, now),
                Ahead::Not => {}
            }
        }
        if let Some(question) = self.questions.top() {
            let outcome = question.handle_key(key, &self.bus.events, now);
            if outcome.closes() {
                self.questions.close_top();
            }
            // What the answer asked of the app first, then the key it did
            // not take falls to the composer and the transcript below.
            self.drain_events();
            if let Some(passed) = outcome.passed() {
                self.composer_key(passed, now);
            }
            return;
        }
        if !self.overlays.is_empty() {
            return self.overlay_key(key);
        }
        if ctrl && key.code == KeyCode::Char('t') {
            return self.open_log();
        }
        if ctrl && key.code == KeyCode::Char('o') {
            if !self.transcript.toggle_thinking() {
                self.flash("no thinking to show yet", now);
            }
            return;
        }
        // While a turn runs: Esc stops its step, Tab queues the message
        // for after it (Enter sends it to the turn).
        if self.is_running() && key.modifiers.is_empty() {
            if key.code == KeyCode::Esc && self.composer.popup().is_empty() {
                return self.interrupt("Esc", now);
            }
            if key.code == KeyCode::Tab && !self.composer.wants_tab() && !self.composer.is_empty() {
                return self.queue(now);
            }
        }
        // `?` on an empty composer: its keys (a `?` in a message is text).
        if key.code == KeyCode::Char('?')
            && !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
            && self.composer.is_empty()
        {
            self.screen.help = Some(crate::components::keys_help::KeysHelp::new(
                crate::components::keys_help::Keys::Composer,
            ));
            return;
        }
        self.composer_key(key, now);
    }

    /// A key for the composer and the transcript under it (also what is
    /// typed while a dialog is not yet armed).
    pub(super) fn composer_key(&mut self, key: KeyEvent, now: Instant) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::PageUp => self.transcript.scroll_up(self.transcript.page()),
            KeyCode::PageDown => self.transcript.scroll_down(self.transcript.page()),
            KeyCode::Home if ctrl || self.composer.is_empty() => self.transcript.scroll_to_top(),
            KeyCode::End if ctrl || self.composer.is_empty() => self.transcript.scroll_to_bottom(),
            // Nothing to send: Enter opens (or closes) the change or the
            // folded reads in view.
            KeyCode::Enter
                if key.modifiers.is_empty()
                    && self.composer.is_empty()
                    && self
                        .transcript
                        .last_openable_in_view()
                        .is_some_and(|i| self.transcript.toggle_open(i)) => {}
            _ => {
                self.composer
                    .set_current(&self.status.model, &self.status.approval.to_string());
                let action = self.composer.handle_key(key);
                // Writing a message is typing; sending it ends the typing
                // (a question that comes next is read, not typed into).
                match action {
                    ComposerAction::None => self.questions.typed(now),
                    _ => self.questions.sent(),
                }
                // The models are asked for once, when `/model` is typed.
                if self.status.models == Models::Unknown
                    && self.composer.text().starts_with("/model")
                {
                    self.status.models = Models::Asked;
                    self.bus.op(Op::ListModels);
                }
                // What was sent is remembered for the next run, but `/quit`.
                let quit = matches!(action, ComposerAction::Command(SlashCommand::Quit));
                if let (Some(text), Some(log)) =
                    (self.composer.take_submitted(), &self.session.prompts)
                    && !quit
                    && let Err(e) = log.append(&text)
                {
                    tracing::warn!(error = %e, "cannot remember the message for Up");
                }
                self.on_composer(action, now);
            }
        }
    }

    pub(super) fn open_log(&mut self) {
        self.open(Overlay::Log(Default::default()));
    }

    pub(super) fn on_ctrl_c(&mut self, now: Instant) {
        if self.is_running() {
            return self.interrupt("Ctrl-C", now);
        }
        if !self.overlays.is_empty() {
            self.overlays.clear();
            return;
        }
        if !self.composer.is_empty() {
            self.composer.clear();
            return;
        }
        if self
            .person
            .quit_armed
            .is_some_and(|t| now.duration_since(t) < QUIT_WINDOW)
        {
            self.person.quit_armed = None;
            return self.quit();
        }
        self.person.quit_armed = Some(now);
        self.flash("press Ctrl-C again to quit", now);
    }

    /// Ctrl-C or Esc while a turn runs: the step running stops (what the
    /// turn did so far stays in the conversation), and what was sent for
    /// it or queued after it comes back to the composer, so stopping a
    /// turn never starts the next one.
    pub(super) fn interrupt(&mut self, key: &str, now: Instant) {
        self.bus.op(Op::Interrupt);
        for id in self.questions.approvals.call_ids() {
            self.calls
                .decided(&id, &format!("{key}: the turn was interrupted"));
        }
        match self.unqueue() {
            0 => self.flash("interrupting…", now),
            1 => self.flash("interrupting… your message is back in the composer", now),
            n => self.flash(
                &format!("interrupting… {n} messages are back in the composer"),
                now,
            ),
        }
    }

    pub(super) fn on_composer(&mut self, action: ComposerAction, now: Instant) {
        match action {
            ComposerAction::None => {}
            ComposerAction::Submit(text) if self.status.model.is_empty() => {
                // Nothing to send it to yet: the text comes back.
                self.composer.set_text(&text);
                self.notice(
                    NoticeKind::Warning,
                    "choose a model first: /model NAME (Tab lists what the server serves)",
                );
            }
            ComposerAction::Submit(text) => {
                if self.is_running() {
                    self.steer(text, now);
                } else {
                    self.send(text);
                }
            }
            ComposerAction::Invalid(why) => self.notice(NoticeKind::Warning, why),
            ComposerAction::Command(cmd) => self.on_command(cmd),
        }
    }
}
