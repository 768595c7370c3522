//! The operator console: the static files of `server/console/`, compiled into
//! the binary, answered on the operator plane only, at `/console/` (the page)
//! and `/console/<file>`; `/console` is redirected to `/console/`. The files
//! are a fixed list: a path is answered only when it names one of them
//! exactly (no decoding, no directory, so `..` and escapes name nothing), and
//! anything else under `/console` is the plane's 404. The page holds no data:
//! it calls the operator API (`/admin/*`) on the same address with the key
//! the operator types in. GET and HEAD only.

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::HeaderValue;
use hyper::{Method, StatusCode};

use ach_core::api;
use ach_core::engine::Refusal;
use ach_core::validation::ProblemCode;
use ach_core::AchError;

use crate::json_answer::{json, ResponseBody};

/// Where the console is.
pub const PATH: &str = "/console";

/// The console's route as the metrics name it (never the file).
pub const ROUTE: &str = "/console/{}";

/// What the console's page may load and do: its own files and the operator
/// API on the same address only; no inline script or style, no plugin, never
/// framed, no form sent elsewhere.
pub const CONSOLE_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; \
    connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// One file of the console: the path under `/console/` that names it, its
/// bytes and its type.
struct File {
    name: &'static str,
    bytes: &'static [u8],
    content_type: &'static str,
}

/// A file of `server/console/` named `name` there and under `/console/`.
macro_rules! console_file {
    ($name:literal, $content_type:literal) => {
        File {
            name: $name,
            bytes: include_bytes!(concat!("../console/", $name)),
            content_type: $content_type,
        }
    };
}

/// Every file the console answers; the page is the empty name.
const FILES: &[File] = &[
    File {
        name: "",
        bytes: include_bytes!("../console/index.html"),
        content_type: "text/html; charset=utf-8",
    },
    console_file!("console.js", "text/javascript; charset=utf-8"),
    console_file!("console.css", "text/css; charset=utf-8"),
    console_file!("favicon.svg", "image/svg+xml"),
    console_file!("vendor/uPlot.iife.min.js", "text/javascript; charset=utf-8"),
    console_file!("vendor/uPlot.min.css", "text/css; charset=utf-8"),
    console_file!("vendor/LICENSE", "text/plain; charset=utf-8"),
];

/// Whether `path` is the console's: `/console` or below it.
pub fn is_console_path(path: &str) -> bool {
    path.strip_prefix(PATH).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The answer to `method` on `path` (a console path): the file it names,
/// the redirect of `/console`, 405 for a method other than GET and HEAD, or
/// the plane's 404.
pub fn answer(method: &Method, path: &str) -> hyper::Response<ResponseBody> {
    if method != Method::GET && method != Method::HEAD {
        let why = format!("{} is not allowed here; use GET", crate::logging::method(method));
        let mut refused = json(api::finish(Err(Refusal::problem_with_status(
            AchError::FailedToAccept,
            405,
            "method",
            ProblemCode::InvalidValue,
            why,
        ))));
        refused.headers_mut().insert(hyper::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return refused;
    }
    if path == PATH {
        let mut out = hyper::Response::new(Full::new(Bytes::new()));
        *out.status_mut() = StatusCode::PERMANENT_REDIRECT;
        out.headers_mut().insert(hyper::header::LOCATION, HeaderValue::from_static("/console/"));
        return out;
    }
    let name = path.strip_prefix(PATH).and_then(|rest| rest.strip_prefix('/'));
    match FILES.iter().find(|f| Some(f.name) == name) {
        Some(f) => crate::web::file(Bytes::from_static(f.bytes), f.content_type, CONSOLE_POLICY),
        None => json(api::unknown_endpoint(method.as_str(), path)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_console_paths_are_the_consoles() {
        for path in ["/console", "/console/", "/console/console.js", "/console/x/y"] {
            assert!(is_console_path(path), "{path}");
        }
        for path in ["/consoles", "/console.js", "/", "/admin/console", "/Console/"] {
            assert!(!is_console_path(path), "{path}");
        }
    }

    #[test]
    fn a_path_names_a_file_exactly_or_nothing() {
        let status = |path: &str| answer(&Method::GET, path).status().as_u16();
        assert_eq!(status("/console/"), 200);
        assert_eq!(status("/console/vendor/uPlot.iife.min.js"), 200);
        assert_eq!(status("/console"), 308);
        for path in [
            "/console/index.html",
            "/console//console.js",
            "/console/vendor/",
            "/console/../console/console.js",
            "/console/vendor/../console.js",
            "/console/%63onsole.js",
            "/console/console.js/",
        ] {
            assert_eq!(status(path), 404, "{path}");
        }
        assert_eq!(answer(&Method::POST, "/console/").status().as_u16(), 405);
        assert_eq!(answer(&Method::HEAD, "/console/console.css").status().as_u16(), 200);
    }

    #[test]
    fn every_file_is_there_and_the_page_names_each_of_them() {
        let page = std::str::from_utf8(FILES[0].bytes).unwrap();
        for f in &FILES[1..] {
            assert!(!f.bytes.is_empty(), "{}", f.name);
            assert!(page.contains(&format!("\"/console/{}\"", f.name)), "the page loads {}", f.name);
        }
    }
}
