//! Plain HTTP/1.1 over a loopback socket, one request per connection: enough to ask the model
//! server directly and for the proxy to read what the agent sends.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// An answer: status, header block and body (chunked transfer decoded).
#[derive(Debug, Clone)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// The header lines, lower-cased names, as sent.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// The body as JSON (`Value::Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_default()
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends one request (`Connection: close`, a JSON body when given) and reads the whole answer.
pub fn request(
    address: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&serde_json::Value>,
) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(5))?;
    stream.set_read_timeout(Some(Duration::from_secs(300)))?;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut reader = BufReader::new(stream);
    let (status, headers) = read_head(&mut reader)?;
    let mut raw = Vec::new();
    reader.read_to_end(&mut raw)?;
    let body = if is_chunked(&headers) {
        dechunk(&raw)
    } else {
        raw
    };
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// Reads a status or request line and the header lines up to the blank line: the status (0
/// for a request line) and the headers, names lower-cased.
pub(crate) fn read_head(
    reader: &mut impl BufRead,
) -> std::io::Result<(u16, Vec<(String, String)>)> {
    let mut first = String::new();
    if reader.read_line(&mut first)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the connection closed before a status line",
        ));
    }
    let status = first
        .split(' ')
        .nth(1)
        .and_then(|code| code.trim().parse().ok())
        .unwrap_or(0);
    Ok((status, read_headers(reader)?))
}

/// Reads header lines up to the blank line, names lower-cased.
pub(crate) fn read_headers(reader: &mut impl BufRead) -> std::io::Result<Vec<(String, String)>> {
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    Ok(headers)
}

/// A header's value.
pub(crate) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Whether the body is sent in chunks.
pub(crate) fn is_chunked(headers: &[(String, String)]) -> bool {
    header(headers, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
}

/// The data of a chunked body (as much as arrived, when it was cut).
pub(crate) fn dechunk(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = raw;
    while let Some(end) = rest.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&rest[..end])
            .ok()
            .and_then(|line| usize::from_str_radix(line.split(';').next()?.trim(), 16).ok());
        let Some(size) = size.filter(|&s| s > 0) else {
            break;
        };
        let data = &rest[end + 2..];
        let take = size.min(data.len());
        out.extend_from_slice(&data[..take]);
        rest = data.get(take + 2..).unwrap_or_default();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunked_body_is_joined_and_a_cut_one_kept_as_far_as_it_came() {
        assert_eq!(
            dechunk(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
            b"hello world"
        );
        assert_eq!(dechunk(b"5;x=1\r\nhello\r\nA\r\n wor"), b"hello wor");
        assert_eq!(dechunk(b""), b"");
    }

    #[test]
    fn the_head_gives_the_status_and_lower_cased_headers() {
        let mut text: &[u8] =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\nbody";
        let (status, headers) = read_head(&mut text).unwrap();
        assert_eq!(status, 200);
        assert_eq!(header(&headers, "content-type"), Some("text/event-stream"));
        assert!(is_chunked(&headers));
        assert_eq!(text, b"body");
    }
}
