//! The browser check's HTTP server: std::net only, on 127.0.0.1 at a port the system picks free.
//!
//! It serves files read-only from a few mounted folders (the committed page `web/` at `/`, the
//! generated kernels and plans at `/gen/`), and takes the page's results as `POST /results/NAME`
//! with a JSON body, which it writes to the results folder and hands to the waiting command through
//! a channel. A browser needs nothing more: one request per connection (`Connection: close`), no
//! keep-alive, no chunked bodies. The page and the command are the only clients; a request for a
//! path outside the mounts (or with `..` in it) is answered 404.

use super::Event;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::Duration;

/// The largest body the page may post (the kernel table of every variant is a few hundred KiB).
const MAX_BODY: usize = 64 << 20;

/// One result the page posted: its name (`/results/NAME`) and its JSON text, already written to
/// `results/NAME.json`.
pub struct Posted {
    /// The name in the request path, e.g. `report`.
    pub name: String,
    /// The parsed body.
    pub json: serde_json::Value,
}

/// A server running on its own thread.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub origin: String,
}

/// Binds a free port on 127.0.0.1 and serves `mounts` (URL prefix, folder) until the command ends;
/// posted results go to `results_dir` and to `posted`.
pub fn start(mounts: Vec<(String, PathBuf)>, results_dir: PathBuf, posted: Sender<Event>) -> Result<Server, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("binding a port on 127.0.0.1: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mounts = mounts.clone();
            let results_dir = results_dir.clone();
            let posted = posted.clone();
            std::thread::spawn(move || {
                if let Err(e) = handle(stream, &mounts, &results_dir, &posted) {
                    eprintln!("web server: {e}");
                }
            });
        }
    });
    Ok(Server { origin: format!("http://127.0.0.1:{port}") })
}

fn handle(
    stream: TcpStream,
    mounts: &[(String, PathBuf)],
    results_dir: &Path,
    posted: &Sender<Event>,
) -> Result<(), String> {
    stream.set_read_timeout(Some(Duration::from_secs(30))).map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream.try_clone().map_err(|e| e.to_string())?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).map_err(|e| format!("reading a request: {e}"))?;
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).map_err(|e| format!("reading headers: {e}"))?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().map_err(|_| format!("bad Content-Length {value:?}"))?;
        }
    }
    let path = target.split(['?', '#']).next().unwrap_or("");
    let mut out = stream;
    match method {
        "GET" | "HEAD" => match resolve(mounts, path) {
            Some(file) => match std::fs::read(&file) {
                Ok(body) => respond(&mut out, "200 OK", content_type(&file), &body, method == "HEAD"),
                Err(_) => respond(&mut out, "404 Not Found", "text/plain", b"not found\n", false),
            },
            None => respond(&mut out, "404 Not Found", "text/plain", b"not found\n", false),
        },
        "POST" => {
            let name = path.strip_prefix("/results/").filter(|n| valid_name(n));
            let Some(name) = name else {
                return respond(&mut out, "404 Not Found", "text/plain", b"post to /results/NAME\n", false);
            };
            if length > MAX_BODY {
                return respond(&mut out, "413 Payload Too Large", "text/plain", b"too large\n", false);
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).map_err(|e| format!("reading the body of POST {path}: {e}"))?;
            let json: serde_json::Value = match serde_json::from_slice(&body) {
                Ok(json) => json,
                Err(e) => {
                    let message = format!("the body of POST {path} is not JSON: {e}\n");
                    return respond(&mut out, "400 Bad Request", "text/plain", message.as_bytes(), false);
                }
            };
            let file = results_dir.join(format!("{name}.json"));
            let pretty = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
            std::fs::write(&file, pretty).map_err(|e| format!("writing {}: {e}", file.display()))?;
            respond(&mut out, "200 OK", "text/plain", b"ok\n", false)?;
            // The receiver is gone only once the command has finished waiting.
            let _ = posted.send(Event::Posted(Posted { name: name.to_string(), json }));
            Ok(())
        }
        _ => respond(&mut out, "405 Method Not Allowed", "text/plain", b"GET, HEAD or POST\n", false),
    }
}

/// A result name: letters, digits, `-` and `_`, so that it is a plain file name.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 100 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The file a GET path names under the longest matching mount, never above it.
fn resolve(mounts: &[(String, PathBuf)], path: &str) -> Option<PathBuf> {
    let (prefix, dir) =
        mounts.iter().filter(|(prefix, _)| path.starts_with(prefix.as_str())).max_by_key(|(p, _)| p.len())?;
    let rest = &path[prefix.len()..];
    let rest = if rest.is_empty() || rest.ends_with('/') { format!("{rest}index.html") } else { rest.to_string() };
    let mut file = dir.clone();
    for part in rest.split('/').filter(|p| !p.is_empty()) {
        if part == ".." || part == "." || part.contains('\\') || part.contains('%') {
            return None;
        }
        file.push(part);
    }
    file.is_file().then_some(file)
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("json") => "application/json",
        Some("css") => "text/css",
        Some("wgsl") | Some("txt") | Some("md") => "text/plain; charset=utf-8",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

fn respond(out: &mut TcpStream, status: &str, content_type: &str, body: &[u8], head: bool) -> Result<(), String> {
    let header = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    out.write_all(header.as_bytes()).map_err(|e| e.to_string())?;
    if !head {
        out.write_all(body).map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_their_mount() {
        let dir = std::env::temp_dir().join(format!("xtask-web-server-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("gen")).unwrap();
        std::fs::write(dir.join("index.html"), "page").unwrap();
        std::fs::write(dir.join("gen/a.wgsl"), "kernel").unwrap();
        let mounts = vec![("/".to_string(), dir.clone()), ("/gen/".to_string(), dir.join("gen"))];
        assert_eq!(resolve(&mounts, "/"), Some(dir.join("index.html")));
        assert_eq!(resolve(&mounts, "/gen/a.wgsl"), Some(dir.join("gen/a.wgsl")));
        assert_eq!(resolve(&mounts, "/gen/../index.html"), None);
        assert_eq!(resolve(&mounts, "/missing.js"), None);
        assert!(valid_name("report") && !valid_name("../x") && !valid_name(""));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
