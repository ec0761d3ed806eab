//! Incremental server-sent-events parsing: bytes arrive in arbitrary pieces, events are the
//! blank-line-terminated groups of `data:` lines (RFC 8895 framing as llama-server writes it).

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub(crate) event: Option<String>,
    pub(crate) data: String,
}

/// Feed it bytes as they arrive; it returns the events completed by each piece.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    data: Option<String>,
    event: Option<String>,
}

impl SseParser {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        for &b in bytes {
            if b == b'\n' {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                self.line_done(&line, out);
            } else {
                self.line.push(b);
            }
        }
    }

    /// True when bytes of an unfinished event are buffered (a stream cut mid-event).
    pub(crate) fn has_partial(&self) -> bool {
        !self.line.is_empty() || self.data.is_some()
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                out.push(SseEvent { event: self.event.take(), data });
            }
            self.event = None;
            return;
        }
        if line[0] == b':' {
            return; // a comment: llama-server's keep-alive ping
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.find(':') {
            Some(i) => (&text[..i], text[i + 1..].strip_prefix(' ').unwrap_or(&text[i + 1..])),
            None => (&text[..], ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            "event" => self.event = Some(value.to_string()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_pieces_and_crlf() {
        let stream = b"data: {\"a\":1}\n\n: ping\n\nevent: x\r\ndata: l1\r\ndata: l2\r\n\r\ndata: [DONE]\n\n";
        for cut in 1..stream.len() {
            let mut p = SseParser::new();
            let mut out = vec![];
            p.feed(&stream[..cut], &mut out);
            p.feed(&stream[cut..], &mut out);
            assert_eq!(
                out,
                vec![
                    SseEvent { event: None, data: "{\"a\":1}".into() },
                    SseEvent { event: Some("x".into()), data: "l1\nl2".into() },
                    SseEvent { event: None, data: "[DONE]".into() },
                ]
            );
            assert!(!p.has_partial());
        }
    }

    #[test]
    fn a_cut_event_is_reported_partial() {
        let mut p = SseParser::new();
        let mut out = vec![];
        p.feed(b"data: {\"choices\":[", &mut out);
        assert!(out.is_empty() && p.has_partial());
    }
}
