//! The pages at `/`: a small built-in page pointing to `/openapi.json`, or the
//! static files of `--web DIR`. API paths always win: a file is served only where
//! the router has no endpoint. Paths never leave the directory: `.`/`..`, hidden
//! names, encoded slashes and NUL are refused, and the resolved file (after
//! symbolic links) must lie inside it.

use std::path::{Path, PathBuf};

use crate::json_answer::ResponseBody;
use hyper::body::Bytes;
use hyper::header::{
    HeaderValue, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};

/// The built-in page at `/` when no `--web` directory has an `index.html`.
const INDEX: &str = "<!doctype html>
<html lang=\"en\">
<head><meta charset=\"utf-8\"><title>ACH payment service</title></head>
<body>
<h1>ACH payment service</h1>
<p>This is the HTTPS API of the ACH payment service. Its description is
<a href=\"/openapi.json\">/openapi.json</a> (OpenAPI 3).</p>
</body>
</html>
";

/// A directory of static files.
#[derive(Debug)]
pub struct Site {
    root: PathBuf,
}

impl Site {
    /// The directory (it must exist).
    pub fn open(dir: &Path) -> Result<Site, String> {
        let root =
            dir.canonicalize().map_err(|e| format!("cannot use the web directory {}: {e}", dir.display()))?;
        if !root.is_dir() {
            return Err(format!("the web directory {} is not a directory", dir.display()));
        }
        Ok(Site { root })
    }

    /// The file a URL path names, if it is inside the directory.
    async fn file(&self, url_path: &str) -> Option<PathBuf> {
        let mut path = self.root.clone();
        for segment in url_path.split('/').filter(|s| !s.is_empty()) {
            let name = percent_decode(segment)?;
            let bad = name.starts_with('.') || name.contains(['/', '\\', '\0']);
            if bad {
                return None;
            }
            path.push(name);
        }
        let mut found = tokio::fs::canonicalize(&path).await.ok()?;
        if tokio::fs::metadata(&found).await.ok()?.is_dir() {
            found = tokio::fs::canonicalize(found.join("index.html")).await.ok()?;
        }
        let inside = found.starts_with(&self.root);
        (inside && tokio::fs::metadata(&found).await.ok()?.is_file()).then_some(found)
    }
}

/// The page for a GET on a path the API does not serve: a file of the site, the
/// built-in page at `/`, or `None` (the router's 404 stands).
pub async fn page(site: Option<&Site>, url_path: &str) -> Option<hyper::Response<ResponseBody>> {
    if let Some(site) = site {
        if let Some(file) = site.file(url_path).await {
            if let Ok(bytes) = tokio::fs::read(&file).await {
                return Some(response(bytes, content_type(&file)));
            }
        }
    }
    (url_path == "/").then(|| response(INDEX.as_bytes().to_vec(), "text/html; charset=utf-8"))
}

fn response(bytes: Vec<u8>, content_type: &'static str) -> hyper::Response<ResponseBody> {
    file(Bytes::from(bytes), content_type, PAGE_POLICY)
}

/// A file of a page as `content_type`, with the headers every page's file
/// carries: never sniffed as another type, revalidated before reuse, loaded
/// and run only as `policy` allows, never framed, no referrer sent on.
pub fn file(bytes: Bytes, content_type: &'static str, policy: &'static str) -> hyper::Response<ResponseBody> {
    let mut out = hyper::Response::new(ResponseBody::new(bytes));
    let headers = out.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(policy));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    out
}

/// What a page may load and do: its own site's files only (the WebAssembly
/// module compiled from them), no inline script, never framed, no form sent
/// elsewhere.
pub const PAGE_POLICY: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; \
    img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

fn content_type(file: &Path) -> &'static str {
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" | "map" => "application/json",
        "wasm" => "application/wasm",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// `%XX` decoding of one path segment; `None` for a bad escape or non-UTF-8.
fn percent_decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b").as_deref(), Some("a b"));
        assert_eq!(percent_decode("%2e%2E").as_deref(), Some(".."));
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%2"), None);
        assert_eq!(percent_decode("%ff"), None);
    }

    #[tokio::test]
    async fn files_inside_only() {
        let base = std::env::temp_dir().join(format!("achd-web-{}", ach_core::ids::random_alphanumeric(12)));
        let root = base.join("site");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("index.html"), "home").unwrap();
        std::fs::write(root.join("sub/app.js"), "js").unwrap();
        std::fs::write(root.join(".secret"), "hidden").unwrap();
        std::fs::write(base.join("outside.txt"), "no").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(base.join("outside.txt"), root.join("link.txt")).unwrap();
        let site = Site::open(&root).unwrap();
        assert_eq!(site.file("/").await, Some(root.canonicalize().unwrap().join("index.html")));
        assert!(site.file("/sub/app.js").await.is_some());
        assert!(site.file("/sub/").await.is_none(), "no index.html in sub");
        for bad in [
            "/../outside.txt",
            "/%2e%2e/outside.txt",
            "/sub/..%2f..%2foutside.txt",
            "/.secret",
            "/link.txt",
            "/nope",
        ] {
            assert_eq!(site.file(bad).await, None, "{bad}");
        }
        assert!(page(None, "/").await.is_some());
        assert!(page(None, "/x").await.is_none());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
