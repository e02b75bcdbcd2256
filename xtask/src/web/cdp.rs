//! A minimal client of Chromium's DevTools protocol over `--remote-debugging-pipe`: JSON messages,
//! each ended by a NUL byte, written to the browser's fd 3 and read from its fd 4. Enough to open
//! the page, hear its console and uncaught exceptions (written to a log and forwarded as events, so
//! that a failing page is seen at once, not only after a timeout) and take a screenshot of an
//! element. No websocket, no npm: serde_json is the only dependency.

use super::Event;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

/// How long a protocol command may take (a full-page screenshot of SwiftShader's rendering is the
/// slowest, well under a second).
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// The connection: commands go out, their replies come back through a reader thread.
pub struct Cdp {
    to_browser: ChildStdin,
    next_id: u64,
    replies: Receiver<Value>,
}

impl Cdp {
    /// Starts the reader thread: replies to [`Cdp::call`], console lines and exceptions to `events`
    /// (and to `log`), [`Event::BrowserGone`] when the pipe closes.
    pub fn new(
        to_browser: ChildStdin,
        from_browser: ChildStdout,
        events: Sender<Event>,
        mut log: std::fs::File,
    ) -> Cdp {
        let (reply_tx, replies) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(from_browser);
            loop {
                let mut message = Vec::new();
                match reader.read_until(0, &mut message) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                message.pop_if(|b| *b == 0);
                let Ok(value) = serde_json::from_slice::<Value>(&message) else { continue };
                if value.get("id").is_some() {
                    let _ = reply_tx.send(value);
                    continue;
                }
                let event = match value["method"].as_str() {
                    Some("Runtime.consoleAPICalled") => {
                        let params = &value["params"];
                        let args: Vec<String> =
                            params["args"].as_array().map(|a| a.iter().map(remote_text).collect()).unwrap_or_default();
                        Event::Console(format!("{}: {}", params["type"].as_str().unwrap_or("log"), args.join(" ")))
                    }
                    Some("Runtime.exceptionThrown") => {
                        let details = &value["params"]["exceptionDetails"];
                        let text = details["exception"]["description"]
                            .as_str()
                            .or(details["text"].as_str())
                            .unwrap_or("an exception")
                            .to_string();
                        Event::PageError(format!("uncaught exception: {text}"))
                    }
                    Some("Inspector.targetCrashed") => Event::PageError("the page's renderer crashed".into()),
                    _ => continue,
                };
                if let Event::Console(line) | Event::PageError(line) = &event {
                    let _ = writeln!(log, "{line}");
                }
                if events.send(event).is_err() {
                    break;
                }
            }
            let _ = events.send(Event::BrowserGone);
        });
        Cdp { to_browser, next_id: 1, replies }
    }

    /// Sends `method` (to the page's `session` when given) and waits for its result.
    pub fn call(&mut self, method: &str, params: Value, session: Option<&str>) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = serde_json::to_vec(&message).map_err(|e| e.to_string())?;
        bytes.push(0);
        self.to_browser
            .write_all(&bytes)
            .and_then(|()| self.to_browser.flush())
            .map_err(|e| format!("Chromium's DevTools pipe is closed ({method}: {e})"))?;
        let deadline = Instant::now() + REPLY_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.replies.recv_timeout(left) {
                Ok(reply) if reply["id"].as_u64() == Some(id) => {
                    if let Some(error) = reply.get("error") {
                        return Err(format!("DevTools {method} failed: {error}"));
                    }
                    return Ok(reply["result"].clone());
                }
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("Chromium did not answer DevTools {method} within {REPLY_TIMEOUT:?}"));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!("Chromium closed its DevTools pipe before answering {method}"));
                }
            }
        }
    }
}

/// A console argument as text: its value when it has one, else its description.
fn remote_text(arg: &Value) -> String {
    match &arg["value"] {
        Value::String(s) => s.clone(),
        Value::Null => arg["description"].as_str().unwrap_or("?").to_string(),
        other => other.to_string(),
    }
}

/// Decodes standard base64 (the protocol's encoding of a screenshot).
pub fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace() && *c != b'=') {
        let v = value(c).ok_or_else(|| format!("not base64: byte {c:#x}"))?;
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::base64_decode;

    #[test]
    fn base64_round_numbers() {
        assert_eq!(base64_decode("").unwrap(), b"");
        assert_eq!(base64_decode("Zg==").unwrap(), b"f");
        assert_eq!(base64_decode("Zm8=").unwrap(), b"fo");
        assert_eq!(base64_decode("Zm9v").unwrap(), b"foo");
        assert_eq!(base64_decode("iVBORw0KGgo=").unwrap(), b"\x89PNG\r\n\x1a\n");
        assert!(base64_decode("Zm9v!").is_err());
    }
}
