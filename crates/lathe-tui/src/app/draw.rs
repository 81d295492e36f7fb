//! One frame: the transcript, the queued messages, the composer and the
//! status bar, the views over them, and the questions on top.

use super::*;

impl App {
    /// Too small for the UI: one line says what matters, and a dialog
    /// nobody can read takes only a denial.
    pub(super) fn draw_too_small(&self, frame: &mut Frame<'_>) {
        let area = frame.area();
        // Too small for the UI: one line says what matters, and a
        // dialog nobody can read takes only a denial.
        self.questions.approvals.hide();
        let text = if self.questions.approvals.is_active() {
            "approval needed: enlarge the window (n denies)"
        } else {
            "lathe: enlarge the window"
        };
        let buf = frame.buffer_mut();
        ratatui::widgets::Widget::render(ratatui::widgets::Clear, area, buf);
        buf.set_stringn(
            area.x,
            area.y,
            text,
            usize::from(area.width),
            self.screen.theme.bold(self.screen.theme.colors.warning),
        );
    }

    /// What the status bar says.
    pub(super) fn status_info(&self) -> StatusInfo<'_> {
        let running_ms = self.turn.turn_started.map(|t| {
            u64::try_from(self.screen.now.saturating_duration_since(t).as_millis()).unwrap_or(0)
        });
        StatusInfo {
            model: if self.status.model.is_empty() {
                "no model chosen"
            } else {
                &self.status.model
            },
            workspace: &self.session.workspace,
            approval: self.status.approval,
            running_ms,
            // Tokens of this conversation, and what the session has cost
            // (a `/clear` forgets the one, not the other).
            usage: Usage {
                cost_usd: self.status.spent,
                ..self.status.usage
            },
            flash: self.status.flash.as_ref().map(|(t, _)| t.as_str()),
            waiting: self.questions.is_asking(),
            mcp_failed: self
                .status
                .mcp
                .values()
                .filter(|s| s.state == McpState::Failed)
                .count(),
            mcp_starting: self
                .status
                .mcp
                .values()
                .filter(|s| s.state == McpState::Starting)
                .count(),
            context: self.status.context,
            thinking: self.turn.thinking_since.is_some(),
            background: self.status.jobs.iter().filter(|j| j.running).count(),
            agents: self.status.meter.running_subagents(),
            budget: self.status.nearest_cap(running_ms.is_some()),
        }
    }

    /// Lays out and renders one frame.
    pub fn draw(&mut self, frame: &mut Frame<'_>) {
        self.screen.dirty = false;
        let area = frame.area();
        if area.height < 3 || area.width < 10 {
            return self.draw_too_small(frame);
        }
        // While a question waits, a long draft gives up its rows to it:
        // the composer shows one line (its text is kept whole).
        let most = if self.questions.is_asking() {
            3
        } else {
            u16::MAX
        };
        let composer_h = self
            .composer
            .height(area.width)
            .min(most)
            .min(area.height.saturating_sub(2));
        // Messages sent to the turn or queued after it wait in sight,
        // above the composer, and the model's plan above them.
        let waiting = self.turn.steering.len() + self.turn.queued.len();
        let queued_h = u16::try_from(waiting.min(MAX_QUEUED_SHOWN))
            .unwrap_or(0)
            .min(area.height.saturating_sub(composer_h + 2));
        let plan_h = self.turn.plan.as_ref().map_or(0, |p| {
            p.height(area.height.saturating_sub(composer_h + queued_h + 2))
        });
        let [main, plan_area, queued_area, composer_area, status_area] = Layout::vertical([
            Constraint::Min(1),
            Constraint::Length(plan_h),
            Constraint::Length(queued_h),
            Constraint::Length(composer_h),
            Constraint::Length(1),
        ])
        .areas(area);
        // A call waiting for approval takes the rows it needs at the
        // bottom; the transcript keeps the rest, its newest lines (what the
        // model said about the call) just above the dialog.
        let asked_h = self.questions.bottom_height(main, &self.screen.theme);
        let dialog_h = if asked_h > 0 {
            asked_h
        } else if self.questions.approvals_in_front() {
            self.questions.approvals.height(main, &self.screen.theme)
        } else {
            0
        };
        let [shown, dialog_area] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(dialog_h)]).areas(main);
        // Scrolled up, the transcript gives its last row to the hint that
        // more is below: the hint never covers text.
        let hint_h = u16::from(!self.transcript.is_following() && shown.height > 1);
        let [shown, hint_area] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(hint_h)]).areas(shown);
        self.transcript.prepare(
            shown.width,
            shown.height.max(1),
            &self.screen.theme,
            &self.screen.hl,
        );
        self.screen.transcript_area.set(shown);
        let buf = frame.buffer_mut();
        ratatui::widgets::Widget::render(&self.transcript, shown, buf);
        if hint_h > 0 {
            // In a dialog, End scrolls the call: the transcript's is Ctrl-End.
            let hint = if dialog_h > 0 {
                " ↓ more below (Ctrl-End) "
            } else {
                " ↓ more below (End) "
            };
            let x = hint_area
                .right()
                .saturating_sub(u16::try_from(crate::width::of(hint)).unwrap_or(0) + 1);
            buf.set_string(x, hint_area.y, hint, self.screen.theme.accent());
        }
        if let Some(plan) = &self.turn.plan {
            plan.render(plan_area, buf, &self.screen.theme);
        }
        self.render_queued(queued_area, buf);
        let focused = !self.questions.is_asking() && self.overlays.is_empty();
        self.composer.set_question(self.questions.is_asking());
        self.composer
            .render(composer_area, buf, &self.screen.theme, focused);
        let info = self.status_info();
        status_bar::render(&info, status_area, buf, &self.screen.theme);
        let overlay = Rect::new(area.x, area.y, area.width, area.height.saturating_sub(1));
        for view in &self.overlays {
            match view {
                Overlay::Log(log) => log.render(&self.calls, overlay, buf, &self.screen.theme),
                Overlay::Agents(view) => view.render(
                    &self.status.meter,
                    &self.status.jobs,
                    overlay,
                    buf,
                    &self.screen.theme,
                ),
                other => {
                    if let Some(v) = other.view() {
                        v.render(overlay, buf, &self.screen.theme, self.screen.now);
                    }
                }
            }
        }
        // The priority layer, its top question drawn last: the approvals
        // at the rows set aside for them (or under the trust question).
        if self.questions.approvals.is_active() {
            if dialog_h > 0 && asked_h == 0 {
                Component::render(
                    &self.questions.approvals,
                    dialog_area,
                    buf,
                    &self.screen.theme,
                    self.screen.now,
                );
            } else {
                self.questions
                    .approvals
                    .render(main, buf, &self.screen.theme, self.screen.now);
            }
        }
        // The question with the keys, in the rows set aside for it.
        let asked_area = if asked_h > 0 { dialog_area } else { main };
        self.questions
            .render_asked(asked_area, main, buf, &self.screen.theme, self.screen.now);
        if let Some(help) = &self.screen.help {
            help.render(overlay, buf, &self.screen.theme);
        }
    }

    pub(super) fn render_queued(&self, area: Rect, buf: &mut ratatui::buffer::Buffer) {
        let rows = usize::from(area.height);
        let waiting: Vec<(&str, &String)> = self
            .turn
            .steering
            .iter()
            .map(|t| ("↪ for the model's next step", t))
            .chain(self.turn.queued.iter().map(|t| ("⏳ queued", t)))
            .collect();
        for (i, (what, text)) in waiting.iter().take(rows).enumerate() {
            let more = waiting.len().saturating_sub(rows);
            let line = if i + 1 == rows && more > 0 {
                format!(" … and {} more waiting", more + 1)
            } else {
                let first = text.lines().next().unwrap_or("");
                format!(" {what}: {first}")
            };
            let y = area.y + u16::try_from(i).unwrap_or(0);
            buf.set_stringn(
                area.x,
                y,
                crate::width::truncate(&line, usize::from(area.width)),
                usize::from(area.width),
                self.screen.theme.muted(),
            );
        }
    }
}
