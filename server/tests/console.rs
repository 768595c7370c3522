//! The operator console's files over real HTTPS: served from the binary on
//! the operator plane only, each with its type and the page headers (a
//! strict content security policy, never framed, never sniffed, no
//! referrer), `/console` redirected to `/console/`, GET and HEAD only; a path
//! outside the file list, `..` included, is the plane's 404, and the public
//! plane answers `/console/` as any path it does not know. The console in a
//! browser is `web/tests/console.test.mjs`.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use ach_testkit::{Achd, Answer, Conn, Server};
use serde_json::json;

mod common;
use common::START;

/// A file of `server/console/`, as the repository holds it.
fn on_disk(name: &str) -> Vec<u8> {
    std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("console").join(name)).unwrap()
}

async fn get(conn: &mut Conn, method: &str, path: &str) -> Answer {
    conn.send(method, path, None, &[], Vec::new()).await.unwrap()
}

/// The plane's answer to a path it has no endpoint for.
fn assert_unknown(answer: &Answer, method: &str, path: &str) {
    assert_eq!((answer.status, answer.content_type.as_str()), (404, "application/json"), "{path}");
    assert_eq!(
        answer.json(),
        json!({"success": false, "message": "Failed to accept this transaction", "error_code": 10,
            "error_type": "E", "errors": [{"field": "path", "code": "not_found",
            "message": format!("there is no endpoint {method} {path}")}]}),
        "{path}"
    );
}

fn start(dir: &std::path::Path) -> Server {
    Achd::new(env!("CARGO_BIN_EXE_achd")).data(dir).sandbox_start(START).start()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_is_served_on_the_operator_plane_with_its_types_and_headers() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let mut admin = server.connect(server.admin_addr()).await.unwrap();
    for (path, file, content_type) in [
        ("/console/", "index.html", "text/html; charset=utf-8"),
        ("/console/console.js", "console.js", "text/javascript; charset=utf-8"),
        ("/console/console.css", "console.css", "text/css; charset=utf-8"),
        ("/console/favicon.svg", "favicon.svg", "image/svg+xml"),
        ("/console/vendor/uPlot.iife.min.js", "vendor/uPlot.iife.min.js", "text/javascript; charset=utf-8"),
        ("/console/vendor/uPlot.min.css", "vendor/uPlot.min.css", "text/css; charset=utf-8"),
        ("/console/vendor/LICENSE", "vendor/LICENSE", "text/plain; charset=utf-8"),
    ] {
        let a = get(&mut admin, "GET", path).await;
        assert_eq!((a.status, a.content_type.as_str()), (200, content_type), "{path}");
        assert_eq!(a.body, on_disk(file), "{path} is the repository's file");
        let header = |name: &str| a.headers[name].to_str().unwrap().to_owned();
        let csp = header("content-security-policy");
        for directive in [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "connect-src 'self'",
            "object-src 'none'",
            "frame-ancestors 'none'",
        ] {
            assert!(csp.split("; ").any(|d| d == directive), "{path}: {directive} in {csp}");
        }
        assert!(!csp.contains("unsafe"), "no inline script or style: {csp}");
        assert_eq!(header("x-content-type-options"), "nosniff");
        assert_eq!(header("x-frame-options"), "DENY");
        assert_eq!(header("referrer-policy"), "no-referrer");
        assert_eq!(header("strict-transport-security"), "max-age=31536000");
        // HEAD: the same head, no body.
        let head = get(&mut admin, "HEAD", path).await;
        assert_eq!(
            (head.status, head.content_type.as_str(), head.body.len()),
            (200, content_type, 0),
            "{path}"
        );
        assert_eq!(head.headers["content-length"], a.body.len().to_string().as_str());
    }
    let page = String::from_utf8(on_disk("index.html")).unwrap();
    assert!(!page.contains("<script>") && !page.contains("style="), "no inline script or style in the page");

    let redirect = get(&mut admin, "GET", "/console").await;
    assert_eq!((redirect.status, redirect.headers["location"].to_str().unwrap()), (308, "/console/"));

    let refused = admin.send("POST", "/console/", None, &[], b"{}".to_vec()).await.unwrap();
    assert_eq!((refused.status, refused.headers["allow"].to_str().unwrap()), (405, "GET, HEAD"));

    // Requests are counted under the console's route, never a file's name.
    let metrics = get(&mut admin, "GET", "/metrics").await.text();
    let counted = r#"achd_requests_total{plane="operator",route="/console/{}",method="GET",status="200"} 7"#;
    assert!(metrics.lines().any(|l| l == counted), "{counted} in:\n{metrics}");
    assert!(!metrics.contains("console.js") && !metrics.contains("uPlot"), "{metrics}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_listed_files_are_served_and_only_on_the_operator_plane() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let mut admin = server.connect(server.admin_addr()).await.unwrap();
    let key = std::fs::read_to_string(dir.path().join("operator.key")).unwrap();
    for path in [
        "/console/index.html",
        "/console/nope.js",
        "/console/vendor/",
        "/console/vendor/README",
        "/console//console.js",
        "/console/../operator.key",
        "/console/../../etc/passwd",
        "/console/vendor/../console.js",
        "/console/%2e%2e/operator.key",
        "/console/..%2foperator.key",
        "/console/%63onsole.js",
        "/console/console.js/",
        "/consoles/",
    ] {
        let a = get(&mut admin, "GET", path).await;
        assert_unknown(&a, "GET", path);
        assert!(!a.text().contains(key.trim()), "{path}");
    }

    // The public plane has no console: /console/ is a path it does not know.
    let mut public = server.conn().await;
    for path in ["/console/", "/console/console.js", "/console"] {
        let a = get(&mut public, "GET", path).await;
        assert_unknown(&a, "GET", path);
    }
}
